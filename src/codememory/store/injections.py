"""SQL for the injection ledger (table `injections`, migration 6): what proactive retrieval put in front of a
model, one row per injection, for `codememory explain`. Like database.py, the only place this table is
spoken to; codememory.operations.explain holds the rules (what a row says, how it is shown).

The ledger is bounded: each insert prunes the rows older than the newest `keep` (default `MAX_ROWS`), in
the same transaction, so it never grows without limit however long the daemon runs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.store.rows import is_memory_id
from codememory.text.privacy import scrub, scrub_json

MAX_ROWS = 5000  # rows kept per store
MAX_QUERY_CHARS = 4000  # the stored query expansion is cut to this

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
    kind: str  # "hud" (a /retrieve answer) | "cold_start" (a /memory/recent block)
    query: str  # the scrubbed query expansion, one phrase per line ("" for a cold start)
    memories: list[InjectedMemory]
    tokens: int
    degraded: bool


def _memories(raw: object) -> list[InjectedMemory]:
    try:
        items = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
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
    return Injection(pk, at, source, session_id, kind, query, _memories(memories), tokens, bool(degraded))


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
    ) -> int:
        """Append one injection (query, session id and every string in `why` scrubbed; `tokens` is the sum
        of the memories' tokens) and drop the rows beyond the newest `keep`. Returns the row's id."""
        payload = json.dumps([scrub_json(m.to_dict()) for m in memories], ensure_ascii=False, separators=(",", ":"))
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
                    sum(m.tokens for m in memories),
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
