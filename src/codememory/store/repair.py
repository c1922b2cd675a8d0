"""Rebuild a clean store from the data of a damaged or foreign one (`codememory repair`).

A store the open-time checks refuse (schema objects codememory did not create, damaged pages, rows no
codememory writes) is rebuilt rather than patched:

- the old file is read only through its data tables, by name, and only when each is a real table (never a
  view or virtual table), with PRAGMA trusted_schema OFF, so nothing defined in it runs;
- every row is checked as the store checks what it reads (rows.py) and must also pass the fresh
  schema's own constraints (types, CHECKs, foreign keys); a row that fails is skipped and counted;
- on damaged pages, what SQLite can still read is kept: a failing read is narrowed down to the row, then
  the damaged region is stepped over by probing keys further on, and counted;
- the new store is built by the migrations in a temporary file, its full-text and session indexes are
  rebuilt from the copied rows, it is checked (PRAGMA quick_check) and swapped in with one rename;
- the old file is kept beside it as memory.db.bak-<UTC time> (with its -wal/-shm): repair never deletes
  data. The cached vector index files under cache/vectors/ are removed; they are rebuilt from the table.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codememory.core.model import DEFAULT_IMPORTANCE, LINK_TYPES, MAX_TEXT, session_position
from codememory.errors import InvalidInput, StoreNotFound, StoreUnusable, UnsafePath
from codememory.store.capture import TURN_COLUMNS, cursor_problems, turn_problems
from codememory.store.database import Database
from codememory.store.extraction import STATUSES as EXTRACTION_STATUSES
from codememory.store.memories import text_hash
from codememory.store.migrations import LATEST
from codememory.store.rows import (
    MAX_LABEL,
    escape,
    is_label,
    is_memory_id,
    is_name,
    is_stamp,
    is_tag,
    is_text,
    json_object,
    memory_problem,
)
from codememory.store.sessions import CHUNK_TYPES, ROW_COLUMNS, SessionTables, session_problems

Progress = Callable[[str, int, int | None], None]  # (table, rows read so far, rows in the table or None)
Check = Callable[[Any], bool]

_BATCH = 500
_MAX_EXAMPLES = 20
_MAX_KEY = 2**63 - 1
_AFTER_ANY_KEY = b"\xff" * 64  # sorts after every integer and text key (resuming past a damaged region)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _optional(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _one_of(*allowed: Any) -> Check:
    return lambda value: value in allowed


def _anything(_value: Any) -> bool:
    return True


def _json_text(kind: type) -> Check:
    def check(value: Any) -> bool:
        if not is_text(value):
            return False
        try:
            return isinstance(json.loads(value), kind)
        except ValueError:
            return False

    return check


# ------------------------------------------------------------------------------------ row fixes
def _fix_memory(row: dict[str, Any]) -> str | None:
    text = row["text"]
    if isinstance(text, str):
        text = text.replace("\x00", "")  # as the store's own validation does; SQLite's length() stops at NUL
    problem = memory_problem(row["id"], text, row["category"])
    if problem:
        return problem
    assert isinstance(text, str)
    if not text.strip() or len(text) > MAX_TEXT:
        return f"memory {row['id']} has text of {len(text)} characters (1 to {MAX_TEXT:,} allowed)"
    for stamp in ("created_at", "updated_at"):
        if not is_stamp(row[stamp]) or not row[stamp][:1].isdigit():
            return f"memory {row['id']} has an invalid {stamp}"
    row["text"] = text
    row["text_hash"] = text_hash(text)
    if not _number(row["importance"]) or not 0 <= row["importance"] <= 1:
        row["importance"] = DEFAULT_IMPORTANCE
    row["entered_by"] = row["entered_by"] if is_label(row["entered_by"]) else None
    row["source"] = row["source"] if is_text(row["source"], MAX_LABEL) else None
    for stamp in ("expires_at", "last_accessed_at"):
        row[stamp] = row[stamp] if is_stamp(row[stamp]) else None
    row["access_count"] = row["access_count"] if _int(row["access_count"]) and row["access_count"] >= 0 else 0
    row["archived"] = 1 if row["archived"] == 1 else 0
    row["superseded_by"] = row["superseded_by"] if is_memory_id(row["superseded_by"]) else None
    row["session_key"], row["seq"] = session_position(row["source"])
    return None


def _fix_embedding(row: dict[str, Any]) -> str | None:
    if not isinstance(row["vector"], bytes) or not 0 < row["dim"] <= 65536 or len(row["vector"]) != 4 * row["dim"]:
        return f"the vector of memory row {row['memory_pk']} does not have {row['dim']} float32 values"
    return None


def _fix_chunk(row: dict[str, Any]) -> str | None:
    kind = row["chunk_type"]
    if kind == "plan_file" and json_object(row["content"], "path", "header") is None:
        return "a plan_file entry is not the JSON the store writes"
    if kind == "reference" and json_object(row["content"], "url", "title") is None:
        return "a reference entry is not the JSON the store writes"
    return None


def _problems(names: tuple[str, ...], problems: Callable[[tuple[Any, ...]], list[str]]) -> Callable[..., str | None]:
    def fix(row: dict[str, Any]) -> str | None:
        bad = problems(tuple(row[n] for n in names))
        return f"invalid {', '.join(bad)}" if bad else None

    return fix


@dataclass(frozen=True)
class _Spec:
    table: str
    checks: dict[str, Check]  # the columns copied, each with the check its value must pass
    fix: Callable[[dict[str, Any]], str | None] | None = None  # may adjust the row; returns a problem
    computed: tuple[str, ...] = ()  # columns written from the fix, not read


_MEMORY_COLUMNS = (
    "pk, id, text, category, importance, entered_by, source, created_at, updated_at, expires_at, access_count, "
    "last_accessed_at, archived, superseded_by"
).split(", ")

# Parents before children: the new store enforces foreign keys, so an orphan is refused there.
SPECS: tuple[_Spec, ...] = (
    _Spec("memories", dict.fromkeys(_MEMORY_COLUMNS, _anything), _fix_memory, ("text_hash", "session_key", "seq")),
    _Spec("tags", {"id": _int, "name": is_tag}),
    _Spec("memory_tags", {"memory_pk": _int, "tag_id": _int}),
    _Spec(
        "embeddings",
        {"memory_pk": _int, "model": is_label, "dim": _int, "text_hash": is_label, "seq": _int, "vector": _anything},
        _fix_embedding,
    ),
    _Spec(
        "memory_links",
        {
            "memory_pk": _int,
            "linked_pk": _int,
            "link_type": _one_of(*LINK_TYPES),
            "score": _optional(_number),
            "created_at": is_stamp,
        },
    ),
    _Spec("entities", {"id": _int, "name": is_label, "type": is_label}),
    _Spec("memory_entities", {"memory_pk": _int, "entity_id": _int}),
    _Spec(
        "sessions",
        dict.fromkeys(ROW_COLUMNS.split(", "), _anything),
        _problems(tuple(ROW_COLUMNS.split(", ")), session_problems),
    ),
    _Spec(
        "session_files",
        {"session_id": is_name, "file_path": is_label, "change_type": _one_of("created", "modified", "deleted")},
    ),
    _Spec(
        "session_chunks",
        {
            "id": _int,
            "session_id": is_name,
            "chunk_type": _one_of(*CHUNK_TYPES),
            "content": is_text,
            "created_at": is_stamp,
        },
        _fix_chunk,
    ),
    _Spec(
        "captured_turns",
        dict.fromkeys(TURN_COLUMNS.split(", "), _anything),
        _problems(tuple(TURN_COLUMNS.split(", ")), turn_problems),
    ),
    _Spec(
        "capture_cursors",
        dict.fromkeys(("source", "key", "position", "updated_at"), _anything),
        _problems(("source", "key", "position", "updated_at"), cursor_problems),
    ),
    _Spec(
        "extractions",
        {
            "id": _int,
            "source": is_label,
            "session_id": is_label,
            "first_seq": _int,
            "last_seq": _int,
            "method": is_label,
            "status": _one_of(*EXTRACTION_STATUSES),
            "memory_count": _int,
            "detail": _optional(is_text),
            "started_at": is_stamp,
            "finished_at": is_stamp,
        },
    ),
    _Spec(
        "llm_spend",
        {
            "id": _int,
            "at": is_stamp,
            "day": is_stamp,
            "provider": is_label,
            "model": is_label,
            "purpose": is_label,
            "session_id": _optional(is_label),
            "prompt_tokens": _int,
            "completion_tokens": _int,
        },
    ),
    _Spec(
        "raw_events",
        {
            "id": _int,
            "source": is_label,
            "session_id": is_label,
            "event_id": is_label,
            "kind": is_label,
            "at": is_stamp,
            "payload": _json_text(dict),
            "batch_id": _optional(is_label),
            "received_at": is_stamp,
            "processed_at": _optional(is_stamp),
            "attempts": _int,
            "error": _optional(is_text),
        },
    ),
    _Spec(
        "injections",
        {
            "id": _int,
            "at": is_stamp,
            "source": is_label,
            "session_id": _optional(is_label),
            "kind": is_label,
            "query": is_text,
            "memories": _json_text(list),
            "tokens": _int,
            "degraded": _one_of(0, 1),
        },
    ),
)


# -------------------------------------------------------------------------------------- report
@dataclass
class TableReport:
    table: str
    kept: int = 0
    skipped: int = 0  # rows read but refused (invalid values, duplicates, orphans)
    unreadable: int = 0  # damaged regions stepped over (each may hide one or more rows)
    note: str | None = None  # why the table was not read at all

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "kept": self.kept,
            "skipped": self.skipped,
            "unreadable": self.unreadable,
            "note": self.note,
        }


@dataclass
class RepairReport:
    store: str
    backup: str
    tables: list[TableReport] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # the first skipped rows and why
    readable: bool = True  # False: nothing could be read from the old file at all
    problem: str | None = None  # what made the old file unreadable

    def table(self, name: str) -> TableReport:
        return next(t for t in self.tables if t.table == name)

    def to_dict(self) -> dict[str, Any]:
        memories = self.table("memories")
        return {
            "store": self.store,
            "backup": self.backup,
            "readable": self.readable,
            "problem": self.problem,
            "memories": {"kept": memories.kept, "skipped": memories.skipped, "unreadable": memories.unreadable},
            "tables": [t.to_dict() for t in self.tables],
            "examples": list(self.examples),
        }

    def skip(self, report: TableReport, key: Any, why: str) -> None:
        report.skipped += 1
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(f"{report.table} row {escape(key, 40)}: {escape(why, 200)}")


# ------------------------------------------------------------------------------------ reading
def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _open_source(path: Path) -> sqlite3.Connection:
    src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    src.execute("PRAGMA trusted_schema = OFF")  # nothing the file defines runs while it is read
    src.execute("PRAGMA cell_size_check = ON")  # report damaged pages instead of reading garbage
    src.execute("PRAGMA busy_timeout = 5000")
    return src


def _tables(src: sqlite3.Connection, report: RepairReport) -> dict[str, tuple[str, str]]:
    """name -> (type, sql) of the old file's readable schema entries. With writable_schema a damaged entry
    does not hide the tables that are fine (it makes SQLite skip what it cannot parse)."""
    try:
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        src.execute("PRAGMA writable_schema = ON")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # still failing: nothing is readable
    schema = TableReport("sqlite_master")
    rows = list(_Scanner(src, "sqlite_master", ["name", "type", "sql"], schema).rows())
    if schema.unreadable:
        schema.note = (
            f"the schema has {schema.unreadable} damaged region(s): tables whose entries could not be read were lost"
        )
        report.tables.append(schema)
    return {str(n): (str(t), str(sql or "")) for _, n, t, sql in rows}


def _real_table(objects: dict[str, tuple[str, str]], name: str) -> str | None:
    """None when `name` is an ordinary table; else why it is not read."""
    found = objects.get(name)
    if found is None:
        return "not in the old store"
    kind, sql = found
    if kind != "table" or not " ".join(sql.split()).upper().startswith("CREATE TABLE"):
        return f"is a {kind} ({' '.join(sql.split())[:40]}...), not a table: not read"
    return None


def _keys(src: sqlite3.Connection, table: str) -> list[str]:
    """The columns the table is stored in order of: rowid, or a WITHOUT ROWID table's primary key."""
    try:
        src.execute(f"SELECT rowid FROM main.{_q(table)} LIMIT 0")
        return ["rowid"]
    except sqlite3.OperationalError:
        info = src.execute(f"PRAGMA main.table_info({_q(table)})").fetchall()
        keys = [str(r[1]) for r in sorted(info, key=lambda r: r[5]) if r[5]]
        if not keys:
            raise
        return [_q(k) for k in keys]


