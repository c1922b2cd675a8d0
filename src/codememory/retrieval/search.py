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

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from codememory.core.bounded_input import check_query
from codememory.core.dates import now_utc
from codememory.core.model import Memory
from codememory.core.result import FLATTEN, OMIT_NONE, Result, json_key
from codememory.embedding.semantic import NOT_CONFIGURED, VECTORS_LOADING
from codememory.errors import InvalidInput
from codememory.retrieval.decision import Bars, decide
from codememory.retrieval.fusion import LEXICAL_POOL
from codememory.retrieval.hybrid import hybrid_ranking
from codememory.retrieval.lexical import Ranked, has_unknown_word, keyword_ranking, lexical_ranking, matched_words
from codememory.retrieval.usefulness import reorder
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.privacy import without_redactions
from codememory.text.query import ParsedQuery, parse_query, words

if TYPE_CHECKING:
    from codememory.embedding.semantic import Semantic
    from codememory.retrieval.second_opinion import Form

DEFAULT_THRESHOLD = 0.7


@dataclass
class Hit(Result):
    """A memory found by a search (its JSON: the memory's fields, then score, match, fuzzy, explain)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"fuzzy": bool}

    memory: Memory = field(metadata=FLATTEN)
    score: float
    match: str  # "exact", "partial", "semantic", "context" or "fuzzy"
    explain: dict[str, Any] = field(default_factory=dict)
    held_back: bool = False  # shown only because held-back results were asked for (`search --all`)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "score": round(self.score, 6),
            "match": self.match,
            "fuzzy": self.match == "fuzzy",
            "held_back": self.held_back,
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
    # with an entity filter (CLI): imported memories whose entities are unread, so not matched by them
    entities_pending: int | None = field(default=None, metadata=OMIT_NONE)
    held_back: int = 0  # candidates the relevance decision left out (not likely relevant enough)

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
            "held_back": self.held_back,
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
    held_back: Ranked = field(default_factory=list)  # candidates the relevance decision left out, best first
    ranked: Ranked | None = None  # every candidate in ranking order, before the decision (None: same as order)


def relevance_bars(
    model: str | None, *, inject: bool = False, configured: float = -1.0, order: Ranked | None = None
) -> Bars:
    """The decision's bars (retrieval/decision.py) for results ranked with this embedding model (None: keywords
    only): search's, or the stricter ones for what is put into an agent's context unasked; search's for the
    background-only likelihood when `order` (the ranking) could not measure standout (a store of a few memories).
    `configured` (`[search] min_likelihood`, when ≥ 0) replaces search's: one fixed bar every result must reach."""
    from codememory.retrieval.evidence import calibration_for

    cal = calibration_for(model)
    bars = cal.inject if inject else cal.search
    if not inject and cal.plain is not None and order and all(e[3].get("standout") is None for e in order):
        bars = cal.plain
    if configured >= 0 and not inject:
        bars = Bars(configured, configured)
    return bars


def with_keyword_likelihood(
    db: Database, parsed: ParsedQuery, order: Ranked, phrases: list[ParsedQuery] | None = None
) -> Ranked:
    """A keyword-only ranking's entries with their word coverage and likelihood (evidence.py, no meaning): the share
    of the query's word weight each holds (the best over `phrases`, when the query is several), a typo match's
    similarity. Explicit query syntax is matched strictly and left undecided: its matches are what was asked for."""
    from codememory.retrieval.evidence import calibration_for, likelihood
    from codememory.retrieval.hybrid import typo_coverage
    from codememory.retrieval.query_words import held_words, query_words

    if parsed.explicit or not order:
        return order
    per_phrase = [query_words(db, p) for p in (phrases if phrases and len(phrases) > 1 else [parsed])]
    held = held_words(db, [w for q in per_phrase for w in q.searched()], [pk for _, pk, _, _ in order])
    cal = calibration_for(None)
    out: Ranked = []
    for score, pk, match, explain in order:
        coverage = max(q.coverage(held.get(pk, ())) for q in per_phrase)
        if "similarity" in explain:
            coverage = max(coverage, typo_coverage(explain, DEFAULT_THRESHOLD))
        likely = likelihood(coverage, None, cal.weights)
        out.append((score, pk, match, {**explain, "coverage": coverage, "likelihood": likely}))
    return out


def query_unknown_share(db: Database, parsed: ParsedQuery, phrases: list[ParsedQuery] | None = None) -> float:
    """How much of the query's word weight is in no memory (query_words.QueryWords.unknown_share); for several
    phrases, the best known of them."""
    from codememory.retrieval.query_words import query_words

    queries = [p for p in (phrases or [parsed]) if p.terms]
    return min((query_words(db, p).unknown_share() for p in queries), default=0.0)


