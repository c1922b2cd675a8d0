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
- the old file is kept beside it as memory.db.bak-<UTC time>, what its WAL held checkpointed into it (the
  -wal/-shm files stay beside it only when that fails): repair never deletes data. The cached vector index
  files under cache/vectors/ are removed; they are rebuilt from the table.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from codememory.core.dates import now_iso
from codememory.core.machine import machine_id
from codememory.core.result import Result
from codememory.errors import InvalidInput, StoreNotFound, StoreUnusable, UnsafePath
from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.database import Database
from codememory.store.failures import lock_or_access, translate
from codememory.store.migrations import LATEST, MIGRATIONS
from codememory.store.repair_rules import SPECS, TableSpec
from codememory.store.rows import escape
from codememory.store.salvage import Scanner, count_rows, key_columns, open_read_only, quote, real_table, schema_entries
from codememory.store.sessions import SessionTables
from codememory.text.instructions import is_instruction_like

# The migration that records where each memory came from (store_meta among it), found by its name.
PROVENANCE_VERSION = next(number for number, name, *_ in MIGRATIONS if name.startswith("provenance"))

Progress = Callable[[str, int, int | None], None]  # (table, rows read so far, rows in the table or None)

_MAX_EXAMPLES = 20


# -------------------------------------------------------------------------------------- report
@dataclass
class TableReport(Result):
    """What repair did with one table of the old store."""

    table: str
    kept: int = 0
    skipped: int = 0  # rows read but refused (invalid values, duplicates, orphans)
    unreadable: int = 0  # damaged regions stepped over (each may hide one or more rows)
    corrected: int = 0  # rows kept with values the store would not read as stored (dropped to their defaults)
    note: str | None = None  # why the table was not read at all


@dataclass
class RepairReport(Result):
    """`codememory repair --json`: whether the store needed repair (`problems`: what its checks found), the
    rebuilt store and its backup (None when nothing was rebuilt), and what became of each table's rows
    (`memories`: the memories table's counts, repeated at the top)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"memories": dict[str, int], "healthy": bool}

    store: str
    backup: str | None
    rebuilt: bool = False  # False: the store was healthy and left as it was (no --force)
    problems: list[str] = field(default_factory=list)  # why it needs repair; [] for a healthy store
    tables: list[TableReport] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)  # the first skipped rows and why
    readable: bool = True  # False: the old file could not be read as a database (no table was read)
    problem: str | None = None  # what made the old file unreadable
    from_memory_files: int = 0  # memories the new store took from the shared text form (.codememory/memories/)

    @property
    def healthy(self) -> bool:
        return not self.problems

    def table(self, name: str) -> TableReport:
        return next(t for t in self.tables if t.table == name)

    def to_dict(self) -> dict[str, Any]:
        memories = self.table("memories")
        return {
            "store": self.store,
            "healthy": self.healthy,
            "rebuilt": self.rebuilt,
            "problems": list(self.problems),
            "backup": self.backup,
            "readable": self.readable,
            "problem": self.problem,
            "from_memory_files": self.from_memory_files,
            "memories": {"kept": memories.kept, "skipped": memories.skipped, "unreadable": memories.unreadable},
            "tables": [t.to_dict() for t in self.tables],
            "examples": list(self.examples),
        }

    def table_problems(self) -> list[str]:
        """What the copy of the rows found that a rebuild would change (skip, step over or correct)."""
        problems = []
        for t in self.tables:
            found = [
                f"{what}: {count:,}"
                for count, what in (
                    (t.skipped, "invalid rows"),
                    (t.unreadable, "damaged regions"),
                    (t.corrected, "rows with invalid values"),
                )
                if count
            ]
            if t.note and (t.note != "not in the old store" or t.table == "memories"):
                found.append(t.note)
            if found:
                problems.append(f"{t.table}: {', '.join(found)}")
        return problems

    def skip(self, report: TableReport, key: Any, why: str) -> None:
        report.skipped += 1
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(f"{report.table} row {escape(key, 40)}: {escape(why, 200)}")


def _tables(src: sqlite3.Connection, report: RepairReport) -> dict[str, tuple[str, str]]:
    """name -> (type, sql) of the old file's readable schema entries; damage to the schema itself is reported."""
    schema = TableReport("sqlite_master")
    objects = schema_entries(src, schema)
    if schema.unreadable:
        schema.note = (
            f"the schema has {schema.unreadable} damaged region(s): tables whose entries could not be read were lost"
        )
        report.tables.append(schema)
    return objects


