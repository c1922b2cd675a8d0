"""The user's standing rules that are not phrased always/never: a rule heading ("House rules: …"), something
settled ("is not up for discussion"), what nobody may do, what has to stay as it is, a ban list ("no colours, no
emoji"), a bound ("max 1 req per 5s"), what the pipeline enforces ("ci runs clippy -D warnings"), the way a thing
must be with the alternative it is not ("bands by frequency, 160m first, not alphabetical"), the way a thing is done
with the practice it follows ("…, that's how everyone writes it"), and what the user wants of the thing itself as a
terse list with a bound in it ("sfx only, no music"). Only the user's sentences are read this way
(`extract.rules`): the assistant narrating its own work says the same words about a step."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

# Standing rules not phrased always/never (the user's only).
SETTLED_RE = lazy_pattern(
    r"\b(?:is|are|'s|stays?)\s+(?:not\s+up\s+for\s+(?:discussion|debate|negotiation)|non-?negotiable|not\s+negotiable|"
    r"set\s+in\s+stone|a\s+hard\s+(?:requirement|constraint|limit))\b",
    re.IGNORECASE,
)
RULE_HEADING_RE = lazy_pattern(r"\brules?\b[^:.?]{0,30}:\s*\S|\brules?\s+apply\b", re.IGNORECASE)
DEONTIC_RE = lazy_pattern(
    r"\b(?:nothing|nobody|no\s+one|no-one)\b[^.;:!?]{0,40}?\b(?:should|may|must|can)\s+ever\b"
    r"|\b(?:nobody|no\s+one|no-one)\s+(?:ever\s+)?(?:runs?|pushes|commits|deploys|merges|edits|touches|applies|calls|"
    r"imports|writes|uses|should|may|must|gets\s+to|is\s+allowed)\b"
    r"|(?<!\bi\s)(?<!\byou\s)(?<!\bwe\s)(?:must|has\s+to|have\s+to|needs?\s+to|should)\s+(?:always\s+)?(?:stay|remain)\b"
    r"|\b(?:i|we)\s+need\s+(?:the\s+|our\s+|all\s+|every\s+)?[\w\s-]{2,40}?\s+to\s+(?:stay|remain|keep)\b"
    # a rule that follows from a fact: "all our customers are in the EU, so the data stays in Frankfurt"
    r"|,\s*so\s+(?:the\s+|all\s+|our\s+|every\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:stays?|remains?|lives?)\s+"
    r"(?:in|on|inside|within|under|behind)\b"
    r"|\b(?:must|have\s+to|has\s+to|needs?\s+to)\s+(?:pass|succeed|be\s+green|run)\s+before\b"
    # terse rules with the subject left out: "Must be RE-2024-0001, no gaps!", "only for main branch please",
    # "keep it shellcheck clean", "max 1 req per 5s per host"
    r"|^(?:but\s+|and\s+)?(?:must|has\s+to|needs?\s+to|should\s+always|always)\s+(?:be|stay|have|use|run|go)\b"
    r"(?!\s+(?:the|a|an|it|that|this|something|because|due|from|why|my|our|wrong|broken|fine)\b)"
    r"|^(?:but\s+|and\s+)?only\s+(?:for|on|in|with|from|when|via|through|the)\b[^.?]*\bplease\b"
    r"|\bkeep\s+(?:it|this|them|the\s+[\w-]+)\s+(?:[\w-]+\s+)?(?:clean|green|passing|lint-?free|warning-?free)\b"
    r"|\b(?:max(?:imum)?|at\s+most|no\s+more\s+than)\s+(?:\w+\s+)?\d+\s*(?:reqs?|requests?|calls?|hits?|jobs?|runs?|"
    r"connections?|retries|tries)\s*(?:/|per|a|an|every|each)\b"
    r"|\b(?:one|1)\s+(?:req|request|call)\s+(?:every|per|a)\b"
    # a ban list: "no colours, no emoji", "no capital letters and no full stop at the end"
    r"|\bno\s+(?!(?:worries|rush|problem|problems|idea|way|luck|doubt|kidding|joke|pressure|stress)\b)[\w-]+(?:\s+[\w-]+)?"
    r"\s*(?:,\s*|\s+and\s+|\s+or\s+)(?:no|nor)\s+(?!(?:worries|rush|problem|problems|idea|way|luck|pressure)\b)[\w-]+"
    # a request with the way it must (not) be done: "please write it with a decimal point, not a comma"
    r"|\bplease\b[^.?]*\b(?:with|as|in|using)\b[^.?]*,\s*(?:not|never)\s+(?:a|an|the)?\s*\w+"
    # an instruction for every time something happens: "bump the chart version whenever you touch a chart"
    r"|^(?:and\s+|also\s+|please\s+)*(?!(?:i|we|you|it|the|a|an|this|that|they|he|she|there|when|if|my|our|haha|lol)\b)"
    r"(?!(?:crash|fail|break|broke|hang|hung|freez|error|dies|die|stop|show)\w*\b)"
    r"[a-z]+\s(?:(?!\b(?:crash|fail|break|broke|hang|hung|freez|error|dies|die|stop|show)\w*)[^.?])*?"
    r"\b(?:whenever|(?:every|each)\s+time\s+(?:you|we|someone|anyone|somebody))\b",
    re.IGNORECASE,
)
# What the pipeline enforces: "ci runs clippy -D warnings", "CI checks formatting with ruff --check".
CI_ENFORCES_RE = lazy_pattern(
    r"(?:^|[\u2014\u2013;:]\s*|\s-\s)(?:and\s+|also\s+)?(?:our\s+|the\s+)?(?:ci|pipeline|pre-commit(?:\s+hook)?|github\s+actions|"
    r"the\s+build)\s+"
    r"(?:always\s+)?(?:runs?|enforces?|checks?|requires?)\s+`?[\w.-]+`?(?:\s+[\w.=`-]+){0,4}?\s+`?(?:--?[A-Za-z][\w=-]*)"
    r"|(?:^|[\u2014\u2013;:]\s*|\s-\s)(?:and\s+|also\s+)?(?:our\s+|the\s+)?(?:ci|pipeline|pre-commit)\s+(?:always\s+)?"
    r"(?:runs?|enforces?|checks?)\s+"
    r"(?:\w+\s+)?(?:lint(?:ing|s)?|format(?:ting)?|type[- ]?check(?:ing|s)?|clippy|mypy|ruff|eslint|prettier|black|"
    r"shellcheck|gofmt|rustfmt)\b",
    re.IGNORECASE,
)
# The way a thing must be, with the alternative it is not: "bands sorted by frequency, 160m first, not alphabetical",
# "splits as m:ss.t please, not seconds", "pinned to a full commit SHA, not a tag". Not a deferral ("next week, not
# now", "not for today"), a hedge ("not quite", "not sure"), a person ("for Ole, not you") or an aside in brackets.
NOT_THE_OTHER_RE = lazy_pattern(
    # a choice between named options ("We decided: sqlite3, not SQLAlchemy") is a decision, read as one elsewhere
    r"^(?!.*\b(?:decid\w*|chose|chosen|choose|pick(?:ed)?|go(?:ing)?\s+with|rather\s+than|instead)\b)(?!.*[()])(?=(?:\S+\s+){3,})[^?]*,\s*not\s+(?!(?:now|yet|today|tonight|tomorrow|quite|really|sure|me|you|him|"
    r"her|us|them|mine|yours|that|this|it|so|too|much|just|only|even|bad|great|ideal|anymore|again|exactly|"
    r"necessarily|likely|worth|urgent|important|a\s+big|the\s+end|at\s+all|for|in|this|until|till|before|during)\b)"
    r"\w[^?]*$",
    re.IGNORECASE,
)

# The way a thing is done, with the practice it follows: "cm first and the inches in brackets, that's how everyone
# writes it", "date as dd.mm.yyyy, that's how the cards are printed". A story is no practice ("that's how we found
# the bug", "that's what killed it"): the practice is said in the present.
FOLLOWS_PRACTICE_RE = lazy_pattern(
    r"^(?!.*[()])(?=(?:\S+\s+){2,}\S+\s*,)[^?]*,\s*(?:that'?s|that\s+is|this\s+is)\s+how\s+"
    r"(?!(?:i|we|you|it|they|he|she)\s+(?:\w+ed|found|got|knew|saw|made|lost|broke|ran|went|came|did|had|heard|"
    r"left|took)\b)[\w' -]+?\s+(?!\w+ed\b)\w+(?:\s+\w+)?\W*$",
    re.IGNORECASE,
)
# The format a file must have, said tersely: "csv, semicolon, utf-8 bom", "semicolons + decimal comma, its on german
# locale", "their import takes semicolons and dates like 03.04.2024". Two traits of a data format in a short sentence
# that reports no trouble ("the csv opens in excel with garbage umlauts" is a problem, not a wish) and tells no
# story ("I exported the csv last night").
_FORMAT_TRAIT_RE = lazy_pattern(
    r"\b(?:csv|tsv|json|xml|ya?ml|semicolons?|tabs?|utf-?8|bom|latin-?1|windows-1252|cp1252|crlf|"
    r"decimal\s+(?:comma|point)|dd\.mm\.yyyy|yyyy-mm-dd|iso\s?8601|24h|24-hour|locale|excel|(?:comma|tab)[- ]separated|"
    r"byte\s+order\s+mark|dates?\s+like\s+\d)\b",
    re.IGNORECASE,
)
_TROUBLE_RE = lazy_pattern(
    r"\b(?:fail\w*|error\w*|crash\w*|broke\w*|garbage|weird|wrong|mess(?:ed)?|garbled|mojibake|"
    r"(?:does|do|did|is|are|was|were|can|could|wo)n'?t|not\s+working|instead\s+of|turned\s+into|came\s+out)\b",
    re.IGNORECASE,
)
_STORY_RE = lazy_pattern(
    r"^\W*(?:i|we|he|she|they)\s+(?:\w+ed|sent|got|made|found|ran|did|had|took|went|saw)\b"
    r"|\b(?:yesterday|last\s+(?:night|week|month|year|time)|ago)\b",
    re.IGNORECASE,
)
MAX_FORMAT_WORDS = 18


def names_a_format(s: str) -> bool:
    """A data format said tersely (see above): two of its traits, no trouble reported, no question."""
    if s.rstrip().endswith("?") or len(s.split()) > MAX_FORMAT_WORDS or _TROUBLE_RE.search(s) or _STORY_RE.search(s):
        return False
    return len(
        {m.group().lower().rstrip("s") for m in _FORMAT_TRAIT_RE.finditer(s)}
    ) >= 2 and not TERSE_REPORT_RE.search(s)


# What the user wants of the thing itself, said as a terse list with a bound in it (the user's only): "sfx only, no
# music", "sheets: a4 landscape, 24h, no colour — printer is b/w laser", "so please no colours and none of those
# line characters". Small talk is no bound ("no worries", "no rush", "coffee only").
_NOT_A_BOUND = r"(?!(?:worries|rush|problem|problems|idea|way|luck|doubt|kidding|joke|pressure|stress|clue|need|one)\b)"
_ITEM = r"[\w/.+-]+(?:\s+[\w/.+-]+){0,2}"
# a label that names where a line came from, not what the user wants: "error: python only, no rust" is a pasted line
_NOT_A_SOURCE = (
    r"(?!(?:error|warning|warn|info|debug|fatal|notice|hint|log|output|stdout|stderr|exception|readme|docs?|faq|page)"
    r"\s*:)"
)
# One item of the list, up to the comma after it. "only a" reads as `only {_ITEM}` and as `{_ITEM}` alike: tried once
# (an atomic group; the item ends where its comma is, whichever reading matched), or a list of n such items is 2^n
# tries before a line without the bound fails.
_LIST_ITEM = rf"(?>(?:{_ITEM}\s+only|only\s+{_ITEM}|no\s+{_NOT_A_BOUND}{_ITEM}|{_ITEM})(?=\s*,))"
TERSE_BOUNDS_RE = lazy_pattern(
    rf"^(?!(?:ok|okay|k|yes|yeah|yep|sure|thanks|thank|great|cool|fine|good|nice|perfect|right|well|hi|hey)\b)"
    rf"(?:and\s+|but\s+|also\s+)?(?:{_NOT_A_SOURCE}[\w-]+(?:\s+[\w-]+)?:\s*)?"
    rf"{_LIST_ITEM}"
    rf"(?:\s*,\s*{_LIST_ITEM})*"
    rf"\s*,\s*(?:no\s+{_NOT_A_BOUND}[\w/.+-]+|{_ITEM}\s+only)\b"
    rf"|^(?:and\s+|but\s+)?{_ITEM}\s+only\s*,\s*no\s+{_NOT_A_BOUND}[\w-]+"
    rf"|\bplease\s+no\s+{_NOT_A_BOUND}[\w-]+(?:\s+[\w-]+)?\s*(?:,|\s+and\s+(?:no|none)\b|\s+or\s+)",
    re.IGNORECASE,
)
# A terse list can also say what happened rather than what is wanted: "checked the logs, no errors", "deployed to
# staging, no issues so far", "ran it again, no difference". A report starts with what was done (a verb in the past
# with what it was done to) or ends on how things stand so far; it bounds nothing.
TERSE_REPORT_RE = lazy_pattern(
    r"^(?:and\s+|but\s+|also\s+|so\s+)?(?:(?:re)?(?:ran|tried|got|saw|did|went|made|found|gave|took)\s"
    r"|\w+ed\s+(?:it|them|this|that|the|a|an|my|our|again|locally|everything|all|both|twice)\b)"
    r"|\bno\s+[\w-]+(?:\s+[\w-]+)?\s+(?:so\s+far|yet|anymore|any\s+more|this\s+time)\b",
    re.IGNORECASE,
)


def terse_bounds(s: str) -> bool:
    """What the user wants of the thing itself as a terse list with a bound in it, not a report of what was done."""
    return bool(TERSE_BOUNDS_RE.search(s)) and not TERSE_REPORT_RE.search(s)
