"""The turns around a few memories of a long session, read through the session index a few rows each side instead
of the whole session (a session imported from a long transcript holds a thousand memories or more, and ranking
only ever looks a few turns away from a candidate).

Turn order is (seq, created_at, pk), the order `MemoryRows.turns_around` reads whole sessions in; a session is
read this way only when every member has a turn number (seq), so that the index walks the same order."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from codememory.store.connection import chunks

LONG_SESSION = 64  # members (filtered or not) past which a session is read around its candidates, not whole

TurnKey = tuple[int, str, int]  # (seq, created_at, pk): a member's place in its session

_BEFORE = (
    "SELECT m.seq, m.created_at, m.pk FROM memories m WHERE m.session_key = ? AND m.seq <= ? "
    "AND (m.seq, m.created_at, m.pk) < (?, ?, ?) AND {where} "
    "ORDER BY m.seq DESC, m.created_at DESC, m.pk DESC LIMIT ?"
)
_AFTER = (
    "SELECT m.seq, m.created_at, m.pk FROM memories m WHERE m.session_key = ? AND m.seq >= ? "
    "AND (m.seq, m.created_at, m.pk) > (?, ?, ?) AND {where} "
    "ORDER BY m.seq, m.created_at, m.pk LIMIT ?"
)


def long_sessions(conn: sqlite3.Connection, keys: Sequence[str]) -> dict[str, bool]:
    """session -> whether it is read around its candidates: more than LONG_SESSION members (filtered or not), each
    with a turn number. Both are asked of the session index and stop early, whatever the session's length."""
    out: dict[str, bool] = {}
    for chunk in chunks(list(keys)):
        values = ",".join("(?)" for _ in chunk)
        for key, count, unnumbered in conn.execute(
            f"WITH k(key) AS (VALUES {values}) SELECT k.key, "
            "(SELECT COUNT(*) FROM (SELECT 1 FROM memories m WHERE m.session_key = k.key LIMIT ?)), "
            "EXISTS (SELECT 1 FROM memories m WHERE m.session_key = k.key AND m.seq IS NULL) FROM k",
            (*chunk, LONG_SESSION + 1),
        ):
            out[key] = count > LONG_SESSION and not unnumbered
    return out


def windows(
    conn: sqlite3.Connection, session: str, pks: Sequence[int], where: str, params: Sequence[Any], span: int
) -> list[list[int]]:
    """Runs of consecutive members (passing `where`) of one session, in turn order, that together hold each of
    `pks` (those passing `where`) with the `span` members before and after it. Runs that share a member are one."""
    places: dict[int, TurnKey] = {}
    for chunk in chunks(list(dict.fromkeys(pks))):
        for seq, created, pk in conn.execute(
            f"SELECT m.seq, m.created_at, m.pk FROM memories m WHERE m.pk IN ({','.join('?' * len(chunk))}) "
            f"AND m.session_key = ? AND m.seq IS NOT NULL AND {where}",
            (*chunk, session, *params),
        ):
            places[pk] = (seq, created, pk)
    runs: list[list[TurnKey]] = []
    for place in sorted(places.values()):
        seq, created, pk = place
        before = conn.execute(_BEFORE.format(where=where), (session, seq, seq, created, pk, *params, span)).fetchall()
        after = conn.execute(_AFTER.format(where=where), (session, seq, seq, created, pk, *params, span)).fetchall()
        runs.append([*(tuple(r) for r in reversed(before)), place, *(tuple(r) for r in after)])
    return [[pk for _, _, pk in run] for run in _merged(runs)]


def _merged(runs: list[list[TurnKey]]) -> list[list[TurnKey]]:
    """Runs of one order merged where they overlap (each run is a stretch of consecutive members, so a run that
    starts inside another one continues it)."""
    out: list[list[TurnKey]] = []
    for run in sorted(runs, key=lambda r: r[0]):
        if out and run[0] <= out[-1][-1]:
            last = out[-1]
            out[-1] = last + [k for k in run if k > last[-1]]
        else:
            out.append(list(run))
    return out
