"""The code names a request gives: the files, paths and identifiers it is about, as opposed to what it asks of them.

"Which chi version is in go.mod?", "How much heap does gradle.properties give the Gradle daemon?", "Add #[must_use]
to hash::normalize_path", "In TodayViewModel.kt, rename the parameter `m` of onTaken to `medication`": the request
names a thing in the project and asks something small of it (a value to read, a line to change). A memory that
shares nothing with such a request but the name (one that says which Go version go.mod pins, or how
hash::normalize_path builds cache keys) is about the thing, not about what is asked of it: the file itself answers
the question, and the edit needs no memory. A memory that speaks to the request shares the request's other words
too ("how do I run the tests that need Postgres?" and a memory saying integration tests need `make test-db`).

A name here is what only code has: a path (`internal/api/doc.go`, `fastlane/`), a file name with an extension
(`README.md`, `go.mod`), a qualified name (`money.RoundHalfUp`, `hash::normalize_path`), an identifier written the
way code writes one (`normalize_path`, `onTaken`, `SCHEDULE_EXACT_ALARM`), a one-token `code span` and an XML tag
(`<uses-permission>`). Not a name: a capitalised word (`GeoJSON`, `WorkManager`: a library or a concept a memory
speaks about as such), a `code span` holding a command (`brisk run --help`: what a memory prescribes), quoted
prose ('token not yet valid' is an error message a memory may explain), a version or a number (`3.5.0`).

A request that asks about the named thing as a whole is another matter: "why does app/db.py lock up?", "parse_config
crashes", "anything I should know before editing app/db.py?" ask what is wrong with it or what to watch for, which
is exactly what a memory about the thing (a gotcha) says, whatever other words it uses. Such a request gives no
names to hold memories back on (`held_names`). Those cues are read in English only: a request with no English
function word ("¿qué pasa con calcular_total?", "Warum hängt app/db.py?") may ask just that, so it holds nothing
back either.
"""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.asks import states_a_fault
from codememory.text.query import STOPWORDS, words

_SPAN_RE = lazy_pattern(r"`([^`\s]{1,200})`")
_TAG_RE = lazy_pattern(r"<([A-Za-z][\w:.-]{0,100})>")
_TOKEN_RE = lazy_pattern(r"[^\s`'\"(),;!?<>\[\]{}]+")
# a path (two parts or more joined by slashes, or a folder written with its trailing slash)
_PATH_RE = lazy_pattern(r"^(?:\.{0,2}/)?[\w@.-]+(?:/[\w@.*-]+)+/?$|^[\w@.-]+/$")
# a file name: a word, a dot, an extension starting with a letter (not `e.g`, `i.e`, a version or a sentence end)
_FILE_RE = lazy_pattern(r"^[\w@-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}$")
_QUALIFIED_RE = lazy_pattern(r"^[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+$")
_SNAKE_RE = lazy_pattern(r"^[A-Za-z]\w*_\w+$")
_LOWER_CAMEL_RE = lazy_pattern(r"^[a-z]+[A-Z]\w*$")
_NOT_FILES = frozenset({"e.g", "i.e", "etc.", "vs."})
# written like an identifier or a file, but a product a memory speaks about as such: one lower-case letter before a
# capitalised word (iOS, iPhone, eBay; an identifier such as `xPos` goes too: it only shows a memory more), an
# operating system (macOS, watchOS), a framework named with its extension (Node.js, Vue.js, ASP.NET)
_PRODUCT_RE = lazy_pattern(r"^(?:[a-z](?:[A-Z][a-z]*)+|[a-z]+OS|[A-Z]\w*\.(?:js|NET))$")
# longer than any name: a pasted blob (a log line, a rule of underscores) is no name, and the patterns above need
# not look at it (the identifier one backtracks over a long run of underscores)
_MAX_NAME = 200
# asks what is wrong with the named thing or what to watch for when working on it (besides a word of failure)
_ABOUT_THE_THING_RE = lazy_pattern(
    r"^\W*why\b|\b(?:know|careful|watch\s+out|beware|gotchas?|pitfalls?|caveats?|problems?|issues?|trouble|bugs?"
    r"|throws?|threw|quirks?|surprises?|dangerous|safe|risky?)\b",
    re.IGNORECASE,
)


def named_words(request: str) -> frozenset[str]:
    """The words (as the keyword index reads them) of the code names the request gives; empty when it names none."""
    names = [*_SPAN_RE.findall(request), *_TAG_RE.findall(request)]
    for token in _TOKEN_RE.findall(request):
        token = token.rstrip(".:")  # the end of the sentence, not of the name
        if len(token) > _MAX_NAME or token.lower() in _NOT_FILES or not any(c.isalpha() for c in token):
            continue
        if _PRODUCT_RE.match(token):
            continue
        if any(r.match(token) for r in (_PATH_RE, _FILE_RE, _QUALIFIED_RE, _SNAKE_RE, _LOWER_CAMEL_RE)):
            names.append(token)
    return frozenset(w for name in names for w in words(name))


def named_files(request: str) -> list[str]:
    """The files and paths the request names (`go.mod`, `dbt/dbt_project.yml`, `fastlane/`), in order."""
    out: list[str] = []
    for token in _TOKEN_RE.findall(request):
        token = token.rstrip(".:")
        if len(token) > _MAX_NAME or token.lower() in _NOT_FILES or not any(c.isalpha() for c in token):
            continue
        if not _PRODUCT_RE.match(token) and (_PATH_RE.match(token) or _FILE_RE.match(token)):
            out.append(token)
    return out


def held_names(request: str) -> frozenset[str]:
    """The words of the names a memory must share more than with the request (named_words), none when the request
    asks what is wrong with the named thing or what to watch for: then being about the thing is being about it."""
    if states_a_fault(request) or _ABOUT_THE_THING_RE.search(request):
        return frozenset()
    if not any(w in STOPWORDS for w in words(request)):
        return frozenset()  # another language (or a bare list of names): what it asks of them is not read here
    return named_words(request)


def only_names(matched: list[str], named: frozenset[str]) -> bool:
    """The words a memory shares with the request are all words of the names it gives (and there are some)."""
    return bool(matched) and set(matched) <= named
