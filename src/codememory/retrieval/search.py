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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from codememory.core.dates import from_iso, now_utc
from codememory.core.model import Memory
from codememory.core.result import FLATTEN, Result, json_key
from codememory.embedding.semantic import NOT_CONFIGURED
from codememory.errors import InvalidInput
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
from codememory.store.database import Database, Filters, RankRow
from codememory.text.query import STOPWORDS, Node, ParsedQuery, Term, all_terms, compile_node, fold, parse_query, words

if TYPE_CHECKING:
    from codememory.embedding.base import Vectors
    from codememory.embedding.semantic import Semantic

DEFAULT_THRESHOLD = 0.7
IMPORTANCE_WEIGHT = 0.10
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0
TAG_NUDGE = 0.2  # keyword-only any-word pass: a memory tagged with a query word (see _tag_nudged)
_CANDIDATE_SLACK = 25
_FUZZY_CANDIDATES = 200
_CORRECTIONS_PER_WORD = 8


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


def _nudges(row: RankRow, now: datetime) -> tuple[float, float]:
    try:
        age_days = max(0.0, (now - from_iso(row.created_at)).total_seconds() / 86400)
    except ValueError:
        age_days = 365.0
    recency = math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
    return IMPORTANCE_WEIGHT * (row.importance - 0.5), RECENCY_WEIGHT * recency


