"""Hybrid ranking: keywords, typo corrections and meaning (each query vector's nearest memories) fused with the
memories around them in their session (`fusion`), with date and tag boosts and the importance/recency nudges."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codememory.core.blas_threads import one_blas_thread
from codememory.core.dates import from_iso
from codememory.retrieval.evidence import (
    Background,
    Weights,
    calibration_for,
    keyword_evidence,
    likelihood,
    standout_reference,
)
from codememory.retrieval.fusion import (
    DATE_BOOST,
    LEXICAL_POOL,
    NEIGHBOUR_SPAN,
    SEMANTIC_POOL,
    TAG_BOOST,
    Evidence,
    RankWeights,
    Sessions,
    expand,
    newer_supersedes,
    order,
    updates_first,
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
from codememory.retrieval.query_words import held_words, query_words
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.store.memories import RankRow
from codememory.text.asks import asked_categories, category_fit
from codememory.text.changes import states_change, subject_words
from codememory.text.query import STOPWORDS, ParsedQuery, words

RANK_WEIGHTS = RankWeights()  # the neighbour weight comes from [search] neighbour_weight
# An update and the memory it updates share a word or number, not of a path, held by at most this many memories
# (`_alike`).
UPDATE_SHARED = 3

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


@one_blas_thread()
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
    phrases: list[ParsedQuery] | None = None,
    inject: bool = False,
) -> tuple[Ranked, bool, bool]:
    """Several query vectors (one per phrase of a query expansion, `phrases` parsed) count by their best evidence,
    and so does word coverage (the best over the phrases: a memory about one phrase is not diluted by the words of
    the others). Every entry's explain carries `keyword`, `coverage`, `meaning` and `standout` (evidence.py),
    `likelihood` (with the weights of what is put into an agent's context unasked when `inject`) and `all_words` (it
    holds every content word of the query), which the relevance decision reads (retrieval/decision.py).

    Its vector products (the scan, the candidates' cosines, the background) run on one BLAS thread
    (core/blas_threads.py): each is small, and waking a second thread for it costs more than it saves."""
    cal = calibration_for(semantic.model)
    weights = cal.weights_for(inject)
    plain = cal.background if cal.background is not None and not inject else None
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
        reference = standout_reference(meaning.values())
        weights = cal.weights_for(inject, measured=reference is not None)
        ranked: Ranked = []
        for pk, cos in semantic_hits.items():
            imp, rec = nudges(rows[pk], now)
            explain: dict[str, Any] = {
                "cosine": round(cos, 4),
                "meaning": meaning.get(pk),
                "standout": _standout(meaning.get(pk), reference),
                "keyword": 0.0,
                "likelihood": likelihood(0.0, meaning.get(pk), weights, reference),
                **_background_likelihood(0.0, meaning.get(pk), plain),
                "coverage": 0.0,
                "all_words": False,
                "importance_nudge": round(imp, 4),
                "recency_nudge": round(rec, 4),
            }
            score = demoted(cos + imp + rec, rows[pk], db.stale_factor)
            ranked.append((score, pk, "semantic", stale_explain(explain, rows[pk], db.stale_factor)))
        ranked.sort(key=lambda r: -r[0])
        return ranked, False, False

    found = gather(
        db,
        parsed,
        filters,
        fuzzy,
        threshold,
        semantic,
        qvecs,
        bgs,
        semantic_hits,
        meaning,
        now,
        phrases=phrases,
        kinds=not inject and not (phrases and len(phrases) > 1),
    )
    found.meaning_hits = set(semantic_hits)
    rank_weights = replace(RANK_WEIGHTS, neighbour=semantic.config.search.neighbour_weight)
    ordered = order(found.evidence, found.pool, found.sessions, rank_weights, now, db.stale_factor)
    alike, updates, restates = _alike(db, semantic, ordered, found.evidence, rank_weights.head, updates_too=not inject)
    ordered = newer_supersedes(ordered, found.evidence, alike, rank_weights)
    if not inject:  # measured on search; what is put into an agent's context unasked keeps its own measured order
        ordered = updates_first(ordered, found.evidence, updates, rank_weights, restates)
    # every candidate counts for the store's k-th nearest memory: the pool holds the nearest ones by meaning
    reference = standout_reference(e.meaning for e in found.evidence.values())
    weights = cal.weights_for(inject, measured=reference is not None)
    likely = {
        pk: likelihood(found.evidence[pk].coverage, found.evidence[pk].meaning, weights, reference)
        for _, pk, _ in ordered
    }
    # the newer of near-duplicates, or an update repeating the old value, is as likely relevant as the memories it
    # passed; a change note that passed a memory only on its subject (`updates`) keeps its own likelihood
    for _, pk, parts in ordered:
        if isinstance(parts.get("supersedes"), list):
            likely[pk] = max(likely[pk], *(likely[o] for o in parts.pop("supersedes")))
            parts["supersedes"] = True
        if isinstance(parts.get("updates"), list):
            parts["updates"] = True
    ranked = []
    for score, pk, parts in ordered:
        e = found.evidence[pk]
        if pk in found.fuzzy:
            match = "fuzzy"
        elif pk in found.bm25 or e.keyword > 0:
            match = "partial"  # upgraded to "exact" for the returned page when every term matches
        else:
            match = "semantic" if pk in found.meaning_hits else "context"
        explain = {
            "bm25": found.bm25.get(pk),
            "cosine": found.cosine.get(pk),
            "keyword": e.keyword,
            "meaning": e.meaning,
            "standout": _standout(e.meaning, reference),
            "coverage": e.coverage,
            "likelihood": likely[pk],
            **_background_likelihood(e.coverage, e.meaning, plain),
            "all_words": pk in found.all_words,
            **parts,
        }
        if pk in found.fuzzy:
            explain["fuzzy"] = found.fuzzy[pk]
        if e.stale and db.stale_factor < 1.0:
            explain["stale_factor"] = db.stale_factor
        ranked.append((score, pk, match, explain))
    return ranked, False, found.fuzzy_used


def _background_likelihood(coverage: float, meaning: float | None, plain: Weights | None) -> dict[str, float]:
    """The likelihood against the background alone (no standout), when search's calibration has one."""
    return {} if plain is None else {"background_likelihood": likelihood(coverage, meaning, plain)}


def _standout(meaning: float | None, reference: float | None) -> float | None:
    return meaning - reference if meaning is not None and reference is not None else None


def _alike(
    db: Database,
    semantic: Semantic,
    ranked: list[tuple[float, int, dict[str, Any]]],
    evidence: dict[int, Evidence],
    head: int,
    *,
    updates_too: bool = True,
) -> tuple[Callable[[int, int], bool], Callable[[int, int], bool], Callable[[int, int], bool]]:
    """Whether two of the first `head` memories say nearly the same thing (their vectors are as close as the memories
    consolidation compares: the model's `Scale.cluster`, embedding/relevance.py), and whether a memory saying it
    changed something updates one of them: their vectors are as close as an update and what it updates
    (`Scale.update`) and they share a rare word or number (held by at most `UPDATE_SHARED` memories of the store: the
    old value, the setting's name, "Guardian", "pg14"), not only a subject. Words of paths and file names do not
    count (text/changes.py `subject_words`): two notes naming the same file need not be about the same setting.
    Vectors are read for those memories only."""
    from codememory.embedding.relevance import scale_for

    config = semantic.config
    scale = scale_for(
        semantic.model,
        dedup=config.dedup.cosine,
        links=config.links.cosine,
        cluster=config.consolidation.similarity_threshold,
    )
    first = [pk for _, pk, _ in ranked[:head]]
    changes = [pk for _, pk, _ in ranked if evidence[pk].changes] if updates_too else []
    vectors = semantic.vectors(list(dict.fromkeys(first + changes)))

    def cosine(a: int, b: int) -> float:
        va, vb = vectors.get(a), vectors.get(b)
        return float(va @ vb) if va is not None and vb is not None else -1.0

    subjects: dict[int, set[str]] = {}  # a memory is compared with several: its words are read once
    rare: dict[tuple[str, ...], bool] = {}

    def subject(pk: int) -> set[str]:
        if pk not in subjects:
            subjects[pk] = subject_words(evidence[pk].text)
        return subjects[pk]

    def shares_rare_word(a: int, b: int, *, numbers: bool = False) -> bool:
        shared = (subject(a) & subject(b)) - STOPWORDS
        if numbers:
            shared = {w for w in shared if any(c.isdigit() for c in w)}
        if not shared:
            return False
        key = tuple(sorted(shared))
        if key not in rare:
            rare[key] = min(db.document_counts(list(key))[1].values()) <= UPDATE_SHARED
        return rare[key]

    def updates(a: int, b: int) -> bool:
        return cosine(a, b) >= scale.update and shares_rare_word(a, b)

    def restates(a: int, b: int) -> bool:
        """Nearly the same, or an update repeating the old value ("upgraded to 1.29 (1.27 went …)")."""
        return cosine(a, b) >= scale.cluster or shares_rare_word(a, b, numbers=True)

    return (lambda a, b: cosine(a, b) >= scale.cluster), updates, restates


@dataclass
class Gathered:
    """Everything one hybrid query found, before it is ordered (retrieval/fusion.py)."""

    evidence: dict[int, Evidence]  # the pool, its session neighbours and theirs
    pool: set[int]  # found by keywords, a typo correction or meaning
    sessions: Sessions
    bm25: dict[int, float]
    cosine: dict[int, float]
    fuzzy: dict[int, dict[str, Any]]  # typo-tolerant matches: their explain
    all_words: set[int]  # hold every content word of the query
    fuzzy_used: bool
    meaning_hits: set[int] = field(default_factory=set)  # found by meaning (the others: keywords, or context)


def gather(
    db: Database,
    parsed: ParsedQuery,
    filters: Filters,
    fuzzy: bool | None,
    threshold: float,
    semantic: Semantic,
    qvecs: list[Vectors],
    bgs: list[Background | None],
    semantic_hits: dict[int, float],
    meaning: dict[int, float],
    now: datetime,
    *,
    phrases: list[ParsedQuery] | None = None,
    kinds: bool = False,
) -> Gathered:
    """Keyword, typo and meaning evidence for the candidates: the keyword and meaning pools (`semantic_hits`, with
    `meaning` their z-scores) and the memories around them in their sessions; with `kinds` (a search's own query,
    not what is put into an agent's context unasked: a prompt is no question to read a form from), each memory's fit
    to the kind of memory the query's form asks for (text/asks.py)."""
    qw = query_words(db, parsed)
    weights = qw.fts_weights()
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
    # ranking looks at most two spans from the pool: the neighbours' neighbours are candidates too (their own base
    # feeds the context term), and it asks for neighbours only within one span of the pool
    sessions = Sessions.build(db.turns_around(sorted(pool), filters, 2 * NEIGHBOUR_SPAN))
    candidates = expand(expand(pool, sessions, NEIGHBOUR_SPAN), sessions, NEIGHBOUR_SPAN)
    cosine = dict(semantic_hits)
    missing = [pk for pk in candidates if pk not in cosine]
    for qvec, bg in zip(qvecs if missing else [], bgs, strict=False):
        for pk, cos in semantic.cosines(qvec, missing).items():
            cosine[pk] = max(cos, cosine.get(pk, -1.0))
            if bg is not None:
                meaning[pk] = max(bg.z(cos), meaning.get(pk, -math.inf))
    per_phrase = [query_words(db, p) for p in phrases] if phrases and len(phrases) > 1 else [qw]
    held = held_words(db, [w for q in [qw, *per_phrase] for w in q.searched()], sorted(candidates))
    rows = db.rank_rows(sorted(candidates))
    boosts = _boosts(db, parsed, rows)
    asked = asked_categories(parsed.raw) if kinds else None
    categories = db.categories_of(sorted(rows)) if asked is not None else {}
    evidence = {
        pk: Evidence(
            keyword=keyword.get(pk, 0.0),
            meaning=meaning.get(pk),
            coverage=max(
                max(q.coverage(held.get(pk, ())) for q in per_phrase),
                typo_coverage(fuzzy_hits[pk], threshold) if pk in fuzzy_hits else 0.0,
            ),
            boost=boosts.get(pk, 0.0),
            importance=row.importance,
            created_at=row.created_at,
            stale=row.stale,
            changes=states_change(row.text),
            text=row.text,
            kind_fit=category_fit(asked, categories.get(pk)),
        )
        for pk, row in rows.items()
    }
    all_words = {pk for pk, words_held in held.items() if set(qw.content) <= words_held}
    return Gathered(evidence, pool, sessions, bm25, cosine, fuzzy_hits, all_words, fuzzy_used)


def typo_coverage(fuzzy: dict[str, Any], threshold: float) -> float:
    """How surely a typo-tolerant match holds the words typed: its similarity from the threshold (0) up to an exact
    match (1); a correction just over the threshold ("mailhog" ~ "mail") is weak evidence."""
    return max(0.0, (float(fuzzy["similarity"]) - threshold) / max(1.0 - threshold, 1e-6))


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
