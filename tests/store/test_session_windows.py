"""The turns around a candidate in a long session are read a few rows each side through the session index, never
the whole session, and they are the same turns, in the same order, as a read of the whole session finds: ties on a
turn number fall back to the creation date and then the row key, and a member the filters drop is no turn."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codememory import Store
from codememory.store.session_windows import LONG_SESSION

SPAN = 4


def _import(store: Store, n: int) -> list[int]:
    dump = store.root / "bulk.jsonl"
    dump.write_text("".join(json.dumps({"text": f"turn {i} of the deploy log"}) + "\n" for i in range(n)))
    assert store.import_(dump).added == n
    return [r[0] for r in store.db.conn.execute("SELECT pk FROM memories ORDER BY pk")]


def _full_order(conn: sqlite3.Connection, session: str) -> list[int]:
    """The session as a whole read gives it (the order the runs must agree with)."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT pk FROM memories WHERE session_key = ? AND archived = 0 ORDER BY seq, created_at, pk", (session,)
        )
    ]


def _expected(order: list[int], pk: int) -> list[int]:
    i = order.index(pk)
    return order[max(0, i - SPAN) : i + SPAN + 1]


def _run_of(runs: list[list[int]], pk: int) -> list[int]:
    (run,) = [r for r in runs if pk in r]
    i = run.index(pk)
    return run[max(0, i - SPAN) : i + SPAN + 1]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.init(tmp_path)[0]


def test_a_long_sessions_turns_are_the_whole_reads_turns(store: Store) -> None:
    pks = _import(store, 400)
    conn = store.db.conn
    conn.execute("UPDATE memories SET session_key = 'long', seq = pk / 3")  # three memories share each turn number
    conn.execute("UPDATE memories SET created_at = '2026-01-0' || (10 - pk % 3) WHERE pk % 5 = 0")  # ties by date
    conn.execute("UPDATE memories SET archived = 1 WHERE pk % 7 = 0")  # filtered out: not a turn
    order = _full_order(conn, "long")
    assert len(order) > LONG_SESSION
    picked = [order[0], order[1], order[50], order[53], order[200], order[-2], order[-1]]
    runs = store.db.turns_around(picked, store.filters(), SPAN)
    for pk in picked:
        assert _run_of(runs, pk) == _expected(order, pk)
    for run in runs:  # each run is a stretch of consecutive turns
        start = order.index(run[0])
        assert run == order[start : start + len(run)]
    assert sum(len(r) for r in runs) < len(order) // 4  # not the session read whole
    archived = pks[6]  # pk 7: filtered out, so it has no turns around it either
    assert all(archived not in r for r in store.db.turns_around([archived], store.filters(), SPAN))


def test_a_short_session_is_read_whole(store: Store) -> None:
    pks = _import(store, 10)
    store.db.conn.execute("UPDATE memories SET session_key = 'short', seq = pk")
    assert store.db.turns_around([pks[0]], store.filters(), SPAN) == [pks]


def test_reading_around_a_candidate_does_not_grow_with_its_session(store: Store) -> None:
    """Virtual machine steps SQLite takes to find the turns around one memory in the middle of a session of 200 and
    of 3,000 members (a read of the whole session takes fifteen times as many in the longer one)."""
    _import(store, 3200)
    conn = store.db.conn
    conn.execute("UPDATE memories SET session_key = CASE WHEN pk <= 200 THEN 'short' ELSE 'long' END, seq = pk")
    steps = {"n": 0}

    def count() -> int:
        steps["n"] += 1
        return 0

    cost = {}
    for name, middle in (("short", 100), ("long", 1700)):
        store.db._sessions_seen = None  # nothing kept from the other session's read
        conn.set_progress_handler(count, 10)
        steps["n"] = 0
        runs = store.db.turns_around([middle], store.filters(), SPAN)
        conn.set_progress_handler(None, 0)
        assert runs == [list(range(middle - SPAN, middle + SPAN + 1))]
        cost[name] = steps["n"]
    assert cost["long"] <= 2 * cost["short"]
