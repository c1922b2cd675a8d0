"""When a new memory is a copy of a live one (`Store.add` returns the existing memory instead of storing it): the
same text, a near-identical text (rapidfuzz), or, with an embedding model, a near-identical meaning worded the same
way. Texts that differ in a number or in word order around a negation are different facts."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.query import words

_NUMBER_RE = lazy_pattern(r"\d+(?:[.,:]\d+)*")
_FILLERS = frozenset({"should", "please", "just", "also", "really", "then", "now", "here", "so"})
_NEGATIONS = frozenset({"not", "no", "never", "nor", "without", "don", "doesn", "isn", "aren", "won", "t", "nt"})


def same_numbers(a: str, b: str) -> bool:
    """Near-identical texts that differ in a number ("port 8080" / "port 8081") are different facts."""
    return _NUMBER_RE.findall(a) == _NUMBER_RE.findall(b)


def same_wording(a: str, b: str) -> bool:
    """Two texts with the same content words (stop words aside, in any order; in the same order when a negation
    is among them). A meaning match alone is no duplicate: e5 puts "tests run against Postgres" and "… SQLite"
    at 0.947, "always rebase" / "never rebase" higher still, and "use httpx, not requests" / "use requests,
    not httpx" at 0.992."""
    from codememory.text.query import STOPWORDS

    def content(text: str) -> list[str]:
        words = re.findall(r"\w+", text.lower())
        return [w for w in words if (w not in STOPWORDS and w not in _FILLERS) or w in _NEGATIONS]

    left, right = content(a), content(b)
    if sorted(left) != sorted(right):
        return False
    return left == right if any(w in _NEGATIONS for w in left) else True


def text_duplicate(db: Database, text: str, live: Filters, text_ratio: float) -> tuple[int, str] | None:
    """(row key, reason) of an identical live memory, or of one whose text is near-identical (rapidfuzz ratio at
    least `text_ratio`, the same numbers)."""
    exact = db.find_live_duplicate(text, live.now)
    if exact:
        return exact[0], "identical text"
    query = " OR ".join(dict.fromkeys('"' + w + '"' for w in words(text)[:40]))
    if not query:
        return None
    candidates = db.fts_search(query, live, 10)
    threshold = text_ratio * 100
    for pk, row in db.rank_rows([pk for pk, _ in candidates]).items():
        from rapidfuzz import fuzz  # imported on use: every hook process would pay ~13 ms otherwise

        ratio = fuzz.ratio(text, row.text, score_cutoff=threshold)
        if ratio and same_numbers(text, row.text):
            return pk, f"near-identical text (ratio {ratio / 100:.3f})"
    return None


def meaning_duplicate(db: Database, text: str, close: list[tuple[int, float]]) -> tuple[int, str] | None:
    """(row key, reason) of the first of `close` (neighbours by meaning, with their cosine, already over the
    duplicate threshold) worded like `text` with the same numbers."""
    texts = db.rank_rows([pk for pk, _ in close])
    for other, cosine in close:
        other_text = texts[other].text
        if same_numbers(text, other_text) and same_wording(text, other_text):
            return other, f"near-identical meaning (cosine {cosine:.3f})"
    return None
