"""sqlite3 errors become codememory's errors here, once, at the boundary of the store layer: the CLI, the MCP
server, the hooks, the daemon and API users see only the error tree (codememory.errors), never sqlite3.Error.

- a damaged file ('database disk image is malformed', 'file is not a database', a broken FTS5 index):
  StoreUnusable, with the repair hint;
- a lock held past the busy timeout: StoreBusy;
- the disk or the file's permissions (read-only, full, I/O error, cannot open): StoreUnusable;
- a row whose unique key is already stored: AlreadyExists (a caller that expects it, such as a fresh id
  that collides, catches that);
- anything else (a statement SQLite refuses: a bug): StoreFailed, with SQLite's own words.

Errors a store method expects (an FTS query it retries, a constraint it handles) are caught inside the
method, before they reach this boundary.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from codememory.core.safe_text import printable_line
from codememory.errors import AlreadyExists, CodememoryError, StoreBusy, StoreFailed, StoreUnusable
from codememory.store.schema import REPAIR_HINT

T = TypeVar("T")

# primary result codes (https://sqlite.org/rescode.html)
_DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_DISK = {3, 8, 10, 13, 14, 15, 22, 23}  # PERM, READONLY, IOERR, FULL, CANTOPEN, PROTOCOL, NOLFS, AUTH
_DAMAGE_TEXT = ("fts5: corrupt", "invalid fts5 file format", "disk image is malformed", "malformed database schema")
_UNIQUE = {1555, 2067}  # SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE
_UNIQUE_TEXT = "UNIQUE constraint failed: "
_WRAPPED = "__translates_sqlite_errors__"


def file_problem(exc: sqlite3.Error, path: Path | str | None, busy_seconds: float) -> StoreUnusable | None:
    """The StoreUnusable (or StoreBusy) this error stands for when it is about the store's file itself."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    detail = printable_line(str(exc), 300)
    where = f"store {path}" if path else "the store"
    if primary in _DAMAGED or type(exc) is sqlite3.DatabaseError or any(s in detail for s in _DAMAGE_TEXT):
        return StoreUnusable(f"{where} is unreadable or corrupt ({detail}); {REPAIR_HINT}")
    if primary in _BUSY:
        return StoreBusy(
            f"{where} stayed locked by another process for {busy_seconds:.0f} s ({detail}); try again, "
            "or stop the process that holds it"
        )
    if primary in _DISK:
        return StoreUnusable(
            f"{where} could not be read or written ({detail}); check the free disk space and the permissions "
            "of the file and its folder"
        )
    return None


def lock_or_access(exc: sqlite3.Error, path: Path | str | None, busy_seconds: float) -> StoreUnusable | None:
    """The StoreBusy or StoreUnusable for an error about the file's lock or permissions, never its contents: a
    check that called it damage would have repair swap the file under the process that holds it (whose writes
    would then land in the backup)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _BUSY | _DISK:
        return file_problem(exc, path, busy_seconds)
    return None


def translate(exc: sqlite3.Error, path: Path | str | None, busy_seconds: float) -> CodememoryError:
    """The error of codememory's tree that this sqlite3 error stands for."""
    about_file = file_problem(exc, path, busy_seconds)
    if about_file is not None:
        return about_file
    text = str(exc)
    if getattr(exc, "sqlite_errorcode", None) in _UNIQUE and text.startswith(_UNIQUE_TEXT):
        return AlreadyExists(text, text.removeprefix(_UNIQUE_TEXT))
    return StoreFailed(text)


def _path_of(obj: Any) -> Path | None:
    path = getattr(obj, "path", None)
    if path is None:
        path = getattr(getattr(obj, "db", None), "path", None)
    return path if isinstance(path, Path) else None


def _wrap(fn: Callable[..., Any], busy_seconds: float) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def generator(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from fn(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise translate(exc, _path_of(self), busy_seconds) from exc

        setattr(generator, _WRAPPED, True)
        return generator

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise translate(exc, _path_of(self), busy_seconds) from exc

    setattr(call, _WRAPPED, True)
    return call


def store_errors(busy_seconds: float) -> Callable[[type[T]], type[T]]:
    """Class decorator: every public method (and generator) of the class, its own and those it inherits
    from the table groups it is made of, translates sqlite3 errors. `transaction()` context managers
    translate their own BEGIN and COMMIT (see StoreConnection.transaction)."""

    def decorate(cls: type[T]) -> type[T]:
        names = {name for klass in cls.__mro__[:-1] for name in vars(klass)}
        for name in sorted(names):
            if name.startswith("_") or name == "transaction":
                continue
            attr = inspect.getattr_static(cls, name)  # the definition attribute lookup finds
            if inspect.isfunction(attr) and not getattr(attr, _WRAPPED, False):
                setattr(cls, name, _wrap(attr, busy_seconds))
        return cls

    return decorate
