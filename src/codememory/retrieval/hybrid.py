"""Hybrid ranking: keywords, typo corrections and meaning (each query vector's nearest memories) fused with the
memories around them in their session (`fusion`), with date and tag boosts and the importance/recency nudges."""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codememory.core.dates import from_iso
from codememory.retrieval.evidence import (
    Background,
    calibration_for,
    evidence_score,
    keyword_evidence,
    likelihood,
    word_weights,
)
from codememory.retrieval.fusion import (
    DATE_BOOST,
    LEXICAL_POOL,
    NEIGHBOUR_SPAN,
    SEMANTIC_POOL,
    TAG_BOOST,
    Sessions,
    expand,
    fuse_evidence,
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

ALL_WORDS_TIER = 1000.0  # added to the score of a memory that holds every content word of the query

if TYPE_CHECKING:
    from codememory.embedding.base import Vectors
    from codememory.embedding.semantic import Semantic


def backgrounds(semantic: Semantic, qvecs: list[Vectors]) -> list[Background | None]:
    """Each query vector's background (evidence.Background), None where it cannot be computed."""
    from codememory.embedding.relevance import background_stats

    out: list[Background | None] = []
    for qvec in qvecs:
        stats = background_stats(semantic.embedder(), qvec)
        out.append(Background(*stats) if stats is not None else None)
    return out


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
    """Several query vectors (one per phrase of a query expansion) count by their best evidence. Every entry's
    explain carries `keyword` and `meaning` (evidence.py), `likelihood` and `all_words` (it holds every content
    word of the query), which the relevance decision reads (search.decide)."""
    cal = calibration_for(semantic.model)
    bgs = backgrounds(semantic, qvecs)
    sem_pool = max(SEMANTIC_POOL, want + CANDIDATE_SLACK)
    semantic_hits: dict[int, float] = {}
    meaning: dict[int, float] = {}

    def note(pk: int, cos: float, bg: Background | None) -> None:
        semantic_hits[pk] = max(cos, semantic_hits.get(pk, -1.0))
        if bg is not None:
            meaning[pk] = max(bg.z(cos), meaning.get(pk, -math.inf))

    for qvec, bg in zip(qvecs, bgs, strict=True):
        for pk, cos in semantic.neighbours(qvec, sem_pool, filters):
            note(pk, cos, bg)
    if mode == "semantic":
        rows = db.rank_rows(list(semantic_hits))
        ranked: Ranked = []
        for pk, cos in semantic_hits.items():
            imp, rec = nudges(rows[pk], now)
            explain: dict[str, Any] = {
                "cosine": round(cos, 4),
                "meaning": meaning.get(pk),
                "keyword": 0.0,
                "likelihood": likelihood(0.0, meaning.get(pk), cal),
                "all_words": False,
                "importance_nudge": round(imp, 4),
                "recency_nudge": round(rec, 4),
            }
            score = demoted(cos + imp + rec, rows[pk], db.stale_factor)
            ranked.append((score, pk, "semantic", stale_explain(explain, rows[pk], db.stale_factor)))
        ranked.sort(key=lambda r: -r[0])
        return ranked, False, False

    content = parsed.content_words() or list(dict.fromkeys(w for t in parsed.terms for w in words(t.text)))
    total, counts = db.document_counts(content)
    weights = word_weights(total, counts)
    keyword_fts = parsed.keyword_fts()
    bm25 = {pk: -score for pk, score in db.fts_search(keyword_fts, filters, LEXICAL_POOL)} if keyword_fts else {}
    keyword = {pk: keyword_evidence(rel, weights) for pk, rel in bm25.items()}
    fuzzy_used = False
    fuzzy_hits: dict[int, dict[str, Any]] = {}
    if fuzzy is True or (fuzzy is None and has_unknown_word(db, parsed)):
        fuzzy_used = True
        for _score, pk, explain in fuzzy_matches(db, parsed, filters, threshold, set(bm25), now):
            keyword[pk] = explain["similarity"]  # the typo-tolerant match's own share of the query's words
            fuzzy_hits[pk] = explain
    pool = set(keyword) | set(semantic_hits)
    sessions = Sessions.build(db.sessions_around(sorted(pool), filters).values())
    candidates = expand(expand(pool, sessions, NEIGHBOUR_SPAN), sessions, NEIGHBOUR_SPAN)
    cosine = dict(semantic_hits)
    missing = [pk for pk in candidates if pk not in cosine]
    for qvec, bg in zip(qvecs if missing else [], bgs, strict=False):
        for pk, cos in semantic.cosines(qvec, missing).items():
            cosine[pk] = max(cos, cosine.get(pk, -1.0))
            if bg is not None:
                meaning[pk] = max(bg.z(cos), meaning.get(pk, -math.inf))
    every_word = " AND ".join('"' + w.replace('"', '""') + '"' for w in content)
    all_words = db.fts_subset(every_word, sorted(set(keyword) - set(fuzzy_hits))) if content and keyword else set()
    base = {pk: evidence_score(keyword.get(pk, 0.0), meaning.get(pk), cal) for pk in candidates}
    rows = db.rank_rows(sorted(candidates))
    fused = fuse_evidence(pool, base, sessions, _boosts(db, parsed, rows), semantic.config.search.neighbour_weight)
    ranked = []
    for pk, (score, parts) in fused.items():
        if pk not in rows:
            continue
        imp, rec = nudges(rows[pk], now)
        if pk in fuzzy_hits:
            match = "fuzzy"
        elif pk in keyword:
            match = "partial"  # upgraded to "exact" for the returned page when every term matches
        else:
            match = "semantic" if pk in semantic_hits else "context"
        explain = {
            "bm25": bm25.get(pk),
            "cosine": cosine.get(pk),
            "keyword": keyword.get(pk, 0.0),
            "meaning": meaning.get(pk),
            "likelihood": likelihood(keyword.get(pk, 0.0), meaning.get(pk), cal),
            "all_words": pk in all_words,
            **parts,
            "importance_nudge": imp,
            "recency_nudge": rec,
        }
        if pk in fuzzy_hits:
            explain["fuzzy"] = fuzzy_hits[pk]
        # A memory holding every content word of the query ranks before any that does not (the keyword promise).
        score = demoted(score + imp + rec, rows[pk], db.stale_factor) + (ALL_WORDS_TIER if pk in all_words else 0.0)
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
