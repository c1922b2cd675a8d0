"""SQL for the extraction log and the LLM spend ledger (tables from migration 5). Like database.py, the only
place these tables are spoken to; codememory.extract holds the rules (what counts as done, budgets)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors

# A span with one of these statuses is done: a resumed session extracts only turns after it. 'failed'
# spans (the model could not be reached) are retried; 'over_budget' spans got the heuristic extractor.
DONE_STATUSES = ("ok", "empty", "over_budget")
STATUSES = (*DONE_STATUSES, "failed")


@dataclass
class ExtractionRow:
    source: str
    session_id: str
    first_seq: int
    last_seq: int
    method: str  # "llm" | "heuristic"
    status: str  # one of STATUSES
    memory_count: int
    detail: str | None
    started_at: str
    finished_at: str
    id: int | None = None


@dataclass
class SpendRow:
    at: str
    day: str  # UTC date, YYYY-MM-DD
    provider: str
    model: str
    purpose: str  # "extract" | "repair" | "compress"
    session_id: str | None
    prompt_tokens: int
    completion_tokens: int


@dataclass
class SpendTotal:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class PendingSession:
    session_id: str
    last_captured_seq: int
    last_done_seq: int
    last_status: str | None  # the latest extraction run's status (None: never extracted)
    last_finished_at: str | None


@store_errors(BUSY_TIMEOUT_S)
class ExtractionTables:
    """Reads and transactional writes of `extractions` and `llm_spend` in one store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------ extractions
    def record(self, row: ExtractionRow) -> int:
        if row.status not in STATUSES:
            raise ValueError(f"unknown extraction status {row.status!r}")
        with self.db.transaction():
            cur = self.conn.execute(
                "INSERT INTO extractions(source, session_id, first_seq, last_seq, method, status, memory_count, "
                "detail, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.source,
                    row.session_id,
                    row.first_seq,
                    row.last_seq,
                    row.method,
                    row.status,
                    row.memory_count,
                    row.detail,
                    row.started_at,
                    row.finished_at,
                ),
            )
        row.id = int(cur.lastrowid or 0)
        return row.id

    def last_done_seq(self, source: str, session_id: str) -> int:
        """The last turn of the session covered by a done span (0 when none is)."""
        value = self.conn.execute(
            "SELECT MAX(last_seq) FROM extractions WHERE source = ? AND session_id = ? "
            f"AND status IN ({','.join('?' * len(DONE_STATUSES))})",
            (source, session_id, *DONE_STATUSES),
        ).fetchone()[0]
        return int(value or 0)

    def pending_sessions(self, source: str) -> list[PendingSession]:
        """Sessions of `source` with captured turns after their last done extraction span, with the
        status and end of their latest extraction run (a failed run is retried later, not at once). Oldest session
        first: a later session's change to what an earlier one settled finds it stored (extract.revisions); ids do
        not tell the order (OpenCode's sort newest first)."""
        done = ",".join("?" * len(DONE_STATUSES))
        rows = self.conn.execute(
            f"""
            WITH captured AS (
                SELECT session_id, MAX(seq) AS last_seq, MIN(started_at) AS first_at FROM captured_turns
                WHERE source = ? GROUP BY session_id
            ), done AS (
                SELECT session_id, MAX(last_seq) AS last_seq FROM extractions
                WHERE source = ? AND status IN ({done}) GROUP BY session_id
            ), latest AS (
                SELECT session_id, status, finished_at FROM extractions
                WHERE id IN (SELECT MAX(id) FROM extractions WHERE source = ? GROUP BY session_id)
            )
            SELECT c.session_id, c.last_seq, COALESCE(d.last_seq, 0), l.status, l.finished_at
            FROM captured c LEFT JOIN done d USING (session_id) LEFT JOIN latest l USING (session_id)
            WHERE c.last_seq > COALESCE(d.last_seq, 0)
            ORDER BY c.first_at, c.session_id
            """,
            (source, source, *DONE_STATUSES, source),
        ).fetchall()
        return [PendingSession(str(r[0]), int(r[1]), int(r[2]), r[3], r[4]) for r in rows]

    def failed_attempts(self, source: str, session_id: str, after_seq: int) -> int:
        """How many failed runs started right after `after_seq` (the span now being retried)."""
        value = self.conn.execute(
            "SELECT COUNT(*) FROM extractions WHERE source = ? AND session_id = ? AND status = 'failed' "
            "AND first_seq = ?",
            (source, session_id, after_seq + 1),
        ).fetchone()[0]
        return int(value)

    # ------------------------------------------------------------------ spend
    def record_spend(self, row: SpendRow) -> None:
        with self.db.transaction():
            self.conn.execute(
                "INSERT INTO llm_spend(at, day, provider, model, purpose, session_id, prompt_tokens, "
                "completion_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.at,
                    row.day,
                    row.provider,
                    row.model,
                    row.purpose,
                    row.session_id,
                    row.prompt_tokens,
                    row.completion_tokens,
                ),
            )

    def session_spend(self, session_id: str) -> int:
        value = self.conn.execute(
            "SELECT SUM(prompt_tokens + completion_tokens) FROM llm_spend WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        return int(value or 0)

    def day_spend(self, day: str) -> int:
        value = self.conn.execute(
            "SELECT SUM(prompt_tokens + completion_tokens) FROM llm_spend WHERE day = ?", (day,)
        ).fetchone()[0]
        return int(value or 0)

    def spend_since(self, first_day: str | None) -> SpendTotal:
        """Totals over the days from `first_day` (inclusive; None: all time)."""
        where, params = ("day >= ?", (first_day,)) if first_day else ("1", ())
        calls, prompt, completion = self.conn.execute(
            f"SELECT COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) FROM llm_spend WHERE {where}", params
        ).fetchone()
        return SpendTotal(int(calls), int(prompt or 0), int(completion or 0))

    def spend_per_model(self, first_day: str | None) -> list[tuple[str, str, SpendTotal]]:
        """(provider, model, totals) from `first_day` on, the biggest spender first."""
        where, params = ("day >= ?", (first_day,)) if first_day else ("1", ())
        rows: Sequence[tuple[str, str, int, int | None, int | None]] = self.conn.execute(
            "SELECT provider, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens) FROM llm_spend "
            f"WHERE {where} GROUP BY provider, model "
            "ORDER BY SUM(prompt_tokens + completion_tokens) DESC, provider, model",
            params,
        ).fetchall()
        return [(p, m, SpendTotal(int(n), int(pt or 0), int(ct or 0))) for p, m, n, pt, ct in rows]
