"""SQL for coding sessions (tables from migration 4). Like database.py, the only place sessions speak SQL;
codememory.sessions.service holds the rules (what a checkpoint appends or replaces, rendering, search)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.store.rows import (
    MAX_LABEL,
    escape,
    is_label,
    is_name,
    is_session_markdown,
    is_stamp,
    is_text,
    json_object,
    warn,
)

STATUSES = ("open", "frozen", "closed")
CHUNK_TYPES = ("work_completed", "work_pending", "work_summary", "decision", "plan_file", "reference", "diff_summary")
# bm25() weights per sessions_fts column: session_id (unindexed), goal, todos, file_paths, decisions, work_summary
FTS_COLUMNS = ("goal", "todos", "file_paths", "decisions", "work_summary")
FTS_WEIGHTS = {"goal": 10.0, "todos": 5.0, "file_paths": 5.0, "decisions": 8.0, "work_summary": 3.0}
_CHANGE_TYPES = ("created", "modified", "deleted")
_CHANGE_ORDER = "CASE change_type WHEN 'created' THEN 0 WHEN 'modified' THEN 1 ELSE 2 END"
ROW_COLUMNS = (
    "id, project, tool, slug, started_at, updated_at, ended_at, trigger, git_sha_start, git_sha_end, status, "
    "markdown_path, goal"
)


@dataclass
class SessionRow:
    id: str
    project: str
    tool: str
    slug: str
    started_at: str
    updated_at: str
    ended_at: str | None = None
    trigger: str | None = None
    git_sha_start: str | None = None
    git_sha_end: str | None = None
    status: str = "open"
    markdown_path: str = ""
    goal: str | None = None

    def values(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.project,
            self.tool,
            self.slug,
            self.started_at,
            self.updated_at,
            self.ended_at,
            self.trigger,
            self.git_sha_start,
            self.git_sha_end,
            self.status,
            self.markdown_path,
            self.goal,
        )


@dataclass
class SessionRecord:
    """A session with everything its markdown file shows."""

    row: SessionRow
    completed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    plan_files: list[dict[str, str]] = field(default_factory=list)  # {"path", "header"}
    references: list[dict[str, str]] = field(default_factory=list)  # {"url", "title"}
    diff_summary: str | None = None
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, change_type), created first

    def chunks(self) -> list[tuple[str, str]]:
        out = [("work_completed", c) for c in self.completed]
        out += [("work_pending", c) for c in self.pending]
        out += [("work_summary", c) for c in self.summary]
        out += [("decision", c) for c in self.decisions]
        out += [("plan_file", json.dumps(p, ensure_ascii=False)) for p in self.plan_files]
        out += [("reference", json.dumps(r, ensure_ascii=False)) for r in self.references]
        if self.diff_summary:
            out.append(("diff_summary", self.diff_summary))
        return out

    def fts_values(self) -> tuple[str, ...]:
        return (
            self.row.id,
            self.row.goal or "",
            "\n".join(self.completed + self.pending),
            " ".join([p for p, _ in self.files] + [p["path"] for p in self.plan_files]),
            "\n".join(self.decisions),
            "\n".join(self.summary),
        )


def session_problems(r: tuple[Any, ...]) -> list[str]:
    """The fields of a stored session row (in ROW_COLUMNS order) whose values the store never writes: the
    row decides which markdown file is read, written and shown, so nothing in it may name another path."""
    sid, project, tool, slug, started, updated, ended, trigger, sha_start, sha_end, status, markdown, goal = r
    checks = (
        ("id", is_name(sid)),
        ("project", is_text(project, MAX_LABEL)),
        ("tool", is_name(tool)),
        ("slug", is_name(slug)),
        ("started_at", is_stamp(started)),
        ("updated_at", is_stamp(updated)),
        ("ended_at", ended is None or is_stamp(ended)),
        ("trigger", trigger is None or is_name(trigger)),
        ("git_sha_start", sha_start is None or is_name(sha_start)),
        ("git_sha_end", sha_end is None or is_name(sha_end)),
        ("status", status in STATUSES),
        ("markdown_path", is_session_markdown(markdown)),
        ("goal", goal is None or is_text(goal)),
    )
    return [name for name, ok in checks if not ok]


def session_from_row(r: tuple[Any, ...]) -> SessionRow | None:
    """A stored session row, or None (warned) when session_problems finds any."""
    bad = session_problems(r)
    if bad:
        warn(f"skipped session {escape(r[0])}: invalid {', '.join(bad)}")
        return None
    return SessionRow(*r)


@store_errors(BUSY_TIMEOUT_S)
class SessionTables:
    """Reads and transactional writes of the session tables of one store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------------ writes
    def checkpoint(
        self,
        row: SessionRow,
        *,
        new: bool,
        chunks: Sequence[tuple[str, str]],
        replace: Sequence[str],
        files: Sequence[tuple[str, str]] | None,
        now: str,
        finish: Callable[[SessionRecord], None],
    ) -> SessionRecord:
        """Save one checkpoint in one transaction: the session row, the chunks of `replace` types
        dropped, new chunks appended, the file list replaced (when given), the search row rewritten;
        `finish` (which renders the markdown) runs last, and an exception from it rolls everything back."""
        c = self.conn
        with self.db.transaction():
            if new:
                c.execute(f"INSERT INTO sessions({ROW_COLUMNS}) VALUES ({','.join('?' * 13)})", row.values())
            else:
                c.execute(
                    f"UPDATE sessions SET ({ROW_COLUMNS}) = ({','.join('?' * 13)}) WHERE id = ?",
                    (*row.values(), row.id),
                )
            for chunk_type in replace:
                c.execute("DELETE FROM session_chunks WHERE session_id = ? AND chunk_type = ?", (row.id, chunk_type))
            c.executemany(
                "INSERT INTO session_chunks(session_id, chunk_type, content, created_at) VALUES (?, ?, ?, ?)",
                [(row.id, t, content, now) for t, content in chunks],
            )
            if files is not None:
                c.execute("DELETE FROM session_files WHERE session_id = ?", (row.id,))
                c.executemany(
                    "INSERT INTO session_files(session_id, file_path, change_type) VALUES (?, ?, ?)",
                    [(row.id, p, t) for p, t in files],
                )
            record = self._load(row.id)
            assert record is not None
            self._index(record)
            finish(record)
        return record

    def replace_all(self, records: Sequence[SessionRecord]) -> None:
        """Drop every session row and insert these instead (rebuild from the markdown files)."""
        c = self.conn
        with self.db.transaction():
            c.execute("DELETE FROM session_chunks")
            c.execute("DELETE FROM session_files")
            c.execute("DELETE FROM sessions")
            c.execute("DELETE FROM sessions_fts")
            for record in records:
                row = record.row
                c.execute(f"INSERT INTO sessions({ROW_COLUMNS}) VALUES ({','.join('?' * 13)})", row.values())
                c.executemany(
                    "INSERT INTO session_chunks(session_id, chunk_type, content, created_at) VALUES (?, ?, ?, ?)",
                    [(row.id, t, content, row.updated_at) for t, content in record.chunks()],
                )
                c.executemany(
                    "INSERT INTO session_files(session_id, file_path, change_type) VALUES (?, ?, ?)",
                    [(row.id, p, t) for p, t in record.files],
                )
                self._index(record)

    def reindex(self) -> int:
        """Rewrite the search row of every session from its stored rows (`codememory repair` copies the
        rows, never a store's index). Returns how many sessions were indexed."""
        c = self.conn
        done = 0
        with self.db.transaction():
            c.execute("DELETE FROM sessions_fts")
            for (session_id,) in c.execute("SELECT id FROM sessions ORDER BY id").fetchall():
                record = self._load(session_id)
                if record is not None:
                    self._index(record)
                    done += 1
        return done

    def _index(self, record: SessionRecord) -> None:
        self.conn.execute("DELETE FROM sessions_fts WHERE session_id = ?", (record.row.id,))
        self.conn.execute(
            "INSERT INTO sessions_fts(session_id, goal, todos, file_paths, decisions, work_summary) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            record.fts_values(),
        )

    # ------------------------------------------------------------------- reads
    def get(self, session_id: str) -> SessionRecord | None:
        return self._load(session_id)

    def _row(self, where: str, params: Sequence[Any], tail: str = "") -> list[SessionRow]:
        rows = self.conn.execute(f"SELECT {ROW_COLUMNS} FROM sessions WHERE {where} {tail}", params).fetchall()
        return [row for row in map(session_from_row, rows) if row is not None]

    def _load(self, session_id: str) -> SessionRecord | None:
        rows = self._row("id = ?", (session_id,))
        if not rows:
            return None
        record = SessionRecord(rows[0])
        for chunk_type, content in self.conn.execute(
            "SELECT chunk_type, content FROM session_chunks WHERE session_id = ? ORDER BY id", (session_id,)
        ):
            if not is_text(content):
                warn(f"skipped a {escape(chunk_type)} entry of session {session_id}: not text")
                continue
            if chunk_type in ("plan_file", "reference"):
                item = json_object(content, *(("path", "header") if chunk_type == "plan_file" else ("url", "title")))
                if item is None:
                    warn(f"skipped a {chunk_type} entry of session {session_id}: not the JSON the store writes")
                    continue
                (record.plan_files if chunk_type == "plan_file" else record.references).append(item)
            elif chunk_type == "work_completed":
                record.completed.append(content)
            elif chunk_type == "work_pending":
                record.pending.append(content)
            elif chunk_type == "work_summary":
                record.summary.append(content)
            elif chunk_type == "decision":
                record.decisions.append(content)
            elif chunk_type == "diff_summary":
                record.diff_summary = content
        record.files = self.files(session_id)
        return record

    def files(self, session_id: str, limit: int | None = None) -> list[tuple[str, str]]:
        sql = (
            f"SELECT file_path, change_type FROM session_files WHERE session_id = ? ORDER BY {_CHANGE_ORDER}, file_path"
        )
        params: list[Any] = [session_id]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [(p, t) for p, t in self.conn.execute(sql, params) if is_label(p) and t in _CHANGE_TYPES]

    def open_session(self, tool: str, slug: str) -> SessionRow | None:
        """The newest open session of this tool with this slug."""
        rows = self._row("tool = ? AND slug = ? AND status = 'open'", (tool, slug), "ORDER BY started_at DESC LIMIT 1")
        return rows[0] if rows else None

    def exists(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None

    def rows(
        self,
        *,
        ids: Sequence[str] | None = None,
        tool: str | None = None,
        status: str | None = None,
        after: str | None = None,
        before: str | None = None,
        limit: int | None = None,
    ) -> list[SessionRow]:
        """Sessions newest first, restricted by the arguments given."""
        clauses: list[str] = ["1"]
        params: list[Any] = []
        if ids is not None:
            if not ids:
                return []
            clauses.append(f"id IN ({','.join('?' * len(ids))})")
            params.extend(ids)
        for column, op, value in (("tool", "=", tool), ("status", "=", status), ("started_at", ">=", after)):
            if value is not None:
                clauses.append(f"{column} {op} ?")
                params.append(value)
        if before is not None:
            clauses.append("started_at < ?")
            params.append(before)
        tail = "ORDER BY started_at DESC, id DESC"
        if limit is not None:
            tail += " LIMIT ?"
            params.append(limit)
        return self._row(" AND ".join(clauses), params, tail)

    def tools(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT tool FROM sessions ORDER BY tool") if is_name(r[0])]

    def bm25(self, match: str) -> dict[str, float]:
        """session id -> weighted bm25 (negative; lower is better) for an FTS5 expression."""
        weights = ", ".join(str(FTS_WEIGHTS[c]) for c in FTS_COLUMNS)
        rows = self.conn.execute(
            f"SELECT session_id, bm25(sessions_fts, 0, {weights}) FROM sessions_fts WHERE sessions_fts MATCH ?",
            (match,),
        ).fetchall()
        return {sid: score for sid, score in rows}

    def columns_matching(self, phrase: str) -> dict[str, set[str]]:
        """session id -> the indexed columns in which this quoted phrase occurs."""
        found: dict[str, set[str]] = {}
        for column in FTS_COLUMNS:
            for (sid,) in self.conn.execute(
                "SELECT session_id FROM sessions_fts WHERE sessions_fts MATCH ?", (f"{column} : {phrase}",)
            ):
                found.setdefault(sid, set()).add(column)
        return found

    def sessions_with_path(self, fragment: str) -> set[str]:
        """Sessions whose touched files or plan files contain this path fragment (case-insensitive)."""
        like = "%" + fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        hits = {
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT session_id FROM session_files WHERE file_path LIKE ? ESCAPE '\\'", (like,)
            )
        }
        hits |= {
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT session_id FROM session_chunks WHERE chunk_type = 'plan_file' "
                "AND json_extract(content, '$.path') LIKE ? ESCAPE '\\'",
                (like,),
            )
        }
        return hits
