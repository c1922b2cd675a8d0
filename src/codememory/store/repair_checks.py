"""Whether a store needs `codememory repair`: the file-level checks (repair.py adds what its copy of the rows
found). A store is called healthy only when nothing any command would send the user to repair for is there:

- its schema is exactly the migrations' (schema.verify: what opening it checks, UnexpectedSchema otherwise);
- SQLite finds its pages and indexes sound (PRAGMA integrity_check: what a read of a damaged page would report
  as 'disk image is malformed', failures.py);
- its full-text indexes match the rows they index (FTS5 'integrity-check': a broken index fails a search with
  'fts5: corrupt' or 'malformed', failures.py);
- and, found by repair's copy (repair.py), every row passes the checks the store makes as it reads (rows.py,
  whose warnings advise repair) and the new schema's constraints, with nothing to correct and nothing unreadable.

Each check runs only once the ones before it passed: the integrity and full-text checks evaluate the schema's
definitions, so they run only on a schema known to be codememory's own.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codememory.errors import UnexpectedSchema
from codememory.store.failures import lock_or_access
from codememory.store.rows import escape
from codememory.store.schema import REPAIR_HINT, expected_objects, verify

_FULL_TEXT = ("memories_fts", "memories_trigram", "memories_words", "sessions_fts")
_INTEGRITY_LINES = 5  # of SQLite's findings, the first few are named
_BUSY_MS = 5000


def file_problems(src: sqlite3.Connection, path: Path, version: int) -> list[str]:
    """What makes the file itself need repair (schema, pages, full-text indexes); [] when nothing does.
    `src` is repair's read-only connection (trusted_schema OFF)."""
    try:
        verify(src, version, path)
    except UnexpectedSchema as exc:
        return [str(exc).removesuffix(f"; {REPAIR_HINT}")]
    except sqlite3.DatabaseError as exc:
        return [f"its schema cannot be read ({escape(str(exc), 200)})"]
    try:
        found = [str(r[0]) for r in src.execute(f"PRAGMA integrity_check({_INTEGRITY_LINES})").fetchall()]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    if found != ["ok"]:
        return [f"SQLite's integrity check failed: {escape('; '.join(found), 300)}"]
    present = {obj[1] for obj in expected_objects(version)}
    return _full_text_problems(path, [t for t in _FULL_TEXT if t in present])


def _full_text_problems(path: Path, tables: list[str]) -> list[str]:
    """FTS5's own check of each index against its rows. FTS5 runs it as an INSERT, which a read-only connection
    refuses, so it runs in a transaction that is rolled back: nothing is written."""
    if not tables:
        return []
    problems = []
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        _raise_unless_damage(exc, path)
        return [f"its full-text indexes could not be checked ({escape(str(exc), 200)})"]
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute("BEGIN")
        for table in tables:
            try:
                conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.Error as exc:
                _raise_unless_damage(exc, path)
                problems.append(f"its full-text index {table} does not match its rows ({escape(str(exc), 200)})")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        _raise_unless_damage(exc, path)
        problems.append(f"its full-text indexes could not be checked ({escape(str(exc), 200)})")
    finally:
        conn.close()
    return problems


def _raise_unless_damage(exc: sqlite3.Error, path: Path) -> None:
    if (about_access := lock_or_access(exc, path, _BUSY_MS / 1000)) is not None:
        raise about_access from exc
