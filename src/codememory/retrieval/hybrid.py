"""Hybrid ranking: keywords, typo corrections and meaning (each query vector's nearest memories) fused with the
memories around them in their session (`fusion`), with date and tag boosts and the importance/recency nudges."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from codememory.core.dates import from_iso
from codememory.retrieval.fusion import (
    DATE_BOOST,
    LEXICAL_POOL,
    NEIGHBOUR_SPAN,
    SEMANTIC_POOL,
    TAG_BOOST,
    Sessions,
    expand,
    fuse,
)
from codememory.retrieval.lexical import (
    CANDIDATE_SLACK,
    Ranked,
    demoted,
    fuzzy_matches,
    has_unknown_word,
    nudges,
    stale_explain,
)
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.store.memories import RankRow
from codememory.text.query import ParsedQuery, words

if TYPE_CHECKING:
    from codememory.embedding.base import Vectors
    from codememory.embedding.semantic import Semantic


def hybrid_ranking(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    semantic: Semantic,
    qvecs: list[Vectors],
    now: datetime,
    mode: str,
) -> tuple[Ranked, bool, bool]:
    """Several query vectors (one per phrase of a query expansion) count by their best similarity."""
    sem_pool = max(SEMANTIC_POOL, want + CANDIDATE_SLACK)
    semantic_hits: dict[int, float] = {}
    for qvec in qvecs:
        for pk, cos in semantic.neighbours(qvec, sem_pool, filters):
            semantic_hits[pk] = max(cos, semantic_hits.get(pk, -1.0))
    if mode == "semantic":
        rows = db.rank_rows(list(semantic_hits))
        ranked: Ranked = []
        for pk, cos in semantic_hits.items():
            imp, rec = nudges(rows[pk], now)
            explain: dict[str, Any] = {
                "cosine": round(cos, 4),
                "importance_nudge": round(imp, 4),
                "recency_nudge": round(rec, 4),
            }
            score = demoted(cos + imp + rec, rows[pk], db.stale_factor)
            ranked.append((score, pk, "semantic", stale_explain(explain, rows[pk], db.stale_factor)))
        ranked.sort(key=lambda r: -r[0])
        return ranked, False, False

    keyword_fts = parsed.keyword_fts()
    lexical = {pk: -bm25 for pk, bm25 in db.fts_search(keyword_fts, filters, LEXICAL_POOL)} if keyword_fts else {}
    fuzzy_used = False
    fuzzy_hits: dict[int, dict[str, Any]] = {}
    if fuzzy is True or (fuzzy is None and has_unknown_word(db, parsed)):
        fuzzy_used = True
        top = max(lexical.values(), default=1.0)
        for _score, pk, explain in fuzzy_matches(db, parsed, filters, threshold, set(lexical), now):
            lexical[pk] = explain["similarity"] * top  # a close typo counts as a (slightly weaker) keyword hit
            fuzzy_hits[pk] = explain
    pool = set(lexical) | set(semantic_hits)
    sessions = Sessions.build(db.sessions_around(sorted(pool), filters).values())
    candidates = expand(expand(pool, sessions, NEIGHBOUR_SPAN), sessions, NEIGHBOUR_SPAN)
    cosine = dict(semantic_hits)
    missing = [pk for pk in candidates if pk not in cosine]
    for qvec in qvecs if missing else []:
        for pk, cos in semantic.cosines(qvec, missing).items():
            cosine[pk] = max(cos, cosine.get(pk, -1.0))
    rows = db.rank_rows(sorted(candidates))
    fused = fuse(pool, lexical, cosine, sessions, _boosts(db, parsed, rows), semantic.config.search.neighbour_weight)
    ranked = []
    for pk, (score, parts) in fused.items():
        if pk not in rows:
            continue
        imp, rec = nudges(rows[pk], now)
        if pk in fuzzy_hits:
            match = "fuzzy"
        elif pk in lexical:
            match = "partial"  # upgraded to "exact" for the returned page when every term matches
        else:
            match = "semantic" if pk in semantic_hits else "context"
        explain = {**parts, "importance_nudge": imp, "recency_nudge": rec}
        if pk in fuzzy_hits:
            explain["fuzzy"] = fuzzy_hits[pk]
        score = demoted(score + imp + rec, rows[pk], db.stale_factor)
        ranked.append((score, pk, match, stale_explain(explain, rows[pk], db.stale_factor)))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return ranked, False, fuzzy_used


def _boosts(db: Database, parsed: ParsedQuery, rows: dict[int, RankRow]) -> dict[int, float]:
    """Date boost for memories created in the month (and year) the query names; tag boost for
    memories tagged with a word of the query."""
    boosts: dict[int, float] = {}
    month, year = parsed.month()
    if month is not None:
        for pk, row in rows.items():
            try:
                created = from_iso(row.created_at)
            except ValueError:
                continue
            if created.month == month and (year is None or created.year == year):
                boosts[pk] = DATE_BOOST
    query_words = {w for t in parsed.terms for w in words(t.text)}
    if query_words:
        for pk, tags in db.tags_of(list(rows)).items():
            if query_words & {t.lower() for t in tags}:
                boosts[pk] = boosts.get(pk, 0.0) + TAG_BOOST
    return boosts
