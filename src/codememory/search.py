"""Keyword search with a typo-tolerant fallback.

Ranking (documented in docs/search.md):
1. Exact matches from the BM25 index come first, ordered by BM25 relevance nudged by importance
   (up to ±5%) and recency (up to +5%, halving every 30 days): the nudges only reorder near-ties.
2. When exact matching returns fewer results than asked for (or fuzzy is forced), fuzzy candidates
   are added after them: literal substrings (trigram index) and typo corrections (rapidfuzz over the
   store's vocabulary). A fuzzy hit's similarity is the mean over query terms of the best match in
   the memory (1.0 present, 0.9 inside a longer word, else edit-distance ratio); hits below the
   threshold are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz, process

from .dates import from_iso, now_utc
from .model import Memory
from .query import ParsedQuery, Term, fold, parse_query, words
from .store.database import Database, Filters, RankRow

DEFAULT_THRESHOLD = 0.7
IMPORTANCE_WEIGHT = 0.10
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0
_CANDIDATE_SLACK = 25
_FUZZY_CANDIDATES = 200
_CORRECTIONS_PER_WORD = 8


@dataclass
class Hit:
    memory: Memory
    score: float
    match: str  # "exact" or "fuzzy"
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "score": round(self.score, 6),
            "match": self.match,
            "fuzzy": self.match == "fuzzy",
            "explain": self.explain,
        }


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    has_more: bool
    fuzzy_used: bool
    literal: bool  # the query was not valid syntax and was searched as plain words

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "count": len(self.hits),
            "has_more": self.has_more,
            "fuzzy_used": self.fuzzy_used,
            "literal": self.literal,
            "results": [h.to_dict() for h in self.hits],
        }


def _nudges(row: RankRow, now: datetime) -> tuple[float, float]:
    try:
        age_days = max(0.0, (now - from_iso(row.created_at)).total_seconds() / 86400)
    except ValueError:
        age_days = 365.0
    recency = math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
    return IMPORTANCE_WEIGHT * (row.importance - 0.5), RECENCY_WEIGHT * recency


def search(
    db: Database,
    query: str,
    filters: Filters,
    *,
    limit: int = 10,
    offset: int = 0,
    fuzzy: bool | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[SearchResult, list[int]]:
    """Run a search; returns the result and the row keys of the hits (for access stats)."""
    parsed = parse_query(query)
    want = limit + offset
    now = now_utc()
    fetch = min(want + _CANDIDATE_SLACK, 10_000)

    exact = db.fts_search(parsed.fts, filters, fetch) if parsed.fts else []
    exact_more = len(exact) >= fetch
    rows = db.rank_rows([pk for pk, _ in exact])
    ranked: list[tuple[float, int, dict[str, Any]]] = []
    for pk, bm25 in exact:
        imp, rec = _nudges(rows[pk], now)
        relevance = -bm25
        score = relevance * (1 + imp) * (1 + rec)
        ranked.append(
            (
                score,
                pk,
                {
                    "bm25": round(relevance, 6),
                    "importance_nudge": round(imp, 4),
                    "recency_nudge": round(rec, 4),
                },
            )
        )
    ranked.sort(key=lambda r: -r[0])
    order: list[tuple[float, int, str, dict[str, Any]]] = [(s, pk, "exact", e) for s, pk, e in ranked]

    fuzzy_used = False
    if fuzzy is True or (fuzzy is None and len(exact) < want):
        fuzzy_used = True
        seen = {pk for pk, _ in exact}
        for score, pk, explain in _fuzzy(db, parsed, filters, threshold, seen, now):
            order.append((score, pk, "fuzzy", explain))

    page = order[offset : offset + limit]
    memories = db.get_by_pks([pk for _, pk, _, _ in page])
    hits = [Hit(memories[pk], score, match, explain) for score, pk, match, explain in page if pk in memories]
    has_more = len(order) > offset + limit or exact_more
    result = SearchResult(query=query, hits=hits, has_more=has_more, fuzzy_used=fuzzy_used, literal=parsed.literal)
    return result, [pk for _, pk, _, _ in page if pk in memories]


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _fuzzy(
    db: Database, parsed: ParsedQuery, filters: Filters, threshold: float, seen: set[int], now: datetime
) -> list[tuple[float, int, dict[str, Any]]]:
    terms = [t for t in parsed.terms if fold(t.text).strip()]
    if not terms:
        return []
    candidates: set[int] = set()

    literal = [fold(t.text).strip() for t in terms if len(fold(t.text).strip()) >= 3]
    if literal:
        candidates.update(db.substring_search(" AND ".join(_quote(s) for s in literal), filters, _FUZZY_CANDIDATES))

    query_words = list(dict.fromkeys(w for t in terms for w in words(t.text)))
    if query_words:
        vocab = db.vocabulary()
        groups = []
        for word in query_words:
            alternatives = [word]
            if len(word) >= 3:
                alternatives += [
                    match
                    for match, _score, _i in process.extract(
                        word,
                        vocab,
                        scorer=fuzz.ratio,
                        score_cutoff=threshold * 100,
                        limit=_CORRECTIONS_PER_WORD,
                    )
                    if match != word
                ]
            groups.append("(" + " OR ".join(_quote(a) for a in alternatives) + ")")
        found = db.fts_search(" AND ".join(groups), filters, _FUZZY_CANDIDATES)
        if len(found) < _FUZZY_CANDIDATES and len(groups) > 1:
            found += db.fts_search(" OR ".join(groups), filters, _FUZZY_CANDIDATES)
        candidates.update(pk for pk, _ in found)

    candidates -= seen
    rows = db.rank_rows(sorted(candidates))
    out: list[tuple[float, int, dict[str, Any]]] = []
    for pk, row in rows.items():
        similarity, per_term = _similarity(terms, row.text)
        if similarity < threshold:
            continue
        imp, rec = _nudges(row, now)
        score = similarity * (1 + imp) * (1 + rec)
        out.append(
            (
                score,
                pk,
                {
                    "similarity": round(similarity, 4),
                    "terms": per_term,
                    "importance_nudge": round(imp, 4),
                    "recency_nudge": round(rec, 4),
                },
            )
        )
    out.sort(key=lambda r: -r[0])
    return out


def _similarity(terms: list[Term], text: str) -> tuple[float, dict[str, Any]]:
    folded = fold(text)
    doc_words = set(words(text))
    per_term: dict[str, Any] = {}
    total = 0.0
    for term in terms:
        needle = fold(term.text).strip()
        term_words = words(term.text)
        if term_words and all(w in doc_words for w in term_words) and (len(term_words) == 1 or needle in folded):
            best, how = 1.0, "word"
        elif len(needle) >= 3 and needle in folded:
            best, how = 0.9, "substring"
        elif term_words and doc_words:
            scores = []
            matched = []
            for w in term_words:
                if w in doc_words:
                    scores.append(1.0)
                    matched.append(w)
                    continue
                found = process.extractOne(w, doc_words, scorer=fuzz.ratio)
                scores.append(found[1] / 100 if found else 0.0)
                matched.append(found[0] if found else None)
            best, how = sum(scores) / len(scores), "typo:" + ",".join(m or "?" for m in matched)
        else:
            best, how = 0.0, "none"
        per_term[term.text] = {"similarity": round(best, 4), "matched": how}
        total += best
    return total / len(terms), per_term
