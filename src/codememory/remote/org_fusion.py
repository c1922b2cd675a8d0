"""`[remote] ranker = "local"` (the default): the local store's ranking and relevance decision (retrieval/fusion.py,
retrieval/decision.py) over the candidates Milvus retrieves.

Milvus does the retrieval, filtered there by project, category and tags: the BM25 leg (the query's content words
against `sparse`, its top POOL) and the dense leg (the query's vector against `dense`, its top POOL with their
cosines); then one query fetches the turns around those candidates in their sessions (`session`, `seq`) with their
vectors. The client then builds each candidate's evidence as the local store does and orders and decides with the
same code, so the two cannot drift apart:

- meaning: the cosine as a z-score against the background sentences (the same model: a remote whose vectors come
  from another model is searched by keywords only, org_search.py);
- word coverage: the share of the query's content words the memory holds, each word weighing the same. The local
  store weighs words by their inverse document frequency; Milvus keeps BM25's document frequencies inside its index
  and none of its calls returns them (counting the memories that hold a word needs `TEXT_MATCH`, hence a collection
  built with `enable_match`), so the remote cannot tell a common word from a distinctive one, and the share of the
  query no memory holds is not known either (the decision's `unknown` term is left out). Coverage also stands for
  the keyword evidence in the ranking (Milvus's BM25 scores are on the collection's own scale);
- the month and tag boosts and the importance/recency nudges, as locally; but a remote row's importance and dates
  are the publishing project's claims, never this project's knowledge (core/provenance.py): its importance counts
  as neutral and its date as no later than now, so a row claiming importance 99 or a date in 2099 ranks on its
  content like any other.

A remote candidate is returned only when the decision keeps it (the embedding model's search bars): a question the
organisation's memory does not answer gets nothing from it.

Why not Milvus's own rankers (RRF, weighted): on LoCoMo-dev they score 0.2 below the local ranking
(benchmarks/README.md, Milvus). RRF keeps only ranks; neither ranker can see a memory's neighbouring turns, which
is much of the local recipe's gain, and a hybrid request fused in Milvus returns only the fused score, not the
per-leg scores the evidence needs: hence two single-leg searches (the same two requests a Milvus hybrid search
runs) rather than one hybrid one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codememory.core.dates import from_iso, to_iso
from codememory.core.provenance import NEUTRAL_IMPORTANCE
from codememory.remote.milvus import literal
from codememory.retrieval.decision import decide
from codememory.retrieval.evidence import Background, calibration_for, likelihood, standout_reference
from codememory.retrieval.fusion import DATE_BOOST, NEIGHBOUR_SPAN, TAG_BOOST, Evidence, Sessions, order
from codememory.retrieval.hybrid import RANK_WEIGHTS
from codememory.retrieval.query_words import TYPE_WORDS
from codememory.text.entity_vocabulary import vocabulary
from codememory.text.query import ParsedQuery, words

if TYPE_CHECKING:
    from codememory.embedding.base import Embedder
    from codememory.remote.milvus import MilvusRemote

WINDOW = 2 * NEIGHBOUR_SPAN  # neighbours of neighbours need a base too (fusion.order reads their base)
MAX_AROUND = 4096  # neighbour rows fetched per query, at most
_STEM = 4  # letters a held word must share with a query word at least (a crude stand-in for the local stemmer)


def fused(
    remote: MilvusRemote,
    parsed: ParsedQuery,
    text: str,
    vector: Sequence[float],
    expr: str,
    limit: int,
    pool: int,
    neighbour_weight: float,
    now: datetime,
    embedder: Embedder | None = None,
) -> list[dict[str, Any]]:
    """The best `limit` rows the relevance decision keeps, each with `score` (the ranking's) and `likelihood`;
    `text`: the words for BM25; `embedder`: the local model (its background sentences)."""
    import numpy as np  # not at import: operations/retrieve imports this module on the CLI's start-up path

    from codememory.embedding.relevance import background_stats

    rows: dict[int, dict[str, Any]] = {}
    keys: dict[str, int] = {}

    def pk(row: dict[str, Any]) -> int:
        key = f"{row.get('project')}/{row.get('memory_id')}"
        if key not in keys:
            keys[key] = len(keys)
            rows[keys[key]] = row
        return keys[key]

    lexical = {pk(r) for r in remote.leg("sparse", text, expr, pool)} if text else set()
    cosine = {pk(r): r["score"] for r in remote.leg("dense", vector, expr, pool)}
    found = lexical | set(cosine)
    query = np.asarray(vector, dtype=np.float32)
    query /= float(np.linalg.norm(query)) or 1.0
    for row in _around(remote, [rows[p] for p in found], expr):
        p = pk(row)
        if p not in cosine and row.get("dense") is not None:
            v = np.asarray(row["dense"], dtype=np.float32)
            cosine[p] = float(v @ query) / (float(np.linalg.norm(v)) or 1.0)
    stats = background_stats(embedder, query) if embedder is not None else None
    background = Background(*stats) if stats is not None else None
    content = parsed.content_words() or list(dict.fromkeys(w for t in parsed.terms for w in words(t.text)))
    boosts = _boosts(parsed, rows, now)
    evidence = {}
    for p, row in rows.items():
        coverage = word_share(str(row.get("text") or ""), content, _entity_types(row))
        # A remote row was not written here: its importance is a claim (core/provenance.py), so it counts as neutral,
        # and its creation date as no later than now (it arrives with this query), as a pulled memory's does.
        evidence[p] = Evidence(
            keyword=coverage,
            meaning=background.z(cosine[p]) if background is not None and p in cosine else None,
            coverage=coverage,
            boost=boosts.get(p, 0.0),
            importance=NEUTRAL_IMPORTANCE,
            created_at=_created(row, now),
        )
    sessions = Sessions.build(_sessions(rows))
    weights = replace(RANK_WEIGHTS, neighbour=neighbour_weight)
    cal = calibration_for(getattr(embedder, "name", None) if background is not None else None)
    reference = standout_reference(e.meaning for e in evidence.values())
    plain = cal.background or cal.weights  # the likelihood against the background alone (decision.Bars.strong)
    weights_now = cal.weights_for(False, measured=reference is not None)  # as the local store's search (hybrid.py)
    bars = cal.search if reference is not None or cal.plain is None else cal.plain
    ranked = [
        (
            score,
            p,
            "remote",
            {
                "likelihood": likelihood(evidence[p].coverage, evidence[p].meaning, weights_now, reference),
                "background_likelihood": likelihood(evidence[p].coverage, evidence[p].meaning, plain),
            },
        )
        for score, p, _parts in order(evidence, found, sessions, weights, now, 1.0)
    ]
    kept, _held = decide(ranked, bars)
    return [{**rows[p], "score": score, "likelihood": explain["likelihood"]} for score, p, _, explain in kept[:limit]]


def word_share(text: str, content: Sequence[str], types: frozenset[str] = frozenset()) -> float:
    """The share of the query's content words (each weighing the same) that the text holds, a word counting as held
    when the text has a word sharing its first letters (all but two, at least four): "retries" for "retry"; a word
    naming a kind of thing ("database") is held by a row naming an entity of that kind (`types`), as in the local
    store (retrieval/query_words.TYPE_WORDS)."""
    if not content:
        return 0.0
    held = set(words(text))
    found = 0
    for word in content:
        stem = word[: max(_STEM, len(word) - 2)]
        alike = len(word) >= _STEM and any(h.startswith(stem) for h in held)
        if word in held or alike or TYPE_WORDS.get(word) in types:
            found += 1
    return found / len(content)


def _entity_types(row: dict[str, Any]) -> frozenset[str]:
    """The kinds of the row's entities the vocabulary knows (a remote row carries the names, not the types)."""
    names = row.get("entities")
    if not isinstance(names, list):
        return frozenset()
    vocab = vocabulary()
    terms = (vocab.lookup(name.lower()) for name in names if isinstance(name, str))
    return frozenset(term.type for term in terms if term is not None)


def _around(remote: MilvusRemote, hits: list[dict[str, Any]], expr: str) -> list[dict[str, Any]]:
    """The rows within WINDOW turns of each hit in its session (and passing the search's filter), with vectors."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for row in hits:
        seq = row.get("seq")
        if row.get("session") and isinstance(seq, int) and seq >= 0:
            spans.setdefault((str(row["project"]), str(row["session"])), []).append((seq - WINDOW, seq + WINDOW))
    if not spans:
        return []
    clauses = []
    for (project, session), found in spans.items():
        merged: list[list[int]] = []
        for lo, hi in sorted(found):
            if merged and lo <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        turns = " or ".join(f"(seq >= {lo} and seq <= {hi})" for lo, hi in merged)
        clauses.append(
            f"(project == {literal(project, 'project')} and session == {literal(session, 'session')} and ({turns}))"
        )
    where = f"({' or '.join(clauses)})" + (f" and ({expr})" if expr else "")
    return remote.rows(where, MAX_AROUND, vectors=True)


def _sessions(rows: dict[int, dict[str, Any]]) -> list[list[int]]:
    """Each session's rows in turn order (the order the local store keeps: seq, then creation)."""
    members: dict[tuple[str, str], list[tuple[int, str, int]]] = {}
    for p, row in rows.items():
        seq = row.get("seq")
        if row.get("session") and isinstance(seq, int) and seq >= 0:
            key = (str(row.get("project")), str(row["session"]))
            members.setdefault(key, []).append((seq, str(row.get("created_at") or ""), p))
    return [[p for *_, p in sorted(found)] for found in members.values()]


def _created(row: dict[str, Any], now: datetime) -> str:
    """A remote row's creation date as ranking may read it: its own, clamped to now (a date in 2099 is a claim)."""
    try:
        created = from_iso(str(row.get("created_at") or ""))
    except ValueError:
        return ""
    return to_iso(min(created, now))


def _boosts(parsed: ParsedQuery, rows: dict[int, dict[str, Any]], now: datetime) -> dict[int, float]:
    """As retrieval/hybrid.py: the month (and year) the query names, against the row's date clamped to now; a query
    word among the tags."""
    boosts: dict[int, float] = {}
    month, year = parsed.month()
    query_words = {w for t in parsed.terms for w in words(t.text)}
    for p, row in rows.items():
        if month is not None:
            try:
                created = from_iso(_created(row, now))
            except ValueError:
                created = None
            if created and created.month == month and (year is None or created.year == year):
                boosts[p] = DATE_BOOST
        if query_words and query_words & {str(t).lower() for t in row.get("tags") or []}:
            boosts[p] = boosts.get(p, 0.0) + TAG_BOOST
    return boosts