def _order(key: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """A Python sort key that orders values as SQLite does (NULL, numbers, text, blobs) without ever
    comparing two types (a damaged file can mix them in one column)."""

    def rank(value: Any) -> tuple[int, Any]:
        if value is None:
            return (0, 0)
        if isinstance(value, (int, float)):
            return (1, value)
        if isinstance(value, str):
            return (2, value.encode("utf-8", "surrogatepass"))
        return (3, bytes(value))

    return tuple(rank(v) for v in key)


def _ascending(after: tuple[Any, ...] | None, keys: list[tuple[Any, ...]]) -> int:
    """How many of `keys` (as read, in order) come strictly after `after` and after each other: a damaged
    b-tree can answer "the rows after X" with keys before X, or in no order at all."""
    good = 0
    previous = after
    for key in keys:
        if previous is not None and _order(key) <= _order(previous):
            break
        good += 1
        previous = key
    return good


class _Scanner:
    """Reads every readable row of one table of the old file, in storage order: keyset pages that narrow
    down to the first unreadable row when a read fails, a jump past each damaged region (found by probing
    keys further on), and, for rowid tables, point lookups into the gaps the damage left (a lookup goes
    from the root, so it still finds rows on undamaged pages beside a damaged one)."""

    _GAP_LOOKUPS = 200_000  # point lookups per table at most

    def __init__(self, src: sqlite3.Connection, table: str, exprs: list[str], report: TableReport) -> None:
        self.src, self.table, self.report = src, table, report
        self.keys = _keys(src, table)
        self.n = len(self.keys)
        key_sql = ", ".join(self.keys)
        self.key_sql = key_sql
        self.frm = f"FROM main.{_q(table)} NOT INDEXED"
        self.head = f"SELECT {key_sql}, {', '.join(exprs)} {self.frm}"
        self.after = f" WHERE ({key_sql}) > ({', '.join('?' * self.n)})"
        self.gaps: list[tuple[int, int | None]] = []  # rowid ranges (exclusive) a damaged region may hide

    def rows(self) -> Iterator[tuple[Any, ...]]:
        seen: set[int] = set()
        for row in self._pages():
            if self.keys == ["rowid"]:
                seen.add(row[0])
            yield row
        if self.gaps and self.keys == ["rowid"]:
            yield from self._fill_gaps(seen)

    def _read(self, last: tuple[Any, ...] | None, limit: int) -> list[tuple[Any, ...]]:
        where = self.after if last is not None else ""
        params = (*last, limit) if last is not None else (limit,)
        return self.src.execute(f"{self.head}{where} ORDER BY {self.key_sql} LIMIT ?", params).fetchall()

    def _pages(self) -> Iterator[tuple[Any, ...]]:
        last: tuple[Any, ...] | None = None
        batch = _BATCH
        while True:
            try:
                rows = self._read(last, batch)
            except sqlite3.DatabaseError:
                if batch > 1:  # narrow the failing read down to its first unreadable row
                    batch //= 2
                    continue
                rows = None
            if rows is not None:
                if not rows:
                    return
                good = _ascending(last, [tuple(r[: self.n]) for r in rows])
                yield from rows[:good]
                if good:
                    last = tuple(rows[good - 1][: self.n])
                if good == len(rows):
                    batch = _BATCH
                    continue
            self.report.unreadable += 1
            resume = self._past_damage(last)
            self._note_gap(last, resume)
            if resume is None:
                return
            last, batch = resume, _BATCH

    def _note_gap(self, last: tuple[Any, ...] | None, resume: tuple[Any, ...] | None) -> None:
        low = 0 if last is None else last[0]
        high = None if resume is None else resume[0]
        if _int(low) and (high is None or _int(high)):
            self.gaps.append((low, high))

    def _next_keys(self, after: tuple[Any, ...] | None, column_only: bool = False) -> list[tuple[Any, ...]] | None:
        """Up to three keys after `after` (None when the read fails)."""
        keys = self.keys[:1] if column_only else self.keys
        key_sql = ", ".join(keys)
        where = ""
        if after is not None:
            where = f" WHERE ({key_sql}) > ({', '.join('?' * len(after))})"
        try:
            found = self.src.execute(
                f"SELECT {key_sql} {self.frm}{where} ORDER BY {key_sql} LIMIT 3", after or ()
            ).fetchall()
        except sqlite3.DatabaseError:
            return None
        return [tuple(r) for r in found]

    def _past_damage(self, last: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        """Where reading resumes after a row that cannot be read (the rows after `last` are damaged), or
        None when nothing further can be read."""
        found = self._next_keys(last)  # the key may still be readable when the row's content is not
        if found is not None:
            if not found:
                return None
            if _ascending(last, found) == len(found):
                return found[0]  # skip exactly that row
        base = 0 if last is None else last[0]
        if not _int(base):
            return None  # text keys cannot be probed: the rest of the table is lost

        def readable(after: int) -> bool:
            keys = self._next_keys((after,), column_only=True)
            return keys is not None and _ascending((after,), keys) == len(keys)

        low, step = base, 1
        while True:  # double the jump until a read past the damage works...
            high = min(base + step, _MAX_KEY)
            if readable(high):
                break
            if high == _MAX_KEY:
                return None
            low, step = high, step * 2
        while high - low > 1:  # ...then find the closest such point
            middle = (low + high) // 2
            if readable(middle):
                high = middle
            else:
                low = middle
        return (high, *([_AFTER_ANY_KEY] * (self.n - 1)))

    def _fill_gaps(self, seen: set[int]) -> Iterator[tuple[Any, ...]]:
        budget = self._GAP_LOOKUPS
        top = max(seen, default=0)
        try:  # the last key of the table, when the damage hid the end of it
            row = self.src.execute(f"SELECT rowid {self.frm} ORDER BY rowid DESC LIMIT 1").fetchone()
            if row is not None and _int(row[0]):
                top = max(top, row[0])
        except sqlite3.DatabaseError:
            pass
        for low, high in self.gaps:
            end = top if high is None else high
            for key in range(low + 1, min(end + 1, low + 1 + budget)):
                budget -= 1
                if key in seen:
                    continue
                try:
                    row = self.src.execute(f"{self.head} WHERE rowid = ?", (key,)).fetchone()
                except sqlite3.DatabaseError:
                    continue
                if row is not None:
                    seen.add(key)
                    yield row
            if budget <= 0:
                return


def _count(src: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(src.execute(f"SELECT count(*) FROM main.{_q(table)}").fetchone()[0])
    except sqlite3.DatabaseError:
        return None


# ------------------------------------------------------------------------------------ copying
def _copy(
    src: sqlite3.Connection,
    dst: sqlite3.Connection,
    spec: _Spec,
    objects: dict[str, tuple[str, str]],
    report: RepairReport,
    progress: Progress | None,
    every: int,
) -> None:
    table = TableReport(spec.table)
    report.tables.append(table)
    table.note = _real_table(objects, spec.table)
    if table.note is not None:
        return
    try:
        present = {str(r[1]) for r in src.execute(f"PRAGMA main.table_info({_q(spec.table)})").fetchall()}
    except sqlite3.DatabaseError as exc:
        table.note = f"unreadable ({escape(str(exc), 100)})"
        return
    columns = list(spec.checks)
    exprs = [_q(c) if c in present else "NULL" for c in columns]  # an older store may lack later columns
    written = columns + list(spec.computed)
    insert = f"INSERT INTO {_q(spec.table)}({', '.join(map(_q, written))}) VALUES ({', '.join('?' * len(written))})"
    total = _count(src, spec.table)
    seen = 0
    try:
        keys = len(_keys(src, spec.table))
        for raw in _Scanner(src, spec.table, exprs, table).rows():
            seen += 1
            if progress is not None and seen % every == 0:
                progress(spec.table, seen, total)
            key = raw[0] if keys == 1 else raw[:keys]
            row = dict(zip(columns, raw[keys:], strict=True))
            row.update(dict.fromkeys(spec.computed))
            bad = next((c for c, check in spec.checks.items() if not check(row[c])), None)
            problem = f"invalid {bad}" if bad else (spec.fix(row) if spec.fix else None)
            if problem:
                report.skip(table, key, problem)
                continue
            try:
                dst.execute(insert, [row[c] for c in written])
            except sqlite3.IntegrityError as exc:  # duplicate, orphan, or a CHECK the values break
                report.skip(table, key, str(exc))
                continue
            table.kept += 1
    except sqlite3.DatabaseError as exc:
        table.note = f"unreadable ({escape(str(exc), 100)})"
    if progress is not None and seen >= every and seen % every:
        progress(spec.table, seen, total)


def _finish(db: Database) -> None:
    """Indexes and counters the copied rows need: full-text (memories, sessions) and sequence counters."""
    c = db.conn
    with db.transaction():
        for fts in ("memories_fts", "memories_trigram", "memories_words"):
            c.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
        c.execute("UPDATE counters SET value = value + 1 WHERE name = 'text_version'")
        c.execute(
            "UPDATE counters SET value = (SELECT COALESCE(MAX(seq), 0) FROM embeddings) WHERE name = 'embedding_seq'"
        )
    SessionTables(db).reindex()
    check = c.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        raise StoreUnusable(f"the rebuilt store failed its own check ({check}); the old store was left in place")


# ------------------------------------------------------------------------------------- public
def backup_name(path: Path, stamp: str | None = None) -> Path:
    stamp = stamp or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate


def repair(path: Path, *, progress: Progress | None = None, progress_every: int = 5000) -> RepairReport:
    """Rebuild the store at `path` from its readable, valid rows; keep the old file as a backup."""
    if path.is_symlink():
        raise InvalidInput(f"{path} is a symbolic link; codememory does not follow links in .codememory/: remove it")
    if not path.is_file():
        raise StoreNotFound(f"no codememory store at {path.parent} (run `codememory init` in the project first)")
    if progress_every < 1:
        raise InvalidInput("progress_every must be at least 1")
    backup = backup_name(path)
    report = RepairReport(store=str(path), backup=str(backup))
    tmp = path.with_name(f"{path.name}.repair-{os.getpid()}.tmp")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    from codememory.core.safe_files import check_sqlite_files

    check_sqlite_files(path)  # SQLite would follow a committed link at the database or its journal files
    src = _open_source(path)
    try:
        try:
            version = int(src.execute("PRAGMA user_version").fetchone()[0])
            objects = _tables(src, report)
        except sqlite3.DatabaseError as exc:
            report.readable, report.problem = False, escape(str(exc), 200)
            version, objects = 0, {}
        if version > LATEST:
            raise StoreUnusable(
                f"store {path} has schema version {version}, newer than this codememory knows ({LATEST}); "
                "upgrade codememory instead of repairing it"
            )
        db = Database.open(tmp, create=True)
        try:
            with db.transaction():
                for spec in SPECS:
                    _copy(src, db.conn, spec, objects, report, progress, progress_every)
            _finish(db)
        finally:
            db.close()
    except BaseException:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    _swap(path, tmp, backup)
    _drop_vector_cache(path.parent / "cache" / "vectors")
    return report


def _swap(path: Path, tmp: Path, backup: Path) -> None:
    """The old file (and its WAL and shared-memory files, which belong to it) become the backup; the new
    store takes its name in one rename, so `path` always names a whole store."""
    try:
        os.link(path, backup)
        linked = True
    except OSError:  # no hard links here: a moment without a store, never a mix of two
        linked = False
    for side in ("-wal", "-shm"):
        old = Path(f"{path}{side}")
        if old.exists() and not old.is_symlink():
            os.replace(old, Path(f"{backup}{side}"))
        elif old.is_symlink():
            old.unlink()
    if not linked:
        os.replace(path, backup)
    os.replace(tmp, path)


def _drop_vector_cache(folder: Path) -> None:
    """Cached vector snapshots are derived from the embeddings table: remove them (files only, never through
    a link) so they are rebuilt from the repaired table."""
    from codememory.core.safe_files import check_dir

    try:
        if not check_dir(folder):  # a link at .codememory, cache/ or vectors/ is refused, never followed
            return
    except UnsafePath:
        return
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False) or entry.is_symlink():
            Path(entry.path).unlink(missing_ok=True)
