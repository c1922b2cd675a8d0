"""`[remote] ranker = "local"` (the default): the local store's ranking recipe (retrieval/fusion.py) over the
candidates Milvus retrieves.

Milvus does the retrieval, filtered there by project, category and tags: the BM25 leg (the query's content words
against `sparse`, its top POOL with their BM25 scores) and the dense leg (the query's vector against `dense`, its
top POOL with their cosines); then one query fetches the turns around those candidates in their sessions
(`session`, `seq`) with their vectors. The client blends the two legs as the local store does (z-scores
0.6/0.4), adds 0.4 × the base of each hit's neighbouring turns (±2), the month and tag boosts and the nudges:
`fusion.fuse` itself, so the two rankings cannot drift apart. A remote row's importance and dates are the publishing
project's claims, never this project's knowledge (core/provenance.py): its importance counts as neutral and its date
as no later than now before anything is fused, so a row claiming importance 99 or a date in 2099 ranks on its
content like any other.

Why not Milvus's own rankers (RRF, weighted): on LoCoMo-dev they score 0.2 below the local ranking
(benchmarks/README.md, Milvus). RRF keeps only ranks, throwing away how far the top BM25 hit is ahead of the
rest; neither ranker can see a memory's neighbouring turns, which is most of the local recipe's gain. A hybrid
request fused in Milvus also returns only the fused score, not the per-leg scores this recipe needs: hence two
single-leg searches (the same two requests a Milvus hybrid search runs) rather than one hybrid one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from codememory.core.dates import from_iso, to_iso
from codememory.core.provenance import NEUTRAL_IMPORTANCE
from codememory.remote.milvus import literal
from codememory.retrieval.fusion import DATE_BOOST, NEIGHBOUR_SPAN, TAG_BOOST, Sessions, fuse
from codememory.retrieval.lexical import nudges
from codememory.store.memories import RankRow
from codememory.text.query import ParsedQuery, words

if TYPE_CHECKING:
    from codememory.remote.milvus import MilvusRemote

WINDOW = 2 * NEIGHBOUR_SPAN  # neighbours of neighbours need a base too (fusion.fuse expands twice)
MAX_AROUND = 4096  # neighbour rows fetched per query, at most


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
) -> list[dict[str, Any]]:
    """The best `limit` rows, each with `score` the fused one; `text`: the words for BM25."""
    import numpy as np  # not at import: operations/retrieve imports this module on the CLI's start-up path

    rows: dict[int, dict[str, Any]] = {}
    keys: dict[str, int] = {}

    def pk(row: dict[str, Any]) -> int:
        key = f"{row.get('project')}/{row.get('memory_id')}"
        if key not in keys:
            keys[key] = len(keys)
            rows[keys[key]] = row
        return keys[key]

    lexical = {pk(r): r["score"] for r in remote.leg("sparse", text, expr, pool)} if text else {}
    cosine = {pk(r): r["score"] for r in remote.leg("dense", vector, expr, pool)}
    found = set(lexical) | set(cosine)
    query = np.asarray(vector, dtype=np.float32)
    query /= float(np.linalg.norm(query)) or 1.0
    for row in _around(remote, [rows[p] for p in found], expr):
        p = pk(row)
        if p not in cosine and row.get("dense") is not None:
            v = np.asarray(row["dense"], dtype=np.float32)
            cosine[p] = float(v @ query) / (float(np.linalg.norm(v)) or 1.0)
    sessions = Sessions.build(_sessions(rows))
    scored = fuse(found, lexical, cosine, sessions, _boosts(parsed, rows, now), neighbour_weight)
    ranked = []
    for p, (score, _parts) in scored.items():
        # A remote row was not written here: its importance is a claim (core/provenance.py), so it counts as neutral,
        # and its creation date as no later than now (it arrives with this query), as a pulled memory's does.
        imp, rec = nudges(RankRow(p, "", NEUTRAL_IMPORTANCE, _created(rows[p], now)), now)
        ranked.append((score + imp + rec, p))
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return [{**rows[p], "score": score} for score, p in ranked[:limit]]


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
