"""What a turn's final answer states of a memory: the memory's values it repeats that the user's request did not
hold. Pure text rules, no model; codememory.capture.usage applies them to a turn that looked something up a memory
names and then only answered.

A look (a read, a listing, a search) that finds what a memory names is no use on its own: the agent may have looked
up something else there (the version in go.mod, the JDK the CI workflow sets up). When the turn's answer then states
the memory's substance, at least MIN_STATED of its distinct values, the memory was read to answer the question.

A memory's **values** are its terms (text/usage_cues.memory_terms: paths, code names, commands, versions, specific
numbers, settings, coded words) and two shapes prose gives values in that no tool call needs: a time of day
(`05:30`) and a quoted literal (`'30 5 * * *'`, `'Duplicate row detected during DML action'`). A value the request
holds proves nothing (an answer echoes its question), nor does a common word: a plain word is never a value. A
value inside another one stated (`make test` in `make test-db`) counts once.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.usage_cues import PLACE, Term, term_in

MIN_STATED = 2  # distinct values of the memory an answer must state: one shared name can be anyone's
MAX_ANSWER_CHARS = 20_000  # of an answer read
MAX_VALUES = 12  # times and quoted literals taken from one memory

# A time of day (`05:30`, not a part of `12:05:30` or of a ratio in a longer run), and a quoted literal: its quotes
# not inside a word (`operator's` opens nothing), three to sixty characters, at least one of them not a letter or a
# space, or more than one word (a lone quoted word such as 'ebike' is a word).
_CLOCK_RE = lazy_pattern(r"(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d(?![\w:])")
_QUOTED_RE = lazy_pattern(r"""(?<!\w)(['"])([^'"\n]{3,60})\1(?!\w)""")


@functools.lru_cache(maxsize=4096)
def prose_values(text: str) -> tuple[str, ...]:
    """The times of day and quoted literals a memory's text gives (see the module docstring)."""
    found = [m.group(0) for m in _CLOCK_RE.finditer(text)]
    for m in _QUOTED_RE.finditer(text):
        inner = m.group(2).strip()
        if len(inner) >= 3 and (" " in inner or not inner.isalpha()):
            found.append(inner)
    return tuple(dict.fromkeys(found))[:MAX_VALUES]


def stated_values(terms: Sequence[Term], answer: str, known: Sequence[str]) -> list[str]:
    """The memory's values (its terms, and the times and quoted literals of its text: the `phrase` term) that the
    answer states and none of `known` (the user's request, the query the memory was shown for) holds, each once."""
    low = answer[:MAX_ANSWER_CHARS].lower()
    held = [k.lower() for k in known if k]
    values: list[str] = []
    for t in terms:
        if t.kind == "phrase":
            values += prose_values(t.text)
        elif t.kind not in ("commit", PLACE):  # a commit form is followed, not stated; a place is many memories'
            values.append(t.text)
    hits: list[str] = []
    for value in dict.fromkeys(values):
        if term_in(value, low, lowered=True) and not any(term_in(value, k, lowered=True) for k in held):
            hits.append(value)
    lowered = [h.lower() for h in hits]
    return [h for h, lh in zip(hits, lowered, strict=True) if not any(lh != o and lh in o for o in lowered)]


def states_the_memory(terms: Sequence[Term], answer: str, known: Sequence[str]) -> list[str]:
    """The values that show the answer states the memory's substance (at least MIN_STATED of them), or []."""
    hits = stated_values(terms, answer, known)
    return hits if len({h.lower() for h in hits}) >= MIN_STATED else []
