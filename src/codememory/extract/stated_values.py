"""The user's rules read from the concrete values they state, not from how they are phrased.

A user who specifies how the thing must behave often writes no "always", "never" or "must": "times as mm:ss.hh",
"name collision -> append _2, _3, ...", "dry run by default, --apply to really rename", "rename jpgs to
YYYY-MM-DD_HHMMSS_<camera>.jpg from EXIF DateTimeOriginal". Earlier rules listed the phrasings such rules come in;
every new writer found another one. What these share is structural: a concrete value a later session cannot guess
(a format, a flag, a number with its unit, a file, a version), in a sentence that asks for a behaviour in general
(a default, a mapping, "X as Y", an instruction about every item) rather than for one piece of work ("add
`linkshort open CODE`") or reports how things went.

Only the user's sentences, and only those no phrasing rule took (`extract.rules`).

Measured and left out (benchmarks/README.md, session 10): the same values in a statement of how things are ("node
on server is v12.22", "about 3100 in dry air, 1300 in water") read as facts raised fact recall on most released
sets, but with each set left out in turn the precision they cost outweighed it; the assistant's sentences with
values that a tool's output showed were mostly its own work, its plan or a lesson's explanation again."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

_UNIT = (
    r"(?:ms|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|mm|cm|m|km|in|inch(?:es)?|"
    r"kb|mb|gb|tb|kib|mib|gib|%|°c|°f|c|ml|l|ml/s|w|kw|kwh|v|mv|ma|hz|khz|mhz|mbit|gbit|px|pt|dpi|eur|€|usd|\$|raw|"
    r"bit|bits|bytes?|rpm|req|requests?|rows?|pcs|pieces?|files?|users?|items?|entries|records?|"
    r"per\s+(?:second|minute|hour|day|week|month|year|page|host|site|user))"
)
# Each alternative is one kind of concrete value.
_VALUE_RE = lazy_pattern(
    r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?![\w.])"  # a version or a decimal: 22.04, v12.22, 1.22
    r"|(?<![\w:.])\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?![\w:])"  # a time of day: 20:00, 07:58:09.877
    rf"|(?<![\w.])\d+(?:[.,]\d+)?\s?{_UNIT}(?![\w])"  # a quantity with its unit: 150 ms, 4.4 mm, 2 EUR
    r"|(?<![\w.])\d{3,}(?![\w])"  # a large number: a reading, a port, a count of the data (26100, 5433)
    r"|(?<![\w.-])(?:~|/)[\w.-]+/[\w./-]+"  # an absolute path: /opt/soilpi/app
    r"|(?<![\w./-])[\w-]+(?:/[\w.-]+)*\.(?:csv|tsv|json|ya?ml|toml|ini|cfg|conf|txt|md|log|db|sqlite3?|py|js|ts|rb|"
    r"go|rs|sh|exe|jar|xml|html?|parquet|xlsx?|ods|pdf|env)\b"  # a file: data/sizes.csv, dist/snapsort.exe
    r"|\b(?:\d{1,3}\.){3}\d{1,3}\b"  # an address: 192.168.1.20
    r"|\b[A-Z]{2,4}(?:[-_.:][A-Z]{2,4}){1,3}\b"  # a format: YYYY-MM-DD, HHMMSS
    r"|\b(?:yyyy|mm|dd|hh|ss)(?:[-_.:](?:yyyy|mm|dd|hh|ss)){1,3}\b"  # the same in lower case: mm:ss.hh
    r"|(?<![\w-])--[a-z][\w-]+"  # a flag: --apply
    r"|\b[A-Z][A-Z0-9_]{2,}=\S+"  # a setting: GOOS=windows
    r"|`[^`\s][^`]{0,60}`",  # a code-marked token
)
# What marks a sentence as something other than a rule: a question, trouble, a request for one piece of help, a
# hedge, a report of what happened or of how things stand at the moment
_QUESTION_RE = lazy_pattern(
    r"\?\s*$|^(?:can|could|would|will|should|do|does|did|is|are|was|were|how|what|why|which|where|when|who)\b",
    re.IGNORECASE,
)
_TROUBLE_RE = lazy_pattern(
    r"\b(?:fail\w*|error\w*|crash\w*|broke\w*|bug\w*|wrong|weird|strange|slow\w*|forever|hangs?|hung|stuck|timeouts?|"
    r"timed\s+out|garbage|garbled|mess(?:ed)?|missing|lost|problems?|issues?|complain\w*|(?:does|do|did|is|are|was|"
    r"were|can|could|wo|would)n'?t|not\s+(?:work\w*|load\w*|show\w*|open\w*)|instead\s+of|should\s+(?:be|have))\b",
    re.IGNORECASE,
)
_REQUEST_RE = lazy_pattern(
    r"\b(?:can|could|would)\s+you\b|\bi\s+(?:want|need|would\s+like|'d\s+like)\b|\b(?:let'?s|help|maybe|perhaps|"
    r"probably|might|guess|think|wonder|suppose|if|unless|whether)\b",
    re.IGNORECASE,
)
_REPORT_RE = lazy_pattern(
    r"^(?:i|we)(?:'ll|\s+will|'ve|\s+have|'m|\s+am|'d)\b|^(?:i|we)\s+\w+ed\b|^(?:ran|got|tried|moved|changed|did|made)\b"
    r"|\b(?:right\s+)?now\b(?!\s+on\b)|\bso\s+far\b"
    r"|\b(?:yesterday|last\s+(?:night|week|month|year|time)|ago|today|tonight|this\s+morning)\b"
    r"|\b(?:is|are|'s)\s+(?:fine|ok(?:ay)?|good|great|perfect)\b",  # approving what was proposed
    re.IGNORECASE,
)
# Work put off ("put on the list: a :MarklistClear command", "later: a --date option") is a todo, not a rule
_DEFERRED_RE = lazy_pattern(
    r"\bon\s+(?:the|my|your|our)\s+(?:list|todo(?:\s+list)?)\b|\btodo\b|\blater\b|\bat\s+some\s+point\b|"
    r"\bnext\s+time\b|\beventually\b|\bsome\s*day\b",
    re.IGNORECASE,
)
# A behaviour asked for in general: a default, a mapping, "X as Y"
_GENERAL_RULE_RE = lazy_pattern(
    r"\bby\s+default\b|\s(?:->|=>|\u2192)\s|^(?:(?:and|also|but)\s+)?[\w\s]{2,30}\s+as\s+\S",
    re.IGNORECASE,
)
# A sentence opening on a verb is an instruction: a rule when it is about every item ("rename jpgs to …", "put all
# parts longer than 2800 on a separate list"), else one piece of work ("add `linkshort open CODE`"). Only verbs that
# say how the thing built treats its items: an operation on the project as it is now is done once however many items
# it takes ("copy all the files to /tmp/backup", "delete all rows older than 30 days", "run all the tests with
# --maxfail=1", "check every file in src/ …"), and carried into later sessions as the user's rule it would be done
# again. Left out so: add, take, make, fix, start, drop, remove, create, build, write, check, run, move, send, copy,
# delete, import, read, give, list, try, go, let, help, look, tell, explain, update, upgrade, install, deploy (none of
# the 13 released extraction sets has a sentence this rule read with one of them).
_INSTRUCTION_RE = lazy_pattern(
    r"^(?:(?:and|also|so|ok(?:ay)?|then|later|pls|please)[:,]?\s+)*(?:change|parse|put|use|rename|name|show|print|log|"
    r"export|append|prefix|format|sort|round|store|save|keep|mark|convert|alert|warn|skip|ignore|count|set|replace|"
    r"split|merge|group|filter|clamp|limit|cap|retry)\b",
    re.IGNORECASE,
)
_IN_GENERAL_RE = lazy_pattern(
    r"\b(?:every|each|all|any|whenever|always|never)\b|\b(?:jpgs|pngs|files|photos|images|rows|lines|times|dates|"
    r"names|values|numbers|amounts|prices|parts|items|entries|records|requests|messages)\b",
    re.IGNORECASE,
)
# "While you're in there, take the colours out": an instruction after a clause that sets it up
_LEAD_CLAUSE_RE = lazy_pattern(r"^(?:while|when|once|since|as|after|before)\b[^,]{0,60},\s*", re.IGNORECASE)
MIN_WORDS = 3
MAX_WORDS = 45


def values(sentence: str) -> list[str]:
    """The concrete values a sentence states, as written."""
    return [m.group(0).strip("`") for m in _VALUE_RE.finditer(sentence)]


def states_a_valued_rule(sentence: str) -> bool:
    """A user's sentence asking, with a concrete value, for a behaviour in general (see the module docstring)."""
    s = sentence.strip()
    if not MIN_WORDS <= len(s.split()) <= MAX_WORDS or not values(s):
        return False
    if (
        _QUESTION_RE.search(s)
        or _TROUBLE_RE.search(s)
        or _REQUEST_RE.search(s)
        or _REPORT_RE.search(s)
        or _DEFERRED_RE.search(s)
    ):
        return False
    if _GENERAL_RULE_RE.search(s):
        return True
    return bool(_INSTRUCTION_RE.match(_LEAD_CLAUSE_RE.sub("", s)) and _IN_GENERAL_RE.search(s))
