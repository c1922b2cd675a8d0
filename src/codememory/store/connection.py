"""A project's SQLite connection: opening it (configuration, the schema check, migrations), write
transactions, and the sqlite3 errors of both turned into codememory's errors (failures.py). The table
groups (memories.py, links.py, ...) build on it; database.py puts them together."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Self

from codememory.core.dates import now_iso
from codememory.core.safe_files import check_sqlite_files
from codememory.errors import StoreFailed, StoreNotFound, StoreUnusable
from codememory.store import schema
from codememory.store.failures import file_problem, translate
from codememory.store.migrations import LATEST, apply

if TYPE_CHECKING:
    from codememory.store.filters import Filters

BUSY_TIMEOUT_S = 30.0
_LOCK_RETRIES = 5


class StoreConnection:
    """WAL, busy timeout, BEGIN IMMEDIATE writes, migrations on open. The file is untrusted input: its
    schema must be exactly the migrations' (schema.py), nothing stored in it runs (trusted_schema OFF),
    and sqlite3 errors about the file itself become StoreUnusable."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._depth = 0  # transactions open on this connection (an inner one joins the outer one)
        self._scratch_changes = 0  # rows this connection wrote to its own TEMP tables (never the store's data)

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> Self:
        if not create and not path.exists():
            raise StoreNotFound(f"no codememory store at {path.parent} (run `codememory init` in the project first)")
        check_sqlite_files(path)  # SQLite would follow a committed link at the database or its journal
        try:
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreUnusable(f"cannot open store {path}: {exc}") from None
        db = cls(conn, path)
        try:
            db._configure()
            db._migrate()
        except (sqlite3.DatabaseError, StoreFailed) as exc:
            conn.close()
            raw = (exc.__cause__ or exc) if isinstance(exc, StoreFailed) else exc  # StoreFailed: BEGIN, COMMIT
            unusable = file_problem(raw, path, BUSY_TIMEOUT_S) if isinstance(raw, sqlite3.Error) else None
            raise (unusable or StoreUnusable(f"store {path} is unreadable or corrupt: {raw}")) from None
        except BaseException:
            conn.close()
            raise
        return db

    def _configure(self) -> None:
        c = self.conn
        # Nothing the file defines (a trigger, a view, a default) may call functions or write virtual
        # tables on our behalf: the schema is also checked, this is the second wall.
        c.execute("PRAGMA trusted_schema = OFF")
        c.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if c.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")
        # Forgotten text must not linger in freed pages of the file.
        c.execute("PRAGMA secure_delete = ON")

    def _checked_version(self) -> int:
        """The recorded schema version, once the schema objects are known to be exactly that version's."""
        version = self._user_version()
        self._refuse_newer(max(version, self._newest_migration()))
        if version < 0:
            raise StoreUnusable(f"store {self.path} has schema version {version}, which no codememory writes")
        schema.verify(self.conn, version, self.path)
        return version

    def _refuse_newer(self, version: int) -> None:
        if version > LATEST:
            raise StoreUnusable(
                f"store {self.path} has schema version {version}, newer than this codememory knows "
                f"({LATEST}); upgrade codememory"
            )

    def _newest_migration(self) -> int:
        """The highest migration `schema_migrations` records (0 without the table): a newer codememory records its
        own there, whatever `user_version` says."""
        try:
            row = self.conn.execute("SELECT MAX(version) FROM schema_migrations WHERE typeof(version) = 'integer'")
        except sqlite3.OperationalError:
            return 0
        found = row.fetchone()
        return int(found[0]) if found and isinstance(found[0], int) else 0

    def check_current(self) -> None:
        """StoreUnusable once a newer codememory has migrated the store under an open connection (a process that
        keeps stores open, the daemon or an MCP server, asks before each use: one PRAGMA)."""
        self._refuse_newer(self._user_version())

    def _migrate(self) -> None:
        """Bring a store whose schema is exactly an older version's up to date (never a foreign one)."""
        version = self._checked_version()
        if version == LATEST:
            return
        with self.transaction():
            if self._user_version() != version:  # another process migrated meanwhile
                version = self._checked_version()
            apply(self.conn, version, LATEST, now_iso())
        self._give_back_space()

    def _give_back_space(self) -> None:
        """After a migration that moved most of the file (the vectors' move frees two-thirds of a store with
        vectors), rewrite it so the freed pages leave the disk instead of waiting in the file to be reused."""
        pages = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(self.conn.execute("PRAGMA freelist_count").fetchone()[0])
        if pages > 256 and free > pages // 4:
            with suppress(sqlite3.Error):  # busy, or no room for the copy: the file stays as large, nothing lost
                self.conn.execute("VACUUM")

    def close(self) -> None:
        self.conn.close()

    def passing(self, pks: Sequence[int], filters: Filters) -> set[int]:
        """Which of these memories pass the filters."""
        where, params = filters.where()
        out: set[int] = set()
        for chunk in chunks(list(pks)):
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT m.pk FROM memories m WHERE m.pk IN ({','.join('?' * len(chunk))}) AND {where}",
                    (*chunk, *params),
                )
            )
        return out

    def write_stamp(self) -> tuple[int, int]:
        """Moves whenever the store is written, by this connection or another one (not when this connection
        fills a TEMP table of its own: `scratch_writes`)."""
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        return version, self.conn.total_changes - self._scratch_changes

    @contextmanager
    def scratch_writes(self) -> Iterator[None]:
        """Writes to this connection's TEMP tables alone, which `write_stamp` does not count (the caller holds a
        lock that keeps other writes on this connection out meanwhile)."""
        before = self.conn.total_changes
        try:
            yield
        finally:
            self._scratch_changes += self.conn.total_changes - before

    def schema_version(self) -> int:
        return self._user_version()

    def _user_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    # ------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the write lock up front (deferred read-then-write
        transactions fail with 'database is locked' without waiting for the busy timeout). Opened inside another
        one, it is part of it: the outer one commits or rolls back both (a bulk import around its batches)."""
        if self._depth:
            name = f"inner_{self._depth}"
            self.conn.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute(f"ROLLBACK TO {name}")
                        self.conn.execute(f"RELEASE {name}")
                raise
            else:
                self.conn.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        for attempt in range(_LOCK_RETRIES):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == _LOCK_RETRIES - 1:
                    _raise_translated(exc, self.path)
                time.sleep(0.05 * (attempt + 1))
        self._depth = 1
        try:
            yield self.conn
        except BaseException:
            self._depth = 0
            # SQLite rolls back by itself after some errors (disk full, I/O, corruption): a second
            # ROLLBACK would fail and hide the error that matters.
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise
        else:
            self._depth = 0
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                _raise_translated(exc, self.path)


def _raise_translated(exc: sqlite3.Error, path: Path) -> NoReturn:
    raise translate(exc, path, BUSY_TIMEOUT_S) from exc


def chunks(items: Sequence[Any], size: int = 500) -> Iterator[list[Any]]:
    """`items` in lists of at most `size`: SQLite takes a bounded number of parameters per statement."""
    for i in range(0, len(items), size):
        yield list(items[i : i + size])