def with_asked_value(db: Database, query: str, order: Ranked) -> Ranked:
    """The entries with a lower likelihood (evidence.without_value) where the question asks for a number, a place or a
    person (text/asks.py) and the memory holds none; their explain says what they lack (`lacks`). A memory holding
    every word of the question is left as it is."""
    from codememory.retrieval.evidence import without_value
    from codememory.text.asks import asked_value, holds_value

    kind = asked_value(query)
    decided = [pk for _, pk, _, explain in order if explain.get("likelihood") is not None]
    if kind is None or not decided:
        return order
    texts = dict(db.texts(f"m.pk IN ({','.join('?' * len(decided))})", decided))
    out: Ranked = []
    for score, pk, match, explain in order:
        text = texts.get(pk)
        # a memory holding every word of the question comes first (a keyword hit), whatever value it holds or not
        whole = match == "exact" or (explain.get("coverage") or 0.0) >= 1.0
        if text is None or explain.get("likelihood") is None or whole or holds_value(kind, text):
            out.append((score, pk, match, explain))
            continue
        lowered: dict[str, Any] = {
            name: without_value(explain[name]) for name in ("likelihood", "background_likelihood") if name in explain
        }
        out.append((score, pk, match, {**explain, **lowered, "lacks": kind}))
    return out


def _decided(
    ranking: Ranking,
    db: Database,
    bars: Bars,
    phrases: list[ParsedQuery] | None = None,
    asked: str | None = None,
    model: str | None = None,
    opinion: tuple[list[str], Form] | None = None,
) -> Ranking:
    """The ranking with the relevance decision applied: `order` what is shown, `held_back` the rest, `ranked` all.
    `asked`: the question, when what it asks for counts (search's, not what is put into an agent's context);
    `model`: the vector space that ranked it (the second opinion was chosen beside the default model's);
    `opinion`: the phrases the second model judges and its form, for what is put into an agent's context."""
    everything = ranking.order
    if ranking.mode == "lexical":
        everything = with_keyword_likelihood(db, ranking.parsed, everything, phrases)
    if opinion is not None and ranking.mode != "lexical" and not ranking.parsed.explicit:
        from codememory.retrieval.second_opinion import chosen_beside, with_second_opinion

        if chosen_beside(model):
            everything = with_second_opinion(db, opinion[0], everything, opinion[1])
    if asked is not None and not ranking.parsed.explicit:
        everything = with_asked_value(db, asked, everything)
        if ranking.mode != "lexical":  # numpy: loaded for meaning anyway (a keyword-only search loads neither)
            from codememory.retrieval.second_opinion import chosen_beside, with_second_opinion

            if chosen_beside(model):
                everything = with_second_opinion(db, asked, everything)
    unknown = query_unknown_share(db, ranking.parsed, phrases) if bars.unknown else 0.0
    kept, held = decide(everything, bars, unknown)
    return replace(ranking, order=kept, held_back=held, ranked=everything)


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
) -> Ranking:
    """Every candidate for a query, best first (no memories loaded), split by the relevance decision into what is
    shown (`order`) and what is held back. See `search`. A `-word` exclusion leaves out every candidate holding the
    word, however it was found (meaning and typo matches included), before anything is decided."""
    parsed = parse_query(query)
    ranking = _rank(db, parsed, filters, want, fuzzy, threshold, semantic, mode)
    excluded = parsed.excluded_fts()
    if excluded and ranking.order:
        holding = db.fts_subset(excluded, [pk for _, pk, _, _ in ranking.order])
        ranking.order = [entry for entry in ranking.order if entry[1] not in holding]
    model = semantic.model if semantic is not None and ranking.mode != "lexical" else None
    configured = semantic.config.search.min_likelihood if semantic is not None else -1.0
    bars = relevance_bars(model, configured=configured, order=ranking.order)
    ranking = _decided(ranking, db, bars, asked=query, model=model)
    min_cosine = semantic.config.search.min_cosine if semantic is not None else -1.0
    if min_cosine >= 0:  # [search] min_cosine: found by meaning alone, a memory must also reach this cosine
        short = [
            e for e in ranking.order if e[2] in ("semantic", "context") and (e[3].get("cosine") or -1) < min_cosine
        ]
        if short:
            gone = {e[1] for e in short}
            position = {e[1]: i for i, e in enumerate(ranking.ranked or [])}
            held = sorted(ranking.held_back + short, key=lambda e: position.get(e[1], 0))
            ranking = replace(ranking, order=[e for e in ranking.order if e[1] not in gone], held_back=held)
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
    if mode == "hybrid" and semantic.configured:  # with no model nothing is embedded: the pass would run alone
        db.prefetch_fts(parsed.keyword_fts(), LEXICAL_POOL)  # runs while the query is embedded
    gap = semantic.coverage_gap()  # first: a small gap it fills is ranked in this very search
    qvec = semantic.embed_query(embedding_text(parsed))
    if qvec is None or not semantic.vectors_ready():
        reason = semantic.reason if qvec is None else VECTORS_LOADING
        if strict:
            return Ranking(strict, False, fuzzy_used, "lexical", reason, parsed)
        order, more, fuzzy_used = keyword_ranking(db, parsed, filters, want, fuzzy, threshold, now)
        return Ranking(order, more, fuzzy_used, "lexical", reason, parsed)
    order, more, fuzzy_used = hybrid_ranking(db, parsed, filters, want, fuzzy, threshold, semantic, [qvec], now, mode)
    if strict:
        seen = {pk for _, pk, _, _ in strict}
        order = strict + [entry for entry in order if entry[1] not in seen]
    return Ranking(order, more, fuzzy_used, "semantic" if mode == "semantic" else "hybrid", gap, parsed)


