"""What a store may contain: exactly the schema objects (tables, indexes, triggers, views, FTS5 shadow
tables) that the migrations create for its recorded version, nothing more, nothing changed.

A store may come from a cloned repository, so its schema is untrusted input: an extra trigger could copy
forgotten text into a side table or corrupt the full-text index, a view could stand in for a table. Such
a store is refused when it is opened, before any statement could fire anything in it.

The expected set is built by running the migrations on an in-memory database (so FTS5's shadow tables
come out exactly as this SQLite writes them). That costs several milliseconds, too much for a hook that
opens the store on every prompt, so its digest is kept per process and in the user's state folder (a
trusted place, keyed by the migrations' text and the SQLite version); a store whose schema has that
digest is accepted with one read of sqlite_master. Anything else is compared object by object to name
the first difference.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
from pathlib import Path

from codememory.core.paths import state_dir
from codememory.core.safe_text import printable_line
from codememory.errors import UnexpectedSchema
from codememory.store.migrations import MIGRATIONS, apply

# (type, name, tbl_name, sql with runs of white space collapsed): one row of sqlite_master
SchemaObject = tuple[str, str, str, str]

REPAIR_HINT = "run 'codememory repair' to rebuild a clean store from its data"
_CACHE_FORMAT = "1"
_digests: dict[int, str] = {}


def _text(value: object) -> str:
    return "" if value is None else str(value)


def normalise(sql: object) -> str:
    return " ".join(_text(sql).split())


def read_objects(conn: sqlite3.Connection) -> list[SchemaObject]:
    """The store's schema objects, in the order they were created."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()
    return [(_text(t), _text(n), _text(tbl), normalise(sql)) for t, n, tbl, sql in rows]


@functools.cache
def expected_objects(version: int) -> frozenset[SchemaObject]:
    """The schema objects migrations 1..version create, as this SQLite writes them."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("BEGIN")
        apply(conn, 0, version, "")
        conn.execute("COMMIT")
        return frozenset(read_objects(conn))
    finally:
        conn.close()


def digest(objects: list[SchemaObject] | frozenset[SchemaObject]) -> str:
    return hashlib.sha256("\x1e".join("\x1f".join(o) for o in sorted(objects)).encode()).hexdigest()


def _cache_file(version: int) -> Path:
    key = hashlib.sha256(
        repr(
            (_CACHE_FORMAT, sqlite3.sqlite_version, [(n, name, sql) for n, name, sql, _ in MIGRATIONS if n <= version])
        ).encode()
    ).hexdigest()[:24]
    return state_dir() / "schema" / f"v{version}-{key}.sha256"


def expected_digest(version: int) -> str:
    """The digest of expected_objects(version): from this process, else the state folder, else built."""
    found = _digests.get(version)
    if found is not None:
        return found
    path = _cache_file(version)
    try:
        found = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        found = None
    if not found or len(found) != 64:
        found = digest(expected_objects(version))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(found, encoding="ascii")
            os.replace(tmp, path)
        except OSError:
            pass  # only an optimisation: the next process builds it again
    _digests[version] = found
    return found


def _quote(name: str) -> str:
    return f"'{printable_line(name[:80])}'" + ("..." if len(name) > 80 else "")


def _describe(obj: SchemaObject) -> str:
    kind, name, table, _ = obj
    where = f" on {_quote(table)}" if kind in ("index", "trigger") and table else ""
    return f"{kind or 'object'} {_quote(name)}{where}"


def first_difference(actual: list[SchemaObject], expected: frozenset[SchemaObject]) -> str | None:
    """The first object of `actual` (in creation order) that is not expected, else the first expected
    object that is missing, described in words; None when the two are the same."""
    by_name = {obj[1]: obj for obj in expected}
    for obj in actual:
        if obj in expected:
            continue
        want = by_name.get(obj[1])
        if want is None:
            return f"holds {_describe(obj)}, which codememory does not create"
        if want[0] != obj[0]:
            return f"holds {_quote(obj[1])} as a {obj[0] or 'nameless object'}; codememory creates it as a {want[0]}"
        return f"holds {_describe(obj)} with a definition codememory did not write"
    present = {obj[1] for obj in actual}
    for want in sorted(expected, key=lambda o: o[1]):
        if want[1] not in present:
            return f"lacks {_describe(want)}"
    return None


def verify(conn: sqlite3.Connection, version: int, path: Path) -> None:
    """Raise UnexpectedSchema unless the store's schema objects are exactly those of `version`."""
    actual = read_objects(conn)
    if digest(actual) == expected_digest(version):
        return
    problem = first_difference(actual, expected_objects(version))
    if problem is None:  # same objects, listed twice: sqlite_master itself was edited
        problem = "has a schema table with repeated entries"
    raise UnexpectedSchema(f"store {path} {problem}; {REPAIR_HINT}")
