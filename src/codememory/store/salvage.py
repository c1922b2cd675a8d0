"""Reading what can still be read from a damaged SQLite file, for `codememory repair`. Nothing the file
defines runs (trusted_schema OFF, read-only); a read that fails is narrowed down to its first unreadable
row, the damaged region is stepped over by probing keys further on, and for rowid tables the gaps the
damage left are searched by point lookups. Each damaged region stepped over is counted."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from codememory.store.rows import is_int

_BATCH = 500
_MAX_KEY = 2**63 - 1
_AFTER_ANY_KEY = b"\xff" * 64  # sorts after every integer and text key (resuming past a damaged region)


class DamageCount(Protocol):
    """Where a scan counts the damaged regions it steps over (a repair report's table)."""

    unreadable: int


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def open_read_only(path: Path) -> sqlite3.Connection:
    src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    src.execute("PRAGMA trusted_schema = OFF")  # nothing the file defines runs while it is read
    src.execute("PRAGMA cell_size_check = ON")  # report damaged pages instead of reading garbage
    src.execute("PRAGMA busy_timeout = 5000")
    return src


def schema_entries(src: sqlite3.Connection, damage: DamageCount) -> dict[str, tuple[str, str]]:
    """name -> (type, sql) of the file's readable schema entries. With writable_schema a damaged entry
    does not hide the tables that are fine (it makes SQLite skip what it cannot parse)."""
    try:
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        src.execute("PRAGMA writable_schema = ON")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # still failing: nothing is readable
    rows = list(Scanner(src, "sqlite_master", ["name", "type", "sql"], damage).rows())
    return {str(n): (str(t), str(sql or "")) for _, n, t, sql in rows}


def real_table(objects: dict[str, tuple[str, str]], name: str) -> str | None:
    """None when `name` is an ordinary table; else why it is not read."""
    found = objects.get(name)
    if found is None:
        return "not in the old store"
    kind, sql = found
    if kind != "table" or not " ".join(sql.split()).upper().startswith("CREATE TABLE"):
        return f"is a {kind} ({' '.join(sql.split())[:40]}...), not a table: not read"
    return None


def key_columns(src: sqlite3.Connection, table: str) -> list[str]:
    """The columns the table is stored in order of: rowid, or a WITHOUT ROWID table's primary key."""
    try:
        src.execute(f"SELECT rowid FROM main.{quote(table)} LIMIT 0")
        return ["rowid"]
    except sqlite3.OperationalError:
        info = src.execute(f"PRAGMA main.table_info({quote(table)})").fetchall()
        keys = [str(r[1]) for r in sorted(info, key=lambda r: r[5]) if r[5]]
        if not keys:
            raise
        return [quote(k) for k in keys]


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


class Scanner:
    """Reads every readable row of one table of the old file, in storage order: keyset pages that narrow
    down to the first unreadable row when a read fails, a jump past each damaged region (found by probing
    keys further on), and, for rowid tables, point lookups into the gaps the damage left (a lookup goes
    from the root, so it still finds rows on undamaged pages beside a damaged one)."""

    _GAP_LOOKUPS = 200_000  # point lookups per table at most

    def __init__(self, src: sqlite3.Connection, table: str, exprs: list[str], damage: DamageCount) -> None:
        self.src, self.table, self.damage = src, table, damage
        self.keys = key_columns(src, table)
        self.n = len(self.keys)
        key_sql = ", ".join(self.keys)
        self.key_sql = key_sql
        self.frm = f"FROM main.{quote(table)} NOT INDEXED"
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
            self.damage.unreadable += 1
            resume = self._past_damage(last)
            self._note_gap(last, resume)
            if resume is None:
                return
            last, batch = resume, _BATCH

    def _note_gap(self, last: tuple[Any, ...] | None, resume: tuple[Any, ...] | None) -> None:
        low = 0 if last is None else last[0]
        high = None if resume is None else resume[0]
        if is_int(low) and (high is None or is_int(high)):
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
        if not is_int(base):
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
            if row is not None and is_int(row[0]):
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


def count_rows(src: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(src.execute(f"SELECT count(*) FROM main.{quote(table)}").fetchone()[0])
    except sqlite3.DatabaseError:
        return None