def rank_phrases(
    db: Database,
    phrases: list[str],
    filters: Filters,
    *,
    want: int,
    semantic: Semantic | None,
    inject: bool = True,
    opinion: Form | None = None,
) -> Ranking:
    """One hybrid pass for several phrases describing one need (a query expansion): keywords of all
    phrases ORed, each phrase's vector searched, a memory's cosine its best over the phrases; decided with the
    injection bars (`inject`, else search's), the second model's opinion of the phrases in this `opinion` form
    moving the likelihoods first (None: no opinion)."""
    phrases, parsed = _phrases_query(phrases)
    each = [parse_query(" ".join(words(p))) for p in phrases]
    qvecs = []
    gap = None
    if semantic is not None and semantic.configured and parsed.terms:
        db.prefetch_fts(parsed.keyword_fts(), LEXICAL_POOL)  # runs while the phrases are embedded
        gap = semantic.coverage_gap()  # first: a small gap it fills is ranked in this very call
        qvecs = semantic.embed_queries(phrases) or []  # one model call for those not embedded before
    loading = bool(qvecs) and semantic is not None and not semantic.vectors_ready()
    if loading:
        qvecs = []
    if not qvecs:
        # Keywords only: any content word counts (ORed, BM25-ranked); an AND of every word of several
        # phrases would almost never match.
        now = now_utc()
        typo = has_unknown_word(db, parsed)  # any-word matching leaves few gaps; fuzzy only for unknown words
        order, more, fuzzy_used = lexical_ranking(
            db, parsed, filters, want, typo, DEFAULT_THRESHOLD, now, parsed.keyword_fts()
        )
        reason = VECTORS_LOADING if loading else (semantic.reason if semantic is not None else None) or NOT_CONFIGURED
        ranking = Ranking(order, more, fuzzy_used, "lexical", reason, parsed)
        return _decided(ranking, db, relevance_bars(None, inject=inject), each)
    assert semantic is not None  # vectors exist only with a working embedder
    order, more, fuzzy_used = hybrid_ranking(
        db, parsed, filters, want, None, DEFAULT_THRESHOLD, semantic, qvecs, now_utc(), "hybrid", each, inject
    )
    ranking = Ranking(order, more, fuzzy_used, "hybrid", gap, parsed)
    bars = relevance_bars(semantic.model, inject=inject, order=order)
    judged = (phrases, opinion) if opinion is not None else None
    return _decided(ranking, db, bars, each, model=semantic.model, opinion=judged)


def _phrases_query(phrases: list[str]) -> tuple[list[str], ParsedQuery]:
    """The phrases of a query expansion as ranked (redactions dropped) and their words as one query."""
    phrases = [q for q in (without_redactions(p).strip() for p in phrases) if q] or phrases
    return phrases, parse_query(" ".join(w for p in phrases for w in words(p)))


def prefetch_phrases(db: Database, phrases: list[str]) -> None:
    """Start the keyword pass `rank_phrases(phrases)` will need (a caller about to rank several expansions
    starts them all, each then runs while another is embedded or ranked)."""
    parsed = _phrases_query(phrases)[1]
    if parsed.terms:
        db.prefetch_fts(parsed.keyword_fts(), LEXICAL_POOL)


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
    show_held_back: bool = False,
) -> tuple[SearchResult, list[int]]:
    """Run a search; returns the result and the row keys of the hits (for access stats).

    mode "hybrid" fuses keywords and meaning for plain words; a query using OR/NOT/"phrases"/prefix*/
    parentheses is matched strictly by keywords first, and (unless it has a NOT) related memories fill
    the rest of the list. "lexical" uses keywords only, "semantic" meaning only. Without a working
    embedder every mode falls back to lexical and the result says `degraded`.

    A result is returned only when the relevance decision keeps it (retrieval/decision.py); the others are counted
    in `held_back`, and with `show_held_back` they follow the returned ones on the page, each marked `held_back`."""
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
    )
    parsed = ranking.parsed
    held = {pk for _, pk, _, _ in ranking.held_back} if show_held_back else set()
    # what agents did with each (retrieval/usefulness.py) reorders what is shown; what was held back follows it
    shown = reorder(db, ranking.order)
    order = shown + ranking.held_back if show_held_back else shown
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
        Hit(memories[pk], score, match, _explained(explain, notes.get(pk), matched.get(pk)), pk in held)
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
        held_back=len(ranking.held_back),
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
