"""Keyword search with a typo-tolerant fallback.

Ranking (documented in docs/search.md):
1. Exact matches from the BM25 index come first, ordered by BM25 relevance nudged by importance
   (up to ±5%) and recency (up to +5%, halving every 30 days): the nudges only reorder near-ties.
2. Keyword-only (no embedding model, or --mode lexical): when a plain-words query of several words
   finds fewer results than asked for with all its words, the memories holding some of its content
   words (stopwords and question words dropped) come next, "partial", ranked by BM25 over the words
   ORed (`ParsedQuery.relaxed`); the fuzzy pass below then works on those words ORed.
3. When the passes above return fewer results than asked for (or fuzzy is forced), fuzzy candidates
   are added after them: literal substrings (trigram index) and typo corrections (rapidfuzz over the
   store's vocabulary). A fuzzy hit's similarity is the mean over query terms of the best match in
   the memory (1.0 present, 0.9 inside a longer word, else edit-distance ratio); hits below the
   threshold are dropped.

This module chooses the passes for a query and mode (`rank`, `rank_phrases`) and turns a ranking into a page
of results (`search`, `recall_results`); the keyword and fuzzy passes are in `lexical`, the fusion with meaning
in `hybrid`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from codememory.core.bounded_input import check_query
from codememory.core.dates import now_utc
from codememory.core.model import Memory
from codememory.core.result import FLATTEN, Result, json_key
from codememory.embedding.semantic import NOT_CONFIGURED
from codememory.errors import InvalidInput
from codememory.retrieval.hybrid import hybrid_ranking
from codememory.retrieval.lexical import Ranked, has_unknown_word, keyword_ranking, lexical_ranking, matched_words
from codememory.retrieval.usefulness import reorder
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.query import ParsedQuery, parse_query, words

if TYPE_CHECKING:
    from codememory.embedding.base import Vectors
    from codememory.embedding.semantic import Semantic

DEFAULT_THRESHOLD = 0.7


@dataclass
class Hit(Result):
    """A memory found by a search (its JSON: the memory's fields, then score, match, fuzzy, explain)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"fuzzy": bool}

    memory: Memory = field(metadata=FLATTEN)
    score: float
    match: str  # "exact", "partial", "semantic", "context" or "fuzzy"
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "score": round(self.score, 6),
            "match": self.match,
            "fuzzy": self.match == "fuzzy",
            "explain": _rounded(self.explain),
        }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@dataclass
class SearchResult(Result):
    """`codememory search --json` (and `Store.search`): the hits of one page, best first."""

    COMPUTED: ClassVar[dict[str, Any]] = {"count": int}

    query: str
    hits: list[Hit] = field(metadata=json_key("results"))
    has_more: bool
    fuzzy_used: bool
    literal: bool  # the query was not valid syntax and was searched as plain words
    mode: str = "lexical"  # "hybrid", "lexical" or "semantic": what actually ranked the results
    degraded: bool = False  # semantic search was wanted but unavailable (see degraded_reason)
    degraded_reason: str | None = None
    below_floor: int = 0  # candidates found by meaning alone and cut as too far from the query

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "count": len(self.hits),
            "has_more": self.has_more,
            "fuzzy_used": self.fuzzy_used,
            "literal": self.literal,
            "mode": self.mode,
            "degraded": self.degraded,
            "degraded_reason": self.degraded_reason,
            "below_floor": self.below_floor,
            "results": [h.to_dict() for h in self.hits],
        }


@dataclass
class Ranking:
    order: Ranked
    more: bool
    fuzzy_used: bool
    mode: str
    reason: str | None
    parsed: ParsedQuery
    below_floor: int = 0
    floor: float | None = None  # the cosine a meaning-only match needed (relevance.py), when meaning was used


def apply_floor(order: Ranked, floor: float) -> tuple[Ranked, int]:
    """Drop the entries found by meaning alone whose cosine is under `floor` (keyword and typo hits stay)."""
    kept = [e for e in order if e[2] not in ("semantic", "context") or (e[3].get("cosine") or -1.0) >= floor]
    return kept, len(order) - len(kept)


def meaning_floor(semantic: Semantic, qvecs: list[Vectors], *, inject: bool = False) -> float:
    from codememory.embedding.relevance import INJECT_MARGIN, SEARCH_MARGIN, floor_for

    margin = INJECT_MARGIN if inject else SEARCH_MARGIN
    return floor_for(semantic.embedder(), qvecs, semantic.config.search.min_cosine, margin)