# ------------------------------------------------------------------------------------ copying
def _copy(
    src: sqlite3.Connection,
    dst: sqlite3.Connection,
    spec: TableSpec,
    objects: dict[str, tuple[str, str]],
    report: RepairReport,
    progress: Progress | None,
    every: int,
) -> None:
    table = TableReport(spec.table)
    report.tables.append(table)
    table.note = real_table(objects, spec.table)
    if table.note is not None:
        return
    try:
        present = {str(r[1]) for r in src.execute(f"PRAGMA main.table_info({quote(spec.table)})").fetchall()}
    except sqlite3.DatabaseError as exc:
        table.note = f"unreadable ({escape(str(exc), 100)})"
        return
    columns = list(spec.checks)
    exprs = [quote(c) if c in present else "NULL" for c in columns]  # an older store may lack later columns
    written = columns + list(spec.computed)
    stored = [c for c in spec.computed if c in present]  # values the new store computes: compared, not copied
    exprs += [quote(c) for c in stored]
    compared = [c for c in written if c in present]
    insert = (
        f"INSERT INTO {quote(spec.table)}({', '.join(map(quote, written))}) VALUES ({', '.join('?' * len(written))})"
    )
    total = count_rows(src, spec.table)
    seen = 0
    try:
        keys = len(key_columns(src, spec.table))
        for raw in Scanner(src, spec.table, exprs, table).rows():
            seen += 1
            if progress is not None and seen % every == 0:
                progress(spec.table, seen, total)
            key = raw[0] if keys == 1 else raw[:keys]
            row = dict(zip(columns, raw[keys : keys + len(columns)], strict=True))
            row.update(dict.fromkeys(spec.computed))
            old = {**row, **dict(zip(stored, raw[keys + len(columns) :], strict=True))}
            bad = next((c for c, check in spec.checks.items() if not check(row[c])), None)
            problem = f"invalid {bad}" if bad else (spec.fix(row) if spec.fix else None)
            if problem:
                report.skip(table, key, problem)
                continue
            try:
                if spec.writer is not None:
                    spec.writer(dst, row)
                else:
                    dst.execute(insert, [row[c] for c in written])
            except sqlite3.IntegrityError as exc:  # duplicate, orphan, or a CHECK the values break
                report.skip(table, key, str(exc))
                continue
            table.kept += 1
            if any(_differs(old[c], row[c]) for c in compared):
                table.corrected += 1
    except sqlite3.DatabaseError as exc:
        table.note = f"unreadable ({escape(str(exc), 100)})"
    if progress is not None and seen >= every and seen % every:
        progress(spec.table, seen, total)


def _differs(old: Any, new: Any) -> bool:
    """Whether repair changed a stored value (1 and 1.0 are the same value; a value of another type is not)."""
    return old != new or (type(old) is not type(new) and not {type(old), type(new)} <= {int, float})


def _finish(db: Database) -> int:
    """Indexes and counters the copied rows need: full-text (memories, sessions) and sequence counters. How many
    embedding rows were dropped for want of their vector (or vectors for want of their row)."""
    c = db.conn
    with db.transaction():
        for fts in ("memories_fts", "memories_trigram", "memories_words"):
            c.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")
        c.execute("UPDATE counters SET value = value + 1 WHERE name = 'text_version'")
        # A vector needs its row and a row its vector (from a damaged or older store either may be missing).
        orphans = c.execute("DELETE FROM embedding_vectors WHERE seq NOT IN (SELECT seq FROM embeddings)").rowcount
        orphans += c.execute("DELETE FROM embeddings WHERE seq NOT IN (SELECT seq FROM embedding_vectors)").rowcount
        c.execute(
            "UPDATE counters SET value = (SELECT COALESCE(MAX(seq), 0) FROM embeddings) WHERE name = 'embedding_seq'"
        )
    SessionTables(db).reindex()
    check = c.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        raise StoreUnusable(f"the rebuilt store failed its own check ({check}); the old store was left in place")
    return orphans


def _made_here(src: sqlite3.Connection, objects: dict[str, tuple[str, str]]) -> bool:
    """Whether the old file records this machine as its home (store_meta, service/provenance_check.py)."""
    if real_table(objects, "store_meta") is not None:
        return False
    try:
        row = src.execute("SELECT value FROM store_meta WHERE name = 'home'").fetchone()
        home = json.loads(row[0]) if row and isinstance(row[0], str) else None
    except (sqlite3.DatabaseError, ValueError, RecursionError):
        return False
    machines = home.get("machines") if isinstance(home, dict) else None
    return isinstance(machines, list) and machine_id() in machines


