"""SQL for captured turns and capture cursors (tables from migration 5). Like database.py, the only place
these tables are spoken to; codememory.capture holds the rules (what is complete, the daily log, order)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.store.rows import MAX_LABEL, escape, is_label, is_relative_path, is_stamp, is_text, warn
from codememory.text.privacy import scrub

TURN_COLUMNS = "source, session_id, turn_id, seq, started_at, ended_at, log_path, summary, captured_at"


@dataclass(frozen=True)
class CapturedTurn:
    source: str
    session_id: str
    turn_id: str
    seq: int
    started_at: str
    ended_at: str | None
    log_path: str  # the daily log holding the turn's entry, relative to .codememory/
    summary: str  # the entry's bullet lines, as written to the log
    captured_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "seq": self.seq,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "log_path": self.log_path,
            "summary": self.summary,
            "captured_at": self.captured_at,
        }


@dataclass(frozen=True)
class Cursor:
    source: str
    key: str
    position: str
    updated_at: str


@dataclass(frozen=True)
class CaptureCounts:
    turns: int
    sessions: int
    last_captured_at: str | None
    by_source: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "sessions": self.sessions,
            "last_captured_at": self.last_captured_at,
            "by_source": dict(self.by_source),
        }


def turn_problems(r: tuple[Any, ...]) -> list[str]:
    """The fields of a stored turn (in TURN_COLUMNS order) whose values the store never writes (log_path
    names a file that is read and shown, so it must stay a plain path under .codememory/)."""
    source, session_id, turn_id, seq, started, ended, log_path, summary, captured = r
    checks = (
        ("source", is_label(source)),
        ("session_id", is_label(session_id)),
        ("turn_id", is_label(turn_id)),
        ("seq", isinstance(seq, int) and not isinstance(seq, bool)),
        ("started_at", is_stamp(started)),
        ("ended_at", ended is None or is_stamp(ended)),
        ("log_path", log_path == "" or is_relative_path(log_path)),
        ("summary", is_text(summary)),
        ("captured_at", is_stamp(captured)),
    )
    return [name for name, ok in checks if not ok]


def turn_from_row(r: tuple[Any, ...]) -> CapturedTurn | None:
    bad = turn_problems(r)
    if bad:
        warn(f"skipped captured turn {escape(r[2])}: invalid {', '.join(bad)}")
        return None
    return CapturedTurn(*r)


def cursor_problems(r: tuple[Any, ...]) -> list[str]:
    source, key, position, updated = r
    checks = (
        ("source", is_label(source)),
        ("key", is_text(key, MAX_LABEL)),
        ("position", is_text(position)),
        ("updated_at", is_stamp(updated)),
    )
    return [name for name, ok in checks if not ok]


def cursor_from_row(r: tuple[Any, ...]) -> Cursor | None:
    bad = cursor_problems(r)
    if bad:
        warn(f"skipped capture cursor {escape(r[1])}: invalid {', '.join(bad)}")
        return None
    return Cursor(*r)


@store_errors(BUSY_TIMEOUT_S)
class CaptureTables:
    """Reads and transactional writes of captured_turns and capture_cursors of one store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------------ writes
    def record_turn(self, turn: CapturedTurn, *, cursor: str | None = None) -> bool:
        """Record a captured turn; with `cursor`, also move the session's cursor (key: the session id)
        to it in the same transaction. Returns False when the turn was already recorded (a replay)."""
        with self.db.transaction() as c:
            inserted = c.execute(
                f"INSERT OR IGNORE INTO captured_turns({TURN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.source,
                    turn.session_id,
                    turn.turn_id,
                    turn.seq,
                    turn.started_at,
                    turn.ended_at,
                    turn.log_path,
                    scrub(turn.summary),
                    turn.captured_at,
                ),
            ).rowcount
            if cursor is not None:
                self._set_cursor(c, turn.source, turn.session_id, cursor, turn.captured_at)
        return bool(inserted)

    def set_cursor(self, source: str, key: str, position: str, now: str) -> None:
        with self.db.transaction() as c:
            self._set_cursor(c, source, key, position, now)

    @staticmethod
    def _set_cursor(c: sqlite3.Connection, source: str, key: str, position: str, now: str) -> None:
        c.execute(
            "INSERT INTO capture_cursors(source, key, position, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(source, key) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at",
            (source, key, position, now),
        )

    def forget_turn(self, source: str, session_id: str, turn_id: str) -> bool:
        """Drop one turn's record (its log entry stays): the next capture pass re-records it."""
        with self.db.transaction() as c:
            return bool(
                c.execute(
                    "DELETE FROM captured_turns WHERE source = ? AND session_id = ? AND turn_id = ?",
                    (source, session_id, turn_id),
                ).rowcount
            )

    # ------------------------------------------------------------------- reads
    def is_captured(self, source: str, session_id: str, turn_id: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM captured_turns WHERE source = ? AND session_id = ? AND turn_id = ?",
            (source, session_id, turn_id),
        ).fetchone()
        return row is not None

    def captured_turn_ids(self, source: str, session_id: str) -> set[str]:
        rows = self.conn.execute(
            "SELECT turn_id FROM captured_turns WHERE source = ? AND session_id = ?", (source, session_id)
        ).fetchall()
        return {r[0] for r in rows}

    def turns(self, source: str, session_id: str | None = None) -> list[CapturedTurn]:
        """Captured turns of one source (and session), in session order."""
        if session_id is None:
            rows = self.conn.execute(
                f"SELECT {TURN_COLUMNS} FROM captured_turns WHERE source = ? ORDER BY session_id, seq, turn_id",
                (source,),
            ).fetchall()
        else:
            rows = self.conn.execute(
                f"SELECT {TURN_COLUMNS} FROM captured_turns WHERE source = ? AND session_id = ? ORDER BY seq, turn_id",
                (source, session_id),
            ).fetchall()
        return [turn for turn in map(turn_from_row, rows) if turn is not None]

    def last_seq(self, source: str, session_id: str) -> int:
        """The highest captured turn number of the session (0: none yet)."""
        row = self.conn.execute(
            "SELECT max(seq) FROM captured_turns WHERE source = ? AND session_id = ?", (source, session_id)
        ).fetchone()
        return int(row[0] or 0)

    def get_cursor(self, source: str, key: str) -> Cursor | None:
        row = self.conn.execute(
            "SELECT source, key, position, updated_at FROM capture_cursors WHERE source = ? AND key = ?",
            (source, key),
        ).fetchone()
        return cursor_from_row(row) if row else None

    def cursors(self, source: str) -> list[Cursor]:
        rows = self.conn.execute(
            "SELECT source, key, position, updated_at FROM capture_cursors WHERE source = ? ORDER BY key", (source,)
        ).fetchall()
        return [cursor for cursor in map(cursor_from_row, rows) if cursor is not None]

    def counts(self, source: str | None = None) -> CaptureCounts:
        where, params = ("WHERE source = ?", [source]) if source else ("", [])
        turns, sessions, last = self.conn.execute(
            "SELECT count(*), count(DISTINCT source || ' ' || session_id), max(captured_at) "
            f"FROM captured_turns {where}",
            params,
        ).fetchone()
        by_source = dict(
            self.conn.execute(
                f"SELECT source, count(*) FROM captured_turns {where} GROUP BY source ORDER BY source", params
            ).fetchall()
        )
        return CaptureCounts(int(turns), int(sessions), last, by_source)