def _floored(ranking: Ranking, semantic: Semantic, enabled: bool, qvecs: list[Vectors]) -> Ranking:
    ranking.floor = meaning_floor(semantic, qvecs)
    if enabled:
        ranking.order, ranking.below_floor = apply_floor(ranking.order, ranking.floor)
    return ranking


def rank(
    db: Database,
    query: str,
    filters: Filters,
    *,
    want: int = 10,
    fuzzy: bool | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    semantic: Semantic | None = None,
    mode: str = "hybrid",
    floor: bool = True,
) -> Ranking:
    """Every candidate for a query, best first (no memories loaded). See `search`. A `-word` exclusion leaves out
    every candidate holding the word, however it was found (meaning and typo matches included)."""
    parsed = parse_query(query)
    ranking = _rank(db, parsed, filters, want, fuzzy, threshold, semantic, mode, floor)
    excluded = parsed.excluded_fts()
    if excluded and ranking.order:
        holding = db.fts_subset(excluded, [pk for _, pk, _, _ in ranking.order])
        ranking.order = [entry for entry in ranking.order if entry[1] not in holding]
    return ranking


def _rank(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    semantic: Semantic | None,
    mode: str,
    floor: bool,
) -> Ranking:
    now = now_utc()
    reason = None
    if semantic is None or mode == "lexical" or not parsed.terms:
        order, more, fuzzy_used = keyword_ranking(db, parsed, filters, want, fuzzy, threshold, now)
        configured = semantic is not None and semantic.configured
        return Ranking(
            order, more, fuzzy_used, "lexical", None if mode == "lexical" or configured else NOT_CONFIGURED, parsed
        )
    strict: Ranked = []
    if mode == "hybrid" and parsed.explicit:
        # The user's syntax decides first; meaning may only fill up the rest of the list, and never
        # where the query excludes something (NOT), since related memories could be the excluded ones.
        strict, more, fuzzy_used = lexical_ranking(db, parsed, filters, want, fuzzy, threshold, now)
        if len(strict) >= want or parsed.negated:
            reason = None if semantic.configured else NOT_CONFIGURED
            return Ranking(strict, more, fuzzy_used, "lexical", reason, parsed)
    gap = semantic.coverage_gap()  # first: a small gap it fills is ranked in this very search
    qvec = semantic.embed_query(embedding_text(parsed))
    if qvec is None:
        if strict:
            return Ranking(strict, False, fuzzy_used, "lexical", semantic.reason, parsed)
        order, more, fuzzy_used = keyword_ranking(db, parsed, filters, want, fuzzy, threshold, now)
        return Ranking(order, more, fuzzy_used, "lexical", semantic.reason, parsed)
    order, more, fuzzy_used = hybrid_ranking(db, parsed, filters, want, fuzzy, threshold, semantic, [qvec], now, mode)
    if strict:
        seen = {pk for _, pk, _, _ in strict}
        order = strict + [entry for entry in order if entry[1] not in seen]
    ranking = Ranking(order, more, fuzzy_used, "semantic" if mode == "semantic" else "hybrid", gap, parsed)
    return _floored(ranking, semantic, floor, [qvec])


def rank_phrases(
    db: Database, phrases: list[str], filters: Filters, *, want: int, semantic: Semantic | None
) -> Ranking:
    """One hybrid pass for several phrases describing one need (a query expansion): keywords of all
    phrases ORed, each phrase's vector searched, a memory's cosine its best over the phrases."""
    parsed = parse_query(" ".join(w for p in phrases for w in words(p)))
    qvecs = []
    gap = None
    if semantic is not None and semantic.configured and parsed.terms:
        gap = semantic.coverage_gap()  # first: a small gap it fills is ranked in this very call
        semantic.prepare_queries(phrases)  # one model call for all of them
        qvecs = [v for v in (semantic.embed_query(p) for p in phrases) if v is not None]
    if not qvecs:
        # Keywords only: any content word counts (ORed, BM25-ranked); an AND of every word of several
        # phrases would almost never match.
        now = now_utc()
        typo = has_unknown_word(db, parsed)  # any-word matching leaves few gaps; fuzzy only for unknown words
        order, more, fuzzy_used = lexical_ranking(
            db, parsed, filters, want, typo, DEFAULT_THRESHOLD, now, parsed.keyword_fts()
        )
        reason = (semantic.reason if semantic is not None else None) or NOT_CONFIGURED
        return Ranking(order, more, fuzzy_used, "lexical", reason, parsed)
    assert semantic is not None  # vectors exist only with a working embedder
    order, more, fuzzy_used = hybrid_ranking(
        db, parsed, filters, want, None, DEFAULT_THRESHOLD, semantic, qvecs, now_utc(), "hybrid"
    )
    ranking = Ranking(order, more, fuzzy_used, "hybrid", gap, parsed)
    ranking.floor = meaning_floor(semantic, qvecs, inject=True)  # rank_phrases serves proactive retrieval
    return ranking


