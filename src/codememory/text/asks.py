"""The kind of memory a question asks for, read from its form: "why not X?" asks for a decision or a rejected
alternative, "why ...?" for a decision, a rejected alternative or a gotcha, "how do I ...?" for a convention, a fact
(a command) or a gotcha, and a statement of a symptom with no question word ("photos taken on iPhones never get a
thumbnail": four content words or more and a word of failure, "never", "not", "fails", "wrong", "duplicated") for
a gotcha; a string of keywords ("redis cache eviction policy config") asks for no kind in particular.

On the four precision splits (benchmarks/data/precision: dev, judge, judge2, judge3), 23 of the 25 answers to
"why not" questions are decisions or rejected alternatives (16% of the stores' memories), 17 of 18 answers to "why"
questions are decisions, rejected alternatives or gotchas, 34 of 35 answers to "how do I" conventions, facts or gotchas,
and 65 of 71 answers to symptom statements (a word of failure among four content words or more) gotchas (23% of
the memories). Other forms ("what", "which", "where") ask for too many kinds to say; a statement with no word of
failure may be a symptom too ("a warden fined a car that had paid"), but a keyword string of the same length
("redis cache eviction policy config") is no question about a fault. English question forms only: any other
query asks for nothing in particular.
"""

from __future__ import annotations

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import DEFAULT_CATEGORY
from codememory.text.query import STOPWORDS, words

# "why can't / doesn't / won't ..." asks about a limit, which a gotcha states as often as a decision: plain "why".
_WHY_NOT_RE = lazy_pattern(
    r"^why\s+(?:not|no|(?:do|did)\s+we\s+not"
    r"|(?:do|did|are|is|was|were|should|have|has)n'?t)\b"
)
_WHY_RE = lazy_pattern(r"^why\b")
_HOW_DO_RE = lazy_pattern(r"^(?:how\s+(?:do|can|should|would|could|shall)\s+(?:i|we|you|one)|how\s+to)\b")
# A query opening with one of these asks a question (or names something), so it is no statement of a symptom.
_QUESTION_START_RE = lazy_pattern(
    r"^(?:what|which|where|when|who|whom|whose|why|how|is|are|was|were|do|does|did|can|could|should|would|will|shall"
    r"|may|might|has|have|had|any|list|show|find)\b"
)
SYMPTOM_WORDS = 4  # content words a statement needs to describe a symptom rather than name a thing to look up
# A symptom says what goes wrong; without such a word a statement of four words is a keyword lookup ("redis cache
# eviction policy config"), however long.
# (Words naming a setting as often as a fault, "timeout", "limit", "null", are left out.)
_FAILURE_RE = lazy_pattern(
    r"\b(?:never|not|no|nothing|doesn'?t|don'?t|won'?t|can'?t|cannot|isn'?t|aren'?t|didn'?t|fails?|failed|failing"
    r"|\w*errors?|\w*exceptions?|nan|unexpected|broken|breaks?|wrong|keeps?|slow|lags?|ignores?|locked"
    r"|too\s+(?:many|much|high|low|slow|long|big|large|small)|missing|duplicated?|twice|stuck|instead|still|again|already|silently|unable"
    r"|crash(?:es|ed)?|hangs?|hung|freez(?:es|ing)|froze|died|dies|stops?|stopped|los(?:es?|ing|t)|cut\s+off"
    r"|disappear(?:s|ed)?|vanish(?:es|ed)?|undefined|corrupt(?:s|ed)?|garbled|truncated|ignored|skipped|off\s+by"
    r"|an\s+hour\s+off|leak(?:s|ing)|refuses?|rejects?|rejected|denied|mismatch(?:es|ed)?|overwritten)\b"
)

WHY_NOT = frozenset({"decision", "rejected_alternative"})
WHY = frozenset({"decision", "rejected_alternative", "gotcha"})
HOW_DO = frozenset({"convention", "fact", "gotcha"})
SYMPTOM = frozenset({"gotcha"})


def asked_categories(query: str) -> frozenset[str] | None:
    """The memory categories the query's form asks for (core/model.py CATEGORIES); None: no particular kind."""
    text = " ".join(query.lower().replace("\u2019", "'").split()).lstrip("\"'`([ ")
    if _WHY_NOT_RE.search(text):
        return WHY_NOT
    if _WHY_RE.search(text):
        return WHY
    if _HOW_DO_RE.search(text):
        return HOW_DO
    if "?" in text or _QUESTION_START_RE.search(text):
        return None
    content = [w for w in words(text) if w not in STOPWORDS and w.isalpha()]
    if len(content) < SYMPTOM_WORDS or not all(w.isascii() for w in content):
        return None  # a name to look up, or a language whose question words are not read here
    return SYMPTOM if _FAILURE_RE.search(text) else None


def states_a_fault(text: str) -> bool:
    """The text says something goes wrong ("fails", "hangs", "wrong", "KeyError"...): a word of failure in it."""
    return _FAILURE_RE.search(" ".join(text.lower().replace("\u2019", "'").split())) is not None


def category_fit(asked: frozenset[str] | None, category: str | None) -> float:
    """+1 when the memory is of a kind the query asks for, -1 when the query asks for other kinds, 0 when it asks for
    none in particular or the memory's kind is unknown: no category, or the default one a memory gets when nobody
    said (a captured conversation turn is a "note" of whatever it says)."""
    if asked is None or not category or category == DEFAULT_CATEGORY:
        return 0.0
    return 1.0 if category in asked else -1.0