Ranked = list[tuple[float, int, str, dict[str, Any]]]  # (score, pk, match, explain), best first


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
    """Every candidate for a query, best first (no memories loaded). See `search`."""
    parsed = parse_query(query)
    now = now_utc()
    reason = None
    if semantic is None or mode == "lexical" or not parsed.terms:
        order, more, fuzzy_used = _keyword(db, parsed, filters, want, fuzzy, threshold, now)
        configured = semantic is not None and semantic.configured
        return Ranking(
            order, more, fuzzy_used, "lexical", None if mode == "lexical" or configured else NOT_CONFIGURED, parsed
        )
    strict: Ranked = []
    if mode == "hybrid" and parsed.explicit:
        # The user's syntax decides first; meaning may only fill up the rest of the list, and never
        # where the query excludes something (NOT), since related memories could be the excluded ones.
        strict, more, fuzzy_used = _lexical(db, parsed, filters, want, fuzzy, threshold, now)
        if len(strict) >= want or parsed.negated:
            reason = None if semantic.configured else NOT_CONFIGURED
            return Ranking(strict, more, fuzzy_used, "lexical", reason, parsed)
    gap = semantic.coverage_gap()  # first: a small gap it fills is ranked in this very search
    qvec = semantic.embed_query(embedding_text(parsed))
    if qvec is None:
        if strict:
            return Ranking(strict, False, fuzzy_used, "lexical", semantic.reason, parsed)
        order, more, fuzzy_used = _keyword(db, parsed, filters, want, fuzzy, threshold, now)
        return Ranking(order, more, fuzzy_used, "lexical", semantic.reason, parsed)
    order, more, fuzzy_used = _hybrid(db, parsed, filters, want, fuzzy, threshold, semantic, [qvec], now, mode)
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
        typo = _has_unknown_word(db, parsed)  # any-word matching leaves few gaps; fuzzy only for unknown words
        order, more, fuzzy_used = _lexical(
            db, parsed, filters, want, typo, DEFAULT_THRESHOLD, now, parsed.keyword_fts()
        )
        reason = (semantic.reason if semantic is not None else None) or NOT_CONFIGURED
        return Ranking(order, more, fuzzy_used, "lexical", reason, parsed)
    assert semantic is not None  # vectors exist only with a working embedder
    order, more, fuzzy_used = _hybrid(
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
    order, parsed = ranking.order, ranking.parsed
    page = order[offset : offset + limit]
    partial = [pk for _, pk, match, _ in page if match == "partial"]
    if partial and parsed.fts:
        exact = db.fts_subset(parsed.fts, partial)
        page = [(s, pk, "exact" if pk in exact else m, e) for s, pk, m, e in page]
    memories = db.get_by_pks([pk for _, pk, _, _ in page])
    hits = [Hit(memories[pk], score, match, explain) for score, pk, match, explain in page if pk in memories]
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


def embedding_text(parsed: ParsedQuery) -> str:
    """What gets embedded for a query: its words, without the syntax."""
    return " ".join(t.text for t in parsed.terms)


def _keyword(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    now: datetime,
) -> tuple[Ranked, bool, bool]:
    """Keyword-only ranking. A plain-words query of several words that finds fewer than `want` memories
    with all its words ("exact") goes on with its content words ORed: memories holding some of them
    ("partial", by BM25), then, if still short, the fuzzy pass over those words ("fuzzy"). Each pass
    ranks after the one before; explicit syntax keeps its strict meaning (`_lexical`)."""
    relaxed = parsed.relaxed()
    if relaxed is None:
        return _lexical(db, parsed, filters, want, fuzzy, threshold, now)
    ranked, more, _ = _lexical(db, parsed, filters, want, False, threshold, now)
    if len(ranked) >= want and fuzzy is not True:
        return ranked, more, False
    seen = {pk for _, pk, _, _ in ranked}
    loose, loose_more, fuzzy_used = _lexical(db, relaxed, filters, want, fuzzy, threshold, now, relaxed.fts)
    partial = _tag_nudged(db, relaxed, [entry for entry in loose if entry[2] == "partial" and entry[1] not in seen])
    ranked += partial + [entry for entry in loose if entry[2] != "partial" and entry[1] not in seen]
    return ranked, more or loose_more, fuzzy_used


def _tag_nudged(db: Database, parsed: ParsedQuery, ranked: Ranked) -> Ranked:
    """A memory tagged with one of the words gains TAG_NUDGE of its score: a tag is a curated topic, so
    among memories that hold some of the words it marks the one about them (LoCoMo-dev recall@5
    0.542 -> 0.550, coding set 0.770 -> 0.785; benchmarks/README.md)."""
    query_words = {t.text for t in parsed.terms}
    tagged = {pk for pk, tags in db.tags_of([pk for _, pk, _, _ in ranked]).items() if query_words & set(tags)}
    if not tagged:
        return ranked
    out: Ranked = []
    for score, pk, match, explain in ranked:
        if pk in tagged:
            score, explain = score * (1 + TAG_NUDGE), {**explain, "tag_nudge": TAG_NUDGE}
        out.append((score, pk, match, explain))
    return sorted(out, key=lambda r: -r[0])


def _lexical(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    want: int,
    fuzzy: bool | None,
    threshold: float,
    now: datetime,
    match: str | None = None,
) -> tuple[Ranked, bool, bool]:
    """Keyword ranking of `match` (default: the query's own expression, matched strictly)."""
    fetch = min(want + _CANDIDATE_SLACK, 10_000)
    label = "partial" if match else "exact"
    match = match or parsed.fts
    exact = db.fts_search(match, filters, fetch) if match else []
    rows = db.rank_rows([pk for pk, _ in exact])
    ranked: Ranked = []
    for pk, bm25 in exact:
        imp, rec = _nudges(rows[pk], now)
        relevance = -bm25
        explain = {"bm25": round(relevance, 6), "importance_nudge": round(imp, 4), "recency_nudge": round(rec, 4)}
        ranked.append((relevance * (1 + imp) * (1 + rec), pk, label, explain))
    ranked.sort(key=lambda r: -r[0])
    fuzzy_used = False
    if fuzzy is True or (fuzzy is None and len(exact) < want):
        fuzzy_used = True
        seen = {pk for pk, _ in exact}
        ranked.extend(
            (score, pk, "fuzzy", explain) for score, pk, explain in _fuzzy(db, parsed, filters, threshold, seen, now)
        )
    return ranked, len(exact) >= fetch, fuzzy_used


def _hybrid(
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
    sem_pool = max(SEMANTIC_POOL, want + _CANDIDATE_SLACK)
    semantic_hits: dict[int, float] = {}
    for qvec in qvecs:
        for pk, cos in semantic.neighbours(qvec, sem_pool, filters):
            semantic_hits[pk] = max(cos, semantic_hits.get(pk, -1.0))
    if mode == "semantic":
        rows = db.rank_rows(list(semantic_hits))
        ranked: Ranked = []
        for pk, cos in semantic_hits.items():
            imp, rec = _nudges(rows[pk], now)
            explain: dict[str, Any] = {
                "cosine": round(cos, 4),
                "importance_nudge": round(imp, 4),
                "recency_nudge": round(rec, 4),
            }
            ranked.append((cos + imp + rec, pk, "semantic", explain))
        ranked.sort(key=lambda r: -r[0])
        return ranked, False, False

    keyword_fts = parsed.keyword_fts()
    lexical = {pk: -bm25 for pk, bm25 in db.fts_search(keyword_fts, filters, LEXICAL_POOL)} if keyword_fts else {}
    fuzzy_used = False
    fuzzy_hits: dict[int, dict[str, Any]] = {}
    if fuzzy is True or (fuzzy is None and _has_unknown_word(db, parsed)):
        fuzzy_used = True
        top = max(lexical.values(), default=1.0)
        for _score, pk, explain in _fuzzy(db, parsed, filters, threshold, set(lexical), now):
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
        imp, rec = _nudges(rows[pk], now)
        if pk in fuzzy_hits:
            match = "fuzzy"
        elif pk in lexical:
            match = "partial"  # upgraded to "exact" for the returned page when every term matches
        else:
            match = "semantic" if pk in semantic_hits else "context"
        explain = {**parts, "importance_nudge": imp, "recency_nudge": rec}
        if pk in fuzzy_hits:
            explain["fuzzy"] = fuzzy_hits[pk]
        ranked.append((score + imp + rec, pk, match, explain))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return ranked, False, fuzzy_used


def _has_unknown_word(db: Database, parsed: ParsedQuery) -> bool:
    """A content word that no memory contains is likely a typo: worth the fuzzy pass. (Meaning-based
    results fill the list anyway, so "fewer exact hits than asked for" is no signal here.)"""
    vocab = db.vocabulary_set()
    return any(
        len(w) >= 3 and w.isalpha() and w not in STOPWORDS and w not in vocab
        for t in parsed.terms
        for w in words(t.text)
    )


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


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_NEUTRAL = -1.0  # a term FTS5 cannot index (e.g. "@"): ignored, as the exact pass ignores it
_PRESENT = 0.9  # what counts as "contains it" on the excluded side of a NOT


def _fuzzy(
    db: Database, parsed: ParsedQuery, filters: Filters, threshold: float, seen: set[int], now: datetime
) -> list[tuple[float, int, dict[str, Any]]]:
    """Fuzzy pass: the same boolean expression, with each term allowed to match approximately."""
    from rapidfuzz import fuzz as rf_fuzz  # imported on use: most searches never need it
    from rapidfuzz import process as rf_process

    node = parsed.node
    if node is None or not parsed.terms:
        return []
    vocab: list[str] | None = None
    alternatives: dict[str, list[str]] = {}
    for term in parsed.terms:
        term_words = words(term.text)
        if len(term_words) != 1 or len(term_words[0]) < 3 or term_words[0] in alternatives:
            continue
        if vocab is None:
            vocab = db.vocabulary()
        word = term_words[0]
        alternatives[word] = [
            match
            for match, _score, _i in rf_process.extract(
                word, vocab, scorer=rf_fuzz.ratio, score_cutoff=threshold * 100, limit=_CORRECTIONS_PER_WORD
            )
            if match != word
        ]

    def render_words(term: Term, negated: bool) -> str | None:
        term_words = words(term.text)
        if negated or len(term_words) != 1 or not alternatives.get(term_words[0]):
            return term.fts() if term.indexable() else None
        return "(" + " OR ".join([term.fts(), *(_quote(a) for a in alternatives[term_words[0]])]) + ")"

    def render_substring(term: Term, _negated: bool) -> str | None:
        needle = fold(term.text).strip()
        return _quote(needle) if len(needle) >= 3 else None

    candidates: set[int] = set()
    if expr := compile_node(node, render_substring):
        candidates.update(db.substring_search(expr, filters, _FUZZY_CANDIDATES))
    if expr := compile_node(node, render_words):
        candidates.update(pk for pk, _ in db.fts_search(expr, filters, _FUZZY_CANDIDATES))
    candidates -= seen

    rows = db.rank_rows(sorted(candidates))
    out: list[tuple[float, int, dict[str, Any]]] = []
    for pk, row in rows.items():
        per_term = _term_similarities(all_terms(node), row.text)
        similarity = _evaluate(node, per_term, threshold)
        if similarity is None or similarity == _NEUTRAL:
            continue
        imp, rec = _nudges(row, now)
        explain = {
            "similarity": round(similarity, 4),
            "terms": {t: {"similarity": round(s, 4), "matched": how} for t, (s, how) in per_term.items()},
            "importance_nudge": round(imp, 4),
            "recency_nudge": round(rec, 4),
        }
        out.append((similarity * (1 + imp) * (1 + rec), pk, explain))
    out.sort(key=lambda r: -r[0])
    return out


def _evaluate(node: Node, sims: dict[str, tuple[float, str]], threshold: float) -> float | None:
    """Similarity of a memory to the expression: None if it does not match, _NEUTRAL if nothing in the
    expression is searchable. AND needs every term (mean), OR any (max), NOT excludes what is present."""
    if node.op == "TERM":
        assert node.term is not None
        if not node.term.indexable() and len(fold(node.term.text).strip()) < 3:
            return _NEUTRAL
        score = sims.get(node.term.text, (0.0, ""))[0]
        return score if score >= threshold else None
    if node.op == "NOT":
        left = _evaluate(node.children[0], sims, threshold)
        right = _evaluate(node.children[1], sims, _PRESENT)
        return None if right is not None and right != _NEUTRAL else left
    results = [_evaluate(c, sims, threshold) for c in node.children]
    scored = [r for r in results if r is not None and r != _NEUTRAL]
    if node.op == "AND":
        if any(r is None for r in results):
            return None
        return sum(scored) / len(scored) if scored else _NEUTRAL
    if scored:
        return max(scored)
    return _NEUTRAL if all(r == _NEUTRAL for r in results) else None


def _term_similarities(terms: list[Term], text: str) -> dict[str, tuple[float, str]]:
    """Best match of each query term in the text: 1.0 the word(s), 0.9 a literal substring, else the
    mean edit-distance ratio of its words to the closest words of the text."""
    from rapidfuzz import fuzz as rf_fuzz
    from rapidfuzz import process as rf_process

    folded = fold(text)
    doc_words = set(words(text))
    out: dict[str, tuple[float, str]] = {}
    for term in terms:
        needle = fold(term.text).strip()
        term_words = words(term.text)
        if term_words and all(w in doc_words for w in term_words) and (len(term_words) == 1 or needle in folded):
            out[term.text] = (1.0, "word")
        elif len(needle) >= 3 and needle in folded:
            out[term.text] = (0.9, "substring")
        elif term_words and doc_words:
            scores, matched = [], []
            for w in term_words:
                found = (
                    (w, 100.0, None) if w in doc_words else rf_process.extractOne(w, doc_words, scorer=rf_fuzz.ratio)
                )
                scores.append(found[1] / 100 if found else 0.0)
                matched.append(found[0] if found else "?")
            out[term.text] = (sum(scores) / len(scores), "typo:" + ",".join(matched))
        else:
            out[term.text] = (0.0, "none")
    return out


def why_line(explain: dict[str, Any]) -> str:
    """One line from a search hit's score breakdown, e.g. "bm25 4.21, cosine 0.63, session context +0.20"
    (the MCP tool's and the daemon's `why`)."""
    parts = []
    if explain.get("bm25") is not None:
        parts.append(f"bm25 {explain['bm25']:.3g}")
    if explain.get("cosine") is not None:
        parts.append(f"cosine {explain['cosine']:.2f}")
    fuzzy = explain.get("fuzzy") or (explain if "similarity" in explain else None)
    if fuzzy:
        near = []
        for term, info in fuzzy.get("terms", {}).items():
            how = info.get("matched", "")
            if how.startswith("typo:"):
                near.append(f"{term}~{how[5:]}")
            elif how == "substring":
                near.append(f"{term} inside a word")
        parts.append(f"fuzzy {fuzzy['similarity']:.2f}" + (f" ({'; '.join(near)})" if near else ""))
    for key, label in (("context", "session context"), ("boost", "date/tag boost")):
        if explain.get(key):
            parts.append(f"{label} {explain[key]:+.2f}")
    return ", ".join(parts)


MODES = ("hybrid", "lexical", "semantic")


def check_search_args(limit: int, offset: int, mode: str, threshold: float) -> None:
    """The argument checks of a search (one store's or every registered project's), before any work."""
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    if offset < 0:
        raise InvalidInput("offset cannot be negative")
    if not 0.0 <= threshold <= 1.0:
        raise InvalidInput(f"threshold must be between 0 and 1, got {threshold}")