def search(
    db: Database,
    query: str,
    filters: Filters,
    *,
    limit: int = 10,
    offset: int = 0,
    fuzzy: bool | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    semantic: Semantic | None = None,
    mode: str = "hybrid",
    relevance_floor: bool = True,
) -> tuple[SearchResult, list[int]]:
    """Run a search; returns the result and the row keys of the hits (for access stats).

    mode "hybrid" fuses keywords and meaning for plain words; a query using OR/NOT/"phrases"/prefix*/
    parentheses is matched strictly by keywords first, and (unless it has a NOT) related memories fill
    the rest of the list. "lexical" uses keywords only, "semantic" meaning only. Without a working
    embedder every mode falls back to lexical and the result says `degraded`."""
    asked = parse_query(query)
    if asked.excluded and not asked.terms:
        raise InvalidInput("the query only excludes words (-word): add a word to search for")
    ranking = rank(
        db,
        query,
        filters,
        want=limit + offset,
        fuzzy=fuzzy,
        threshold=threshold,
        semantic=semantic,
        mode=mode,
        floor=relevance_floor,
    )
    order, parsed = reorder(db, ranking.order), ranking.parsed  # what agents did with each (retrieval/usefulness.py)
    page = order[offset : offset + limit]
    partial = [pk for _, pk, match, _ in page if match == "partial"]
    if partial and parsed.fts:
        exact = db.fts_subset(parsed.fts, partial)
        page = [(s, pk, "exact" if pk in exact else m, e) for s, pk, m, e in page]
    memories = db.get_by_pks([pk for _, pk, _, _ in page])
    notes = stale_notes(db, [pk for _, pk, _, _ in page])
    keyword_hits = [pk for _, pk, match, _ in page if match in ("exact", "partial", "fuzzy")]
    matched = matched_words(db, parsed, keyword_hits) if keyword_hits else {}
    hits = [
        Hit(memories[pk], score, match, _explained(explain, notes.get(pk), matched.get(pk)))
        for score, pk, match, explain in page
        if pk in memories
    ]
    result = SearchResult(
        query=query,
        hits=hits,
        has_more=len(order) > offset + limit or ranking.more,
        fuzzy_used=ranking.fuzzy_used,
        literal=parsed.literal,
        mode=ranking.mode,
        degraded=ranking.reason is not None,
        degraded_reason=ranking.reason,
        below_floor=ranking.below_floor,
    )
    return result, [pk for _, pk, _, _ in page if pk in memories]


def _explained(explain: dict[str, Any], stale: str | None, words: list[str] | None) -> dict[str, Any]:
    """A hit's explain with the query's keywords it holds (`words`) and its staleness note, when it has them."""
    extra: dict[str, Any] = {}
    if words:
        extra["words"] = words
    if stale:
        extra["stale"] = stale
    return {**explain, **extra} if extra else explain


def stale_notes(db: Database, pks: list[int]) -> dict[int, str]:
    """The "may be stale: ..." note of each of these memories a staleness check marked (text.context_render)."""
    from codememory.text.context_render import stale_note

    out = {}
    for pk, marks in db.stale_marks(pks).items():
        note = stale_note([(m.kind, m.subject, m.commit, m.new_path) for m in marks])
        if note:
            out[pk] = note
    return out


def embedding_text(parsed: ParsedQuery) -> str:
    """What gets embedded for a query: its words, without the syntax."""
    return " ".join(t.text for t in parsed.terms)


MODES = ("hybrid", "lexical", "semantic")


def check_search_args(query: str, limit: int, offset: int, mode: str, threshold: float) -> None:
    """The argument checks of a search (one store's or every registered project's), before any work."""
    check_query(query)
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    if offset < 0:
        raise InvalidInput("offset cannot be negative")
    if not 0.0 <= threshold <= 1.0:
        raise InvalidInput(f"threshold must be between 0 and 1, got {threshold}")
