"""BM25 passes started ahead, on a second read-only connection in a background thread, while the caller does
something else that does not hold the interpreter (embedding the query: the model's engine and SQLite both let go
of it). A hybrid search needs both the query's vector and its keyword pass, and neither needs the other: on two
cores the pass costs nothing more than the embedding. The answer is the one the store's own connection would give:
a pass is started only outside a write transaction (uncommitted rows are invisible to another connection) and used
only while the store's text is as it was when the pass started."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

BM25_PASS = (
    "SELECT rowid, bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ? "
    "ORDER BY score, rowid LIMIT ?"
)
_PENDING = 4  # passes waiting to be used: a search asks for one or two; the oldest are dropped unread


class KeywordPrefetch:
    """Passes of `BM25_PASS` run ahead for one store file; `take` hands over a finished one (or None)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._reader: sqlite3.Connection | None = None
        self._pending: dict[tuple[str, int], tuple[int, Future[list[tuple[int, float]]]]] = {}

    def start(self, match: str, inner: int, version: int) -> None:
        key = (match, inner)
        with self._lock:
            if key in self._pending:
                return
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor  # on first use: CLI start-up stays light

                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codememory-bm25")
            while len(self._pending) >= _PENDING:
                self._pending.pop(next(iter(self._pending)))[1].cancel()
            self._pending[key] = (version, self._pool.submit(self._run, match, inner))

    def take(self, match: str, inner: int, version: int) -> list[tuple[int, float]] | None:
        with self._lock:
            found = self._pending.pop((match, inner), None)
        if found is None or found[0] != version:
            return None
        try:
            return found[1].result()
        except (sqlite3.Error, OSError):
            return None  # the caller runs the pass itself and meets the error (if any) there

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            for _, future in self._pending.values():
                future.cancel()
            self._pending.clear()
        if pool is not None:
            pool.shutdown(wait=True)
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _run(self, match: str, inner: int) -> list[tuple[int, float]]:
        if self._reader is None:  # only this worker thread uses it
            reader = sqlite3.connect(f"{self._path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            reader.execute("PRAGMA trusted_schema = OFF")  # as the store's own connection (connection.py)
            reader.execute("PRAGMA query_only = ON")
            self._reader = reader
        rows: list[tuple[int, float]] = self._reader.execute(BM25_PASS, (match, inner)).fetchall()
        return rows
