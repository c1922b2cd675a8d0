"""Read OpenCode's SQLite database (OpenCode 1.x: tables project, session, message, part, todo).

The database belongs to a live program, so the reader is careful:
- it opens the file strictly read-only (`file:…?mode=ro`, never `immutable=1`) and never writes;
- every method runs its queries in one short read transaction and ends it before returning: a read
  transaction left open would stop OpenCode's WAL checkpoints and let its WAL grow without bound;
- `status()` says whether the file is there and has the tables and columns we read, with a reason,
  instead of raising; the other methods raise `OpenCodeDBError` (carrying that status) on failure.

How messages and parts become turns is opencode_turns' business (the plugin's raw events follow the same
rules).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from codememory.capture.opencode_turns import (
    SOURCE,
    OpenCodeMessage,
    build_turn,
    group_turns,
    ms_to_iso,
    render_full_turn,
)
from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.core.dates import from_iso
from codememory.core.lenient_json import json_object
from codememory.core.result import Result
from codememory.errors import OpenCodeDBError

DB_NAME = "opencode.db"
BUSY_TIMEOUT_MS = 2000

# The tables and columns the reader relies on (OpenCode 1.x). `todo` is optional: without it a
# session simply has no todos.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "project": ("id", "worktree"),
    "session": ("id", "project_id", "parent_id", "title", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "time_updated", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
OPTIONAL_COLUMNS: dict[str, tuple[str, ...]] = {
    "todo": ("session_id", "content", "status", "priority", "position"),
}
_CHUNK = 400


# --------------------------------------------------------------------------- discovery
def data_dirs(env: Mapping[str, str] = os.environ) -> list[Path]:
    """OpenCode's data directories, most specific first: $XDG_DATA_HOME/opencode (OpenCode's own choice
    on every platform), ~/.local/share/opencode, and ~/Library/Application Support/opencode."""
    home = Path(env.get("HOME") or Path.home())
    out: list[Path] = []
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):
        out.append(Path(xdg) / "opencode")
    out.append(home / ".local" / "share" / "opencode")
    out.append(home / "Library" / "Application Support" / "opencode")
    return list(dict.fromkeys(out))


def discover_db(env: Mapping[str, str] = os.environ, configured: str = "") -> Path | None:
    """Where OpenCode keeps its database, found as OpenCode finds it.

    Order: `configured` (our `[capture] opencode_db` setting), then `OPENCODE_DB` (absolute, or relative
    to the data directory; ":memory:" means nothing on disk), then in each data directory `opencode.db`
    (the latest, beta and prod channels), else the most recently modified channel database
    `opencode-<channel>.db` (other channels, e.g. dev builds). An explicit path is returned even when it does not exist
    (status() then says "missing"); otherwise None when nothing is found."""
    home = Path(env.get("HOME") or Path.home())
    dirs = data_dirs(env)
    if configured:
        return Path(configured).expanduser()
    explicit = env.get("OPENCODE_DB", "")
    if explicit == ":memory:":
        return None  # OpenCode keeps nothing on disk
    if explicit:
        path = Path(str(home) + explicit[1:] if explicit.startswith("~/") else explicit)
        if path.is_absolute():
            return path
        for folder in dirs:
            if (folder / path).exists():
                return folder / path
        return dirs[0] / path
    for folder in dirs:
        main = folder / DB_NAME
        if main.is_file():
            return main
        channels = [p for p in folder.glob("opencode-*.db") if p.is_file()]
        if channels:
            return max(channels, key=lambda p: (p.stat().st_mtime, p.name))
    return None


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class DbStatus(Result):
    """Whether OpenCode's database can be read, and why not (`capture --json`'s capture.db)."""

    state: str  # "ok" | "missing" | "unreadable" | "unknown_schema"
    path: str | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    def error(self) -> OpenCodeDBError:
        return OpenCodeDBError(self.state, self.path, self.reason)

    @classmethod
    def of(cls, error: OpenCodeDBError) -> DbStatus:
        return cls(error.state, error.path, error.reason)


def _ms(value: str | datetime | int | float | None) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        return int(value)
    dt = value if isinstance(value, datetime) else from_iso(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


# --------------------------------------------------------------------------- reader
class OpenCodeDB:
    """A read-only view of OpenCode's database. Cheap to keep around: the connection holds no
    transaction between calls, and is reopened when the file is replaced."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._conn: sqlite3.Connection | None = None
        self._ident: tuple[int, int] | None = None
        self._lock = threading.RLock()  # one call at a time on the shared connection

    @classmethod
    def discover(cls, env: Mapping[str, str] = os.environ, configured: str = "") -> OpenCodeDB | None:
        path = discover_db(env, configured)
        return cls(path) if path is not None else None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._ident = None

    def __enter__(self) -> OpenCodeDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- plumbing
    def _fail(self, state: str, reason: str) -> OpenCodeDBError:
        return OpenCodeDBError(state, str(self.path), reason)

    def _connect(self) -> sqlite3.Connection:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self.close()
            raise self._fail("missing", f"no OpenCode database at {self.path}") from None
        except OSError as exc:
            self.close()
            raise self._fail("unreadable", f"cannot stat {self.path}: {exc.strerror or exc}") from None
        ident = (st.st_dev, st.st_ino)
        if self._conn is not None and self._ident == ident:
            return self._conn
        self.close()  # first use, or OpenCode's file was replaced: read the new one
        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA query_only = 1")
        except sqlite3.Error as exc:
            raise self._fail("unreadable", f"cannot open {self.path} read-only: {exc}") from None
        self._conn, self._ident = conn, ident
        return conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One short read transaction: a consistent snapshot for the queries of one call, ended before
        the call returns (also on errors), so OpenCode's checkpoints are never held back."""
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                self.close()
                if isinstance(exc, sqlite3.OperationalError) and "no such" in str(exc):
                    raise self._fail("unknown_schema", str(exc)) from None
                raise self._fail("unreadable", f"{self.path}: {exc}") from None

    def _columns(self, conn: sqlite3.Connection, table: str) -> set[str]:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}

    # ------------------------------------------------------------------ status
    def status(self) -> DbStatus:
        """ok / missing / unreadable / unknown_schema, with a reason; never raises."""
        try:
            with self._read() as conn:
                problems = []
                for table, needed in REQUIRED_COLUMNS.items():
                    have = self._columns(conn, table)
                    if not have:
                        problems.append(f"table {table} is missing")
                        continue
                    lacking = [c for c in needed if c not in have]
                    if lacking:
                        problems.append(f"{table} lacks {', '.join(lacking)}")
        except OpenCodeDBError as exc:
            return DbStatus.of(exc)
        except Exception as exc:  # status must never raise
            self.close()
            return DbStatus("unreadable", str(self.path), f"{type(exc).__name__}: {exc}")
        if problems:
            return DbStatus(
                "unknown_schema",
                str(self.path),
                "not an OpenCode 1.x database this codememory knows: " + "; ".join(problems),
            )
        return DbStatus("ok", str(self.path))

    # ---------------------------------------------------------------- sessions
    _SESSIONS_SQL = """
        SELECT id, parent_id, title, time_created, time_updated, worktree, n, last_message
        FROM (
            SELECT s.id, s.parent_id, s.title, s.time_created, s.time_updated, p.worktree,
                   (SELECT count(*) FROM message m WHERE m.session_id = s.id) AS n,
                   (SELECT max(max(m.time_created, coalesce(m.time_updated, 0))) FROM message m
                    WHERE m.session_id = s.id) AS last_message
            FROM session s LEFT JOIN project p ON p.id = s.project_id
            {where}
        )
        WHERE max(time_updated, coalesce(last_message, 0)) >= ?
        ORDER BY max(time_updated, coalesce(last_message, 0)), id
    """

    def sessions(self, since: str | datetime | None = None) -> list[SessionInfo]:
        """Sessions (sub-agent sessions included) with activity at or after `since` (all when None),
        oldest activity first. `updated_at` is the last activity: the session's own time_updated or
        its newest message, whichever is later; `project_root` is the project's worktree."""
        with self._read() as conn:
            rows = conn.execute(self._SESSIONS_SQL.format(where=""), (_ms(since) or 0,)).fetchall()
        return [self._session_info(r) for r in rows]

    def session(self, session_id: str) -> SessionInfo | None:
        with self._read() as conn:
            row = conn.execute(self._SESSIONS_SQL.format(where="WHERE s.id = ?"), (session_id, 0)).fetchone()
        return self._session_info(row) if row else None

    @staticmethod
    def _session_info(row: tuple[Any, ...]) -> SessionInfo:
        sid, parent, title, created, updated, worktree, count, last_message = row
        activity = max(int(updated or 0), int(last_message or 0))
        return SessionInfo(
            source=SOURCE,
            session_id=sid,
            project_root=worktree or "",
            title=title or None,
            created_at=ms_to_iso(created) or "",
            updated_at=ms_to_iso(activity) or "",
            message_count=int(count or 0),
            parent_id=parent or None,
        )

    # ------------------------------------------------------------------- turns
    def turns(self, session_id: str, *, exclude: Collection[str] = ()) -> list[Turn]:
        """The session's turns in order. Turns whose id is in `exclude` (e.g. already captured) are left
        out and their parts are not read; seq numbers still count them."""
        loaded = self._load(session_id, lambda user_id: user_id not in exclude)
        if loaded is None:
            return []
        root, groups, parts = loaded
        out: list[Turn] = []
        for index, (user, answers) in enumerate(groups):
            if user.id in exclude:
                continue
            superseded = index + 1 < len(groups)
            out.append(build_turn(session_id, index + 1, user, answers, parts, root, superseded))
        return out

    def _load(
        self, session_id: str, want: Callable[[str], bool]
    ) -> tuple[str | None, list[tuple[OpenCodeMessage, list[OpenCodeMessage]]], dict[str, list[dict[str, Any]]]] | None:
        """(project root, [(user message, its assistant messages)], parts by message id for the turns
        `want` selects) in one read transaction; None when there is no such session."""
        with self._read() as conn:
            head = conn.execute(
                "SELECT p.worktree FROM session s LEFT JOIN project p ON p.id = s.project_id WHERE s.id = ?",
                (session_id,),
            ).fetchone()
            if head is None:
                return None
            messages = [
                OpenCodeMessage(r[0], str(data.get("role") or ""), int(r[1] or 0), data)
                for r in conn.execute(
                    "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                    (session_id,),
                )
                for data in (json_object(r[2]),)
            ]
            groups = group_turns(messages)
            ids = [m.id for user, answers in groups if want(user.id) for m in (user, *answers)]
            parts: dict[str, list[dict[str, Any]]] = {}
            for i in range(0, len(ids), _CHUNK):
                chunk = ids[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for message_id, data in conn.execute(
                    f"SELECT message_id, data FROM part WHERE message_id IN ({marks}) ORDER BY message_id, id", chunk
                ):
                    parts.setdefault(message_id, []).append(json_object(data))
        return head[0] or None, groups, parts

    def turn(self, session_id: str, turn_id: str) -> Turn | None:
        """One turn by id (the id of its user message)."""
        for t in self.turns(session_id):
            if t.turn_id == turn_id:
                return t
        return None

    # ------------------------------------------------------------------- todos
    def todos(self, session_id: str) -> list[Todo]:
        """The session's todo list as OpenCode last saved it (its `todowrite` tool), in order."""
        with self._read() as conn:
            if not self._columns(conn, "todo"):
                return []
            rows = conn.execute(
                "SELECT content, status, priority, position FROM todo WHERE session_id = ? ORDER BY position",
                (session_id,),
            ).fetchall()
        return [Todo(str(c), str(s), str(p), int(pos)) for c, s, p, pos in rows]

    # -------------------------------------------------------------- transcript
    def transcript(self, session_id: str, turn_id: str, *, max_output: int = 2000) -> str | None:
        """One turn as readable text in the order it happened (the prompt; then each step's text and
        tool calls with their input and output, long ones cut to `max_output` characters), scrubbed of
        private spans and secrets. None when there is no such turn."""
        from codememory.text.privacy import scrub

        loaded = self._load(session_id, lambda user_id: user_id == turn_id)
        if loaded is None:
            return None
        root, groups, parts = loaded
        for index, (user, answers) in enumerate(groups):
            if user.id == turn_id:
                turn = build_turn(session_id, index + 1, user, answers, parts, root, index + 1 < len(groups))
                events = [p for m in answers for p in parts.get(m.id, [])]
                return scrub(render_full_turn(turn, events, max_output=max_output))
        return None
