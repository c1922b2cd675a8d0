"""The parts of a request: its sentences and clauses, each a question or an ask of its own.

A prompt often asks for several things at once ("export the readings as JSON, for the spreadsheet people and the
raspberry pi dashboard"; "Users cannot upload photos over 10 MB. Raise the limit to 25 MB."). A memory that answers
one of them holds only a fraction of the whole prompt's words and sits further from its meaning than from the part's,
so evidence computed over the whole prompt alone holds back exactly the memories each part needs
(retrieval/proactive.py asks for each part as well).

A part is cut at sentence ends, semicolons, colons, dashes and line breaks, then at commas and at a coordinating
"and"/"but"/"then", never inside brackets: "Add Bookings.cancel_booking/2 (member, booking id)" is one ask, and its
argument list alone ("booking id") matched every memory that logs or keys anything by booking id. A fragment with
fewer than MIN_WORDS content words ("Fix it.", "Next:", "In README.md") is no part of its own: a single word is not
an ask, and alone it would match any memory that happens to hold it.
"""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.query import STOPWORDS, words

MIN_WORDS = 2  # content words a part needs to stand alone
MAX_PARTS = 6  # the first ones: a long paste is not a list of asks
CUT_INSIDE_BRACKETS = False  # True: cut inside brackets too, as before (for measuring)
# A cut that starts with whitespace starts only where the run does ((?<!\s)): tried from every space of a long run,
# each try scanned the rest of it (8,000 spaces took 11 s). A line break takes the indented dash after it along
# ("\n  - item"): the run after it no longer starts a cut of its own, and the item kept its dash (a "— then …" line
# one part more).
_SENTENCE_RE = lazy_pattern(r"(?<=[.!?])[\"')\]]*\s+|[;\n]+(?:[^\S\n]+[-–—]+\s+)?|:\s+|(?<!\s)\s+[-–—]+\s+")
_CLAUSE_RE = lazy_pattern(
    r"(?:,|(?<!\s))\s+(?:and then|and|but|then|as well as|over|instead of|rather than|versus|vs\.?|the way|like)\s+"
    r"|,\s+",
    re.IGNORECASE,
)


def content_words(text: str) -> list[str]:
    """The text's content tokens: what is separated by spaces and holds a word of letters that is not a stopword (a
    path or a dotted name such as README.md is one; a number alone is none)."""
    return [t for t in text.split() if any(w not in STOPWORDS and not w.isdigit() for w in words(t))]


def _cut(text: str, pattern: re.Pattern[str]) -> list[str]:
    """`text` cut at the matches of `pattern` that are outside brackets (round or square). Only a bracket closed
    later encloses anything: ":(" or "(see the README" left open, or a stray "1)", stops no cut after it."""
    if CUT_INSIDE_BRACKETS:
        return pattern.split(text)
    inside = _inside_brackets(text)
    pieces: list[str] = []
    at = 0
    for m in pattern.finditer(text):
        if not inside[m.start()]:
            pieces.append(text[at : m.start()])
            at = m.end()
    pieces.append(text[at:])
    return pieces


def _inside_brackets(text: str) -> list[bool]:
    """For each position, whether it lies after the opening and up to the closing bracket of a pair (a sentence end
    may close one: "(see the README.) Then" is not cut before the ")")."""
    depth = [0] * (len(text) + 1)
    open_at: list[int] = []
    for i, c in enumerate(text):
        if c in "([":
            open_at.append(i)
        elif c in ")]" and open_at:
            depth[open_at.pop() + 1] += 1
            depth[i + 1] -= 1
    inside, level = [], 0
    for step in depth:
        level += step
        inside.append(level > 0)
    return inside


def request_parts(text: str) -> list[str]:
    """The request's parts that carry an ask of their own, in order; [] when it has only one (the whole is it)."""
    parts: list[str] = []
    for sentence in _cut(text, _SENTENCE_RE):
        sentence = sentence.strip(" \t\"'`.")
        if len(content_words(sentence)) < MIN_WORDS:
            continue
        clauses = [c.strip(" \t\"'`.") for c in _cut(sentence, _CLAUSE_RE)]
        kept = [c for c in clauses if len(content_words(c)) >= MIN_WORDS]
        parts.append(sentence)
        parts.extend(kept)  # a clause without the qualifiers around it is a part too ("choose httpx")
    parts = list(dict.fromkeys(parts))
    whole = " ".join(words(text))
    parts = [p for p in parts if " ".join(words(p)) != whole]
    return parts[:MAX_PARTS]
