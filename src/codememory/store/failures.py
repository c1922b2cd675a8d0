"""sqlite3 errors that mean the store itself cannot be used become one StoreUnusable with a recovery hint,
at the boundary of the store layer, so the CLI, the MCP server, the hooks and the daemon (which all turn
codememory errors into one line) never show a traceback for them:

- a damaged file ('database disk image is malformed', 'file is not a database', a broken FTS5 index);
- a lock held past the busy timeout;
- the disk or the file's permissions (read-only, full, I/O error, cannot open).

Other sqlite3 errors (an FTS query the caller retries, a constraint the caller expects) pass unchanged.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from codememory.core.safe_text import printable_line
from codememory.errors import StoreUnusable
from codememory.store.schema import REPAIR_HINT

T = TypeVar("T")

# primary result codes (https://sqlite.org/rescode.html)
_DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_DISK = {3, 8, 10, 13, 14, 15, 22, 23}  # PERM, READONLY, IOERR, FULL, CANTOPEN, PROTOCOL, NOLFS, AUTH
_DAMAGE_TEXT = ("fts5: corrupt", "invalid fts5 file format", "disk image is malformed", "malformed database schema")


def translate(exc: sqlite3.Error, path: Path | str | None, busy_seconds: float) -> StoreUnusable | None:
    """The StoreUnusable this error stands for, or None when it is not about the store itself."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    detail = printable_line(str(exc), 300)
    where = f"store {path}" if path else "the store"
    if primary in _DAMAGED or type(exc) is sqlite3.DatabaseError or any(s in detail for s in _DAMAGE_TEXT):
        return StoreUnusable(f"{where} is unreadable or corrupt ({detail}); {REPAIR_HINT}")
    if primary in _BUSY:
        return StoreUnusable(
            f"{where} stayed locked by another process for {busy_seconds:.0f} s ({detail}); try again, "
            "or stop the process that holds it"
        )
    if primary in _DISK:
        return StoreUnusable(
            f"{where} could not be read or written ({detail}); check the free disk space and the permissions "
            "of the file and its folder"
        )
    return None


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
                unusable = translate(exc, _path_of(self), busy_seconds)
                if unusable is None:
                    raise
                raise unusable from exc

        return generator

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.Error as exc:
            unusable = translate(exc, _path_of(self), busy_seconds)
            if unusable is None:
                raise
            raise unusable from exc

    return call


def store_errors(busy_seconds: float) -> Callable[[type[T]], type[T]]:
    """Class decorator: every public method (and generator) translates store-level sqlite3 errors.
    `transaction()` context managers translate their own BEGIN/COMMIT (see Database.transaction)."""

    def decorate(cls: type[T]) -> type[T]:
        for name, attr in list(vars(cls).items()):
            if name.startswith("_") or name == "transaction" or not inspect.isfunction(attr):
                continue
            setattr(cls, name, _wrap(attr, busy_seconds))
        return cls

    return decorate
