"""SQL for the injection ledger (table `injections`, migration 6): what proactive retrieval put in front of a
model, one row per injection, for `codememory explain`. Like database.py, the only place this table is
spoken to; codememory.operations.explain holds the rules (what a row says, how it is shown).

The ledger is bounded: each insert prunes the rows older than the newest `keep` (default `MAX_ROWS`), in
the same transaction, so it never grows without limit however long the daemon runs.

`memories` is a JSON list of `{id, why, tokens}`, which may end with one entry `{"call": {degraded_reason,
framing_tokens}}` that has no id: what the call as a whole says. Older readers skip it (they keep entries with
a memory id), rows written before it simply lack it, and the table needs no new column. `tokens` is the call's
total: its memories plus the framing around them when it was reported."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.store.rows import is_memory_id, is_stamp
from codememory.text.privacy import scrub, scrub_json

MAX_ROWS = 5000  # rows kept per store
MAX_QUERY_CHARS = 4000  # the stored query expansion is cut to this
MAX_REASON_CHARS = 500  # a degraded reason, as stored and as read back

_COLUMNS = "id, at, source, session_id, kind, query, memories, tokens, degraded"


@dataclass(frozen=True)
class InjectedMemory:
    id: str
    why: dict[str, Any]
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "why": self.why, "tokens": self.tokens}


@dataclass(frozen=True)
class Injection:
    id: int
    at: str
    source: str
    session_id: str | None
    kind: str  # "hud" (a /retrieve answer), "cold_start" (a /memory/recent block), "hook_start", "hook_prompt"
    query: str  # the scrubbed query expansion, one phrase per line ("" for a cold start)
    memories: list[InjectedMemory]
    tokens: int  # the call's total (memories + framing when reported)
    degraded: bool
    degraded_reason: str | None = None  # None in rows written before reasons were kept
    framing_tokens: int | None = None  # around the memories (tags, preamble, hints); None: not reported


def _entries(raw: object) -> list[Any]:
    try:
        items = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):  # untrusted: a committed memory.db may hold anything
        return []
    return items if isinstance(items, list) else []


def _call(items: list[Any]) -> tuple[str | None, int | None]:
    """(degraded reason, framing tokens) of a row's `call` entry; (None, None) without one (an older row)."""
    for item in items:
        call = item.get("call") if isinstance(item, dict) else None
        if isinstance(call, dict):
            reason, framing = call.get("degraded_reason"), call.get("framing_tokens")
            return (
                reason[:MAX_REASON_CHARS] if isinstance(reason, str) and reason else None,
                framing if isinstance(framing, int) and not isinstance(framing, bool) and framing >= 0 else None,
            )
    return None, None


def _memories(items: list[Any]) -> list[InjectedMemory]:
    out = []
    for item in items:
        if isinstance(item, dict) and is_memory_id(item.get("id")):
            why = item.get("why")
            tokens = item.get("tokens")
            out.append(
                InjectedMemory(
                    item["id"], why if isinstance(why, dict) else {}, tokens if isinstance(tokens, int) else 0
                )
            )
    return out


def _row(row: tuple[Any, ...]) -> Injection:
    pk, at, source, session_id, kind, query, memories, tokens, degraded = row
    items = _entries(memories)
    reason, framing = _call(items)
    return Injection(pk, at, source, session_id, kind, query, _memories(items), tokens, bool(degraded), reason, framing)


@store_errors(BUSY_TIMEOUT_S)
class InjectionTables:
    """Inserts (with pruning) and reads of one store's injection ledger."""

    def __init__(self, db: Database, *, keep: int = MAX_ROWS) -> None:
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.db = db
        self.keep = keep

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------------ writes
    def record(
        self,
        *,
        at: str,
        source: str,
        session_id: str | None,
        kind: str,
        query: str,
        memories: Sequence[InjectedMemory],
        degraded: bool = False,
        degraded_reason: str | None = None,
        framing_tokens: int | None = None,
    ) -> int:
        """Append one injection (query, session id, degraded reason and every string in `why` scrubbed; `tokens`
        is the sum of the memories' tokens and the framing's) and drop the rows beyond the newest `keep`.
        Returns the row's id."""
        entries: list[Any] = [m.to_dict() for m in memories]
        if degraded_reason is not None or framing_tokens is not None:
            reason = None if degraded_reason is None else degraded_reason[:MAX_REASON_CHARS]
            entries.append({"call": {"degraded_reason": reason, "framing_tokens": framing_tokens}})
        payload = json.dumps(scrub_json(entries), ensure_ascii=False, separators=(",", ":"))
        with self.db.transaction() as c:
            cur = c.execute(
                f"INSERT INTO injections({_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    at,
                    scrub(source),
                    None if session_id is None else scrub(session_id),
                    kind,
                    scrub(query)[:MAX_QUERY_CHARS],
                    payload,
                    sum(m.tokens for m in memories) + (framing_tokens or 0),
                    int(degraded),
                ),
            )
            new_id = int(cur.lastrowid or 0)
            # Row ids only grow (rows are deleted oldest first), so the newest `keep` rows have ids above this.
            c.execute("DELETE FROM injections WHERE id <= ?", (new_id - self.keep,))
        return new_id

    # ------------------------------------------------------------------- reads
    def count(self, session_id: str | None = None, *, any_session: bool = True) -> int:
        """Rows in the ledger (with any_session=False: those of `session_id`, None meaning no session)."""
        if any_session:
            return int(self.conn.execute("SELECT COUNT(*) FROM injections").fetchone()[0])
        return int(
            self.conn.execute("SELECT COUNT(*) FROM injections WHERE session_id IS ?", (session_id,)).fetchone()[0]
        )

    def latest(self) -> Injection | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM injections ORDER BY id DESC LIMIT 1").fetchone()
        return _row(row) if row else None

    def last(self, session_id: str | None, limit: int) -> list[Injection]:
        """The session's newest `limit` injections (None: those recorded without a session), oldest first."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM injections WHERE session_id IS ? ORDER BY id DESC LIMIT ?", (session_id, limit)
        ).fetchall()
        return [_row(r) for r in reversed(rows)]

    def sessions(self, limit: int = 10) -> list[tuple[str | None, int, str]]:
        """(session id, injections, last at) of the sessions with the newest injections, newest first."""
        rows = self.conn.execute(
            "SELECT session_id, COUNT(*), MAX(at), MAX(id) AS newest FROM injections GROUP BY session_id "
            "ORDER BY newest DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [(r[0], int(r[1]), r[2]) for r in rows]

    def spend(self, since: str | None = None) -> list[tuple[str | None, str, str, int, int]]:
        """(session id, source, day, injections, tokens) of the rows at or after `since`, per session and UTC day,
        oldest day first: what memory cost each session's model in tokens."""
        rows = self.conn.execute(
            "SELECT session_id, source, substr(at, 1, 10) AS day, COUNT(*), SUM(tokens) FROM injections "
            "WHERE at >= ? GROUP BY session_id, source, day ORDER BY day, MIN(id)",
            (since or "",),
        ).fetchall()
        out = []
        for session_id, source, day, count, tokens in rows:
            if not (isinstance(day, str) and is_stamp(day) and isinstance(source, str)):
                continue
            session = session_id if isinstance(session_id, str) else None
            total = tokens if isinstance(tokens, int) and tokens >= 0 else 0
            out.append((session, source[:200], day, int(count), total))
        return out