# ------------------------------------------------------------------------------------- public
def backup_name(path: Path, stamp: str | None = None) -> Path:
    stamp = stamp or time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    candidate = path.with_name(f"{path.name}.bak-{stamp}")
    n = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return candidate


def repair(
    path: Path, *, force: bool = False, progress: Progress | None = None, progress_every: int = 5000
) -> RepairReport:
    """Rebuild the store at `path` from its readable, valid rows and keep the old file as a backup, when its
    checks find something to repair (or `force`); a healthy store is left as it is, with no backup."""
    try:
        return _repair(path, force, progress, progress_every)
    except sqlite3.Error as exc:  # the new file failing, or the old one where no single row is at stake
        raise translate(exc, path, BUSY_TIMEOUT_S) from exc


def _repair(path: Path, force: bool, progress: Progress | None, progress_every: int) -> RepairReport:
    if path.is_symlink():
        raise InvalidInput(f"{path} is a symbolic link; codememory does not follow links in .codememory/: remove it")
    if not path.is_file():
        raise StoreNotFound(f"no codememory store at {path.parent} (run `codememory init` in the project first)")
    if progress_every < 1:
        raise InvalidInput("progress_every must be at least 1")
    backup = backup_name(path)
    report = RepairReport(store=str(path), backup=str(backup))
    tmp = path.with_name(f"{path.name}.repair-{os.getpid()}.tmp")
    _remove_database(tmp)
    from codememory.core.safe_files import check_sqlite_files

    check_sqlite_files(path)  # SQLite would follow a committed link at the database or its journal files
    src = open_read_only(path)
    try:
        try:
            version = int(src.execute("PRAGMA user_version").fetchone()[0])
            objects = _tables(src, report)
        except sqlite3.DatabaseError as exc:
            if (about_access := lock_or_access(exc, path, BUSY_TIMEOUT_S)) is not None:
                raise about_access from exc
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
            if version >= PROVENANCE_VERSION and not _made_here(src, objects):
                # Another machine's store (committed, copied): its rows' origins are its claims, not ours.
                # Not a reason to repair: opening such a store sorts its origins out itself (provenance_check).
                pending = [pk for pk, text in db.texts() if is_instruction_like(text)]
                db.mark_committed(None, now_iso(), pending, None)
            orphans = _finish(db)
        finally:
            db.close()
        # The checks run on the rebuilt copy's findings, so a healthy store costs as much time as a repair, never
        # a backup: the copy is discarded and the store left as it was.
        report.problems = _problems(src, path, version, report, orphans)
    except BaseException:
        _remove_database(tmp)
        raise
    finally:
        src.close()
    if report.healthy and not force:
        _remove_database(tmp)
        report.backup = None
        return report
    report.rebuilt = True
    _swap(path, tmp, backup)
    _drop_vector_cache(path.parent / "cache" / "vectors")
    return report


def _remove_database(path: Path) -> None:
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)


def _problems(src: sqlite3.Connection, path: Path, version: int, report: RepairReport, orphans: int) -> list[str]:
    """Why the store needs repair (repair_checks.py says what is checked); [] when nothing does."""
    if not report.readable:
        return [f"the file cannot be read as a database ({report.problem})"]
    from codememory.store.repair_checks import file_problems

    problems = file_problems(src, path, version) + report.table_problems()
    if orphans:
        problems.append(f"embeddings: rows without their vector (or vectors without their row): {orphans:,}")
    return problems


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
    _fold_sidecars(backup)


def _fold_sidecars(backup: Path) -> None:
    """The backup as one file: the frames its WAL still holds are checkpointed into it and the -wal/-shm files go
    (SQLite removes them when the last connection closes a database whose WAL is empty), so that each repair
    leaves one file, not three. A checkpoint copies pages and runs none of the file's SQL; if it fails (a damaged
    file), the three files stay as they are, together: nothing is lost."""
    wal, shm = Path(f"{backup}-wal"), Path(f"{backup}-shm")
    if not wal.exists() and not shm.exists():
        return
    try:
        conn = sqlite3.connect(f"file:{backup}?mode=rw", uri=True, isolation_level=None)
        try:
            conn.execute("PRAGMA trusted_schema = OFF")
            busy, _frames, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                return
        finally:
            conn.close()
    except sqlite3.Error:
        return
    if wal.exists() and wal.stat().st_size == 0:  # a rollback-journal file that had an empty WAL beside it
        wal.unlink()
        shm.unlink(missing_ok=True)


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
