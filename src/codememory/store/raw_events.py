"""SQL for the raw-event queue (table `raw_events`, migration 6): events an assistant plugin streams to the
daemon (`POST /api/raw-events`), accepted durably before anything else happens to them, then turned into
captured turns by the flush worker (`codememory.capture.raw_events`). Like database.py, the only place this
table is spoken to.

- `accept` inserts a batch in one transaction; `(source, event_id)` is unique, so a replayed batch (or an
  event sent twice) is a no-op and the answer says how many rows were new.
- Payloads are stored scrubbed (`privacy.scrub` on every string, then on the JSON as a whole so key-named
  secrets such as `"password": "…"` go too).
- A row is pending until `processed_at` is set; `fail` counts an attempt and records why.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codememory.core.lenient_json import json_object
from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.text.privacy import scrub, scrub_json

_COLUMNS = "id, source, session_id, event_id, kind, at, payload, batch_id, received_at, processed_at, attempts, error"
_CHUNK = 400


@dataclass(frozen=True)
class NewRawEvent:
    """An event as received, before it is stored."""

    source: str
    session_id: str
    event_id: str
    kind: str
    at: str  # canonical UTC ISO
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RawEvent:
    id: int
    source: str
    session_id: str
    event_id: str
    kind: str
    at: str
    payload: dict[str, Any]
    batch_id: str | None
    received_at: str
    processed_at: str | None
    attempts: int
    error: str | None

    @property
    def pending(self) -> bool:
        return self.processed_at is None


@dataclass(frozen=True)
class Accepted:
    received: int  # events in the batch
    accepted: int  # new rows
    duplicates: int  # already stored (a replay, or sent twice)

    def to_dict(self) -> dict[str, int]:
        return {"received": self.received, "accepted": self.accepted, "duplicates": self.duplicates}


def scrub_payload(payload: dict[str, Any]) -> str:
    """The payload as scrubbed JSON: each string scrubbed, then the JSON text as a whole (which also catches
    `"secret_key": "…"` pairs); when scrubbing the whole text would break the JSON, the per-string result."""
    cleaned = json.dumps(scrub_json(payload), ensure_ascii=False, sort_keys=True)
    whole = scrub(cleaned)
    if whole != cleaned:
        try:
            if isinstance(json.loads(whole), dict):
                return whole
        except ValueError:
            pass
    return cleaned


def _row(row: tuple[Any, ...]) -> RawEvent:
    rid, source, session, event_id, kind, at, payload, batch, received, processed, attempts, error = row
    return RawEvent(
        int(rid),
        source,
        session,
        event_id,
        kind,
        at,
        json_object(payload),
        batch,
        received,
        processed,
        attempts if isinstance(attempts, int) else 0,  # the file is untrusted: never int() a stored value
        error,
    )


@store_errors(BUSY_TIMEOUT_S)
class RawEventTables:
    """Reads and transactional writes of `raw_events` in one store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------------ writes
    def accept(self, events: Sequence[NewRawEvent], *, batch_id: str | None, received_at: str) -> Accepted:
        """Store a batch in one transaction (durable when this returns); events already stored are skipped."""
        rows = [
            (e.source, e.session_id, e.event_id, e.kind, e.at, scrub_payload(e.payload), batch_id, received_at)
            for e in events
        ]
        inserted = 0
        with self.db.transaction() as c:
            for row in rows:
                inserted += c.execute(
                    "INSERT OR IGNORE INTO raw_events"
                    "(source, session_id, event_id, kind, at, payload, batch_id, received_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                ).rowcount
        return Accepted(len(rows), inserted, len(rows) - inserted)

    def mark_processed(self, ids: Iterable[int], now: str, *, note: str | None = None) -> int:
        """Set processed_at on pending rows (`note`, e.g. why an event was dropped, goes to `error`)."""
        todo = sorted(set(ids))
        done = 0
        with self.db.transaction() as c:
            for i in range(0, len(todo), _CHUNK):
                chunk = todo[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                done += c.execute(
                    f"UPDATE raw_events SET processed_at = ?, error = coalesce(?, error) "
                    f"WHERE processed_at IS NULL AND id IN ({marks})",
                    (now, note, *chunk),
                ).rowcount
        return done

    def fail(self, ids: Iterable[int], error: str, now: str, *, give_up_after: int) -> int:
        """Count a failed attempt on pending rows; a row at `give_up_after` attempts is closed (processed_at set,
        the error kept) so one bad event cannot block the queue for ever. Returns the rows closed."""
        todo = sorted(set(ids))
        closed = 0
        with self.db.transaction() as c:
            for i in range(0, len(todo), _CHUNK):
                chunk = todo[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                c.execute(
                    f"UPDATE raw_events SET attempts = attempts + 1, error = ? "
                    f"WHERE processed_at IS NULL AND id IN ({marks})",
                    (scrub(error)[:500], *chunk),
                )
                closed += c.execute(
                    f"UPDATE raw_events SET processed_at = ? "
                    f"WHERE processed_at IS NULL AND attempts >= ? AND id IN ({marks})",
                    (now, give_up_after, *chunk),
                ).rowcount
        return closed

    def prune(self, before: str) -> int:
        """Delete events processed before `before` in sessions with nothing pending. They have become
        captured turns; a batch replayed after this is accepted again and then meets those turns, which
        capture never writes twice. Without this the queue keeps every tool output for ever."""
        with self.db.transaction() as c:
            return c.execute(
                "DELETE FROM raw_events WHERE processed_at IS NOT NULL AND processed_at < ? AND NOT EXISTS "
                "(SELECT 1 FROM raw_events p WHERE p.processed_at IS NULL AND p.source = raw_events.source "
                "AND p.session_id = raw_events.session_id)",
                (before,),
            ).rowcount

    # ------------------------------------------------------------------- reads
    def pending_sessions(self) -> list[tuple[str, str]]:
        """(source, session id) of every session with pending events, oldest pending event first."""
        rows = self.conn.execute(
            "SELECT source, session_id, min(id) AS first FROM raw_events WHERE processed_at IS NULL "
            "GROUP BY source, session_id ORDER BY first"
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    def session_events(self, source: str, session_id: str) -> list[RawEvent]:
        """Every event of a session (processed ones too), in arrival order."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM raw_events WHERE source = ? AND session_id = ? ORDER BY id",
            (source, session_id),
        ).fetchall()
        return [_row(r) for r in rows]

    def pending_count(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM raw_events WHERE processed_at IS NULL").fetchone()
        return int(row[0])

    def counts(self) -> dict[str, int]:
        """{"total", "pending", "processed", "failed"} (failed: closed with an error after retries, or dropped)."""
        total, pending, failed = self.conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE processed_at IS NULL), "
            "count(*) FILTER (WHERE processed_at IS NOT NULL AND error IS NOT NULL) FROM raw_events"
        ).fetchone()
        return {
            "total": int(total),
            "pending": int(pending),
            "processed": int(total) - int(pending),
            "failed": int(failed),
        }
