"""The only module that speaks SQL. Everything above it works with Memory objects and opaque row keys."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from codememory.core.dates import now_iso
from codememory.core.model import CATEGORIES, LINK_TYPES, Memory, session_position
from codememory.core.safe_files import check_sqlite_files
from codememory.errors import StoreNotFound, StoreUnusable
from codememory.store import schema
from codememory.store.failures import store_errors, translate
from codememory.store.migrations import LATEST, apply
from codememory.store.rows import VALID_MEMORY_SQL, escape, is_label, is_memory_id, is_tag, memory_from_row, warn

BUSY_TIMEOUT_S = 30.0
_LOCK_RETRIES = 5
# Kept by this module's own statements (no triggers since schema 7, so trusted_schema can be OFF).
_FTS_TABLES = ("memories_fts", "memories_trigram", "memories_words")

_MEMORY_COLUMNS = (
    "m.pk, m.id, m.text, m.category, m.importance, m.entered_by, m.source, m.created_at, m.updated_at, "
    "m.expires_at, m.access_count, m.last_accessed_at, m.archived, m.superseded_by"
)
SORT_COLUMNS = {
    "created": "m.created_at",
    "updated": "m.updated_at",
    "expires": "m.expires_at",
    "importance": "m.importance",
    "accessed": "m.last_accessed_at",
    "content": "m.text COLLATE NOCASE",
}


_INSERT_COLUMNS = (
    "id, text, text_hash, category, importance, entered_by, source, created_at, updated_at, expires_at, "
    "access_count, last_accessed_at, archived, superseded_by, session_key, seq"
)


def _insert_row(mem: Memory) -> tuple[Any, ...]:
    return (
        mem.id,
        mem.text,
        text_hash(mem.text),
        mem.category,
        mem.importance,
        mem.entered_by,
        mem.source,
        mem.created_at,
        mem.updated_at,
        mem.expires_at,
        mem.access_count,
        mem.last_accessed_at,
        int(mem.archived),
        mem.superseded_by,
        *session_position(mem.source),
    )


def text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


@dataclass
class Filters:
    """Restrictions shared by search, list and count. Times are canonical ISO strings."""

    now: str = field(default_factory=now_iso)
    tags_all: list[str] = field(default_factory=list)
    tags_any: list[str] = field(default_factory=list)
    after: str | None = None
    before: str | None = None
    entered_by: str | None = None
    categories: list[str] = field(default_factory=list)
    include_expired: bool = False
    include_archived: bool = False
    include_superseded: bool = False
    entities: list[str] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = [VALID_MEMORY_SQL]  # a row the mapper would skip is never a candidate
        params: list[Any] = []
        if not self.include_archived:
            clauses.append("m.archived = 0")
        if not self.include_superseded:
            clauses.append("m.superseded_by IS NULL")
        if not self.include_expired:
            clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
            params.append(self.now)
        if self.after:
            clauses.append("m.created_at >= ?")
            params.append(self.after)
        if self.before:
            clauses.append("m.created_at < ?")
            params.append(self.before)
        if self.entered_by:
            clauses.append("m.entered_by = ?")
            params.append(self.entered_by)
        if self.categories:
            clauses.append(f"m.category IN ({','.join('?' * len(self.categories))})")
            params.extend(self.categories)
        if self.tags_all:
            clauses.append(
                "m.pk IN (SELECT mt.memory_pk FROM memory_tags mt JOIN tags t ON t.id = mt.tag_id "
                f"WHERE t.name IN ({','.join('?' * len(self.tags_all))}) "
                "GROUP BY mt.memory_pk HAVING COUNT(*) = ?)"
            )
            params.extend(self.tags_all)
            params.append(len(self.tags_all))
        if self.entities:
            clauses.append(
                "EXISTS (SELECT 1 FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk = m.pk AND e.name IN ({','.join('?' * len(self.entities))}))"
            )
            params.extend(self.entities)
        if self.tags_any:
            clauses.append(
                "EXISTS (SELECT 1 FROM memory_tags mt JOIN tags t ON t.id = mt.tag_id "
                f"WHERE mt.memory_pk = m.pk AND t.name IN ({','.join('?' * len(self.tags_any))}))"
            )
            params.extend(self.tags_any)
        return (" AND ".join(clauses) or "1"), params


@dataclass
class RankRow:
    pk: int
    text: str
    importance: float
    created_at: str


@store_errors(BUSY_TIMEOUT_S)
class Database:
    """A project's SQLite store: WAL, busy timeout, BEGIN IMMEDIATE writes, migrations on open. The file
    is untrusted input: its schema must be exactly the migrations' (schema.py), nothing stored in it runs
    (trusted_schema OFF), rows are checked as they are read (rows.py), and sqlite3 errors about the file
    itself become StoreUnusable (failures.py)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._vocab_key: int | None = None
        self._vocab: list[str] = []
        self._vocab_set: frozenset[str] = frozenset()

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> Database:
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
        except sqlite3.DatabaseError as exc:
            conn.close()
            unusable = translate(exc, path, BUSY_TIMEOUT_S)
            raise (unusable or StoreUnusable(f"store {path} is unreadable or corrupt: {exc}")) from None
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
        version = self.schema_version()
        if version > LATEST:
            raise StoreUnusable(
                f"store {self.path} has schema version {version}, newer than this codememory knows "
                f"({LATEST}); upgrade codememory"
            )
        if version < 0:
            raise StoreUnusable(f"store {self.path} has schema version {version}, which no codememory writes")
        schema.verify(self.conn, version, self.path)
        return version

    def _migrate(self) -> None:
        """Bring a store whose schema is exactly an older version's up to date (never a foreign one)."""
        version = self._checked_version()
        if version == LATEST:
            return
        with self.transaction():
            if self.schema_version() != version:  # another process migrated meanwhile
                version = self._checked_version()
            apply(self.conn, version, LATEST, now_iso())

    def close(self) -> None:
        self.conn.close()

    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    # ------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the write lock up front (deferred read-then-write
        transactions fail with 'database is locked' without waiting for the busy timeout)."""
        for attempt in range(_LOCK_RETRIES):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == _LOCK_RETRIES - 1:
                    _raise_translated(exc, self.path)
                time.sleep(0.05 * (attempt + 1))
        try:
            yield self.conn
        except BaseException:
            # SQLite rolls back by itself after some errors (disk full, I/O, corruption): a second
            # ROLLBACK would fail and hide the error that matters.
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise
        else:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                _raise_translated(exc, self.path)

    # ------------------------------------------------------------------ writes
    def insert(self, mem: Memory) -> None:
        with self.transaction():
            self._insert(mem)

    def insert_many(self, mems: Iterable[Memory]) -> int:
        """Bulk insert in one transaction. Rows go through a staging table and one INSERT ... SELECT:
        FTS5 flushes its pending terms at every statement, so one statement per row is ~5x slower."""
        mems = list(mems)
        if not mems:
            return 0
        c = self.conn
        with self.transaction():
            c.execute("CREATE TEMP TABLE IF NOT EXISTS stage_memories AS SELECT * FROM memories WHERE 0")
            c.execute("CREATE TEMP TABLE IF NOT EXISTS stage_tags (memory_id TEXT NOT NULL, name TEXT NOT NULL)")
            c.execute("DELETE FROM stage_memories")
            c.execute("DELETE FROM stage_tags")
            c.executemany(
                f"INSERT INTO stage_memories({_INSERT_COLUMNS}) VALUES ({','.join('?' * 16)})",
                (_insert_row(m) for m in mems),
            )
            c.execute(
                f"INSERT INTO memories({_INSERT_COLUMNS}) SELECT {_INSERT_COLUMNS} FROM stage_memories ORDER BY rowid"
            )
            self._index_text("id IN (SELECT id FROM stage_memories)", [])
            c.executemany("INSERT INTO stage_tags VALUES (?, ?)", ((m.id, t) for m in mems for t in m.tags))
            c.execute("INSERT OR IGNORE INTO tags(name) SELECT DISTINCT name FROM stage_tags")
            c.execute(
                "INSERT OR IGNORE INTO memory_tags(memory_pk, tag_id) SELECT m.pk, t.id FROM stage_tags s "
                "JOIN memories m ON m.id = s.memory_id JOIN tags t ON t.name = s.name"
            )
            c.execute("DELETE FROM stage_memories")
            c.execute("DELETE FROM stage_tags")
        return len(mems)

    def _insert(self, mem: Memory) -> None:
        cur = self.conn.execute(
            f"INSERT INTO memories({_INSERT_COLUMNS}) VALUES ({','.join('?' * 16)})", _insert_row(mem)
        )
        pk = cur.lastrowid
        self._index_text("pk = ?", [pk])
        if mem.tags:
            self.conn.executemany("INSERT OR IGNORE INTO tags(name) VALUES (?)", [(t,) for t in mem.tags])
            self.conn.executemany(
                "INSERT OR IGNORE INTO memory_tags(memory_pk, tag_id) SELECT ?, id FROM tags WHERE name = ?",
                [(pk, t) for t in mem.tags],
            )

    def delete(self, ids: Sequence[str]) -> list[str]:
        """Delete memories by id; returns the ids that existed."""
        with self.transaction():
            found = self._existing(ids)
            self._delete_ids(found)
        return found

    def _index_text(self, where: str, params: list[Any]) -> None:
        """Add the text of the memories matching `where` to the full-text indexes (inside the caller's
        transaction, like every write of memories.text: the store has no triggers to do it)."""
        for table in _FTS_TABLES:  # in rowid order: FTS5 is several times slower given rowids out of order
            self.conn.execute(
                f"INSERT INTO {table}(rowid, text) SELECT pk, text FROM memories WHERE {where} ORDER BY pk", params
            )
        self.conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'text_version'")

    def _unindex_text(self, where: str, params: list[Any]) -> None:
        """Remove these memories' text from the full-text indexes (before the rows are deleted: FTS5
        needs the exact text it indexed)."""
        for table in _FTS_TABLES:
            self.conn.execute(
                f"INSERT INTO {table}({table}, rowid, text) SELECT 'delete', pk, text FROM memories WHERE {where} "
                "ORDER BY pk",
                params,
            )
        self.conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'text_version'")

    def _delete_ids(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(ids, 500):
            where = f"id IN ({','.join('?' * len(chunk))})"
            self._unindex_text(where, chunk)
            self.conn.execute(f"DELETE FROM memories WHERE {where}", chunk)
        self.conn.execute("DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM memory_tags)")
        self.conn.execute("DELETE FROM entities WHERE id NOT IN (SELECT entity_id FROM memory_entities)")

    def purge_deleted_text(self) -> None:
        """Make deleted text unrecoverable: FTS5 keeps deleted tokens in old segments until they are
        merged, and the WAL keeps old pages until a checkpoint. Costs ~1 s per 100k memories."""
        with self.transaction():
            for table in ("memories_fts", "memories_trigram", "memories_words"):
                self.conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def set_archived(self, ids: Sequence[str], archived: bool, now: str) -> list[str]:
        with self.transaction():
            found = self._existing(ids)
            for chunk in _chunks(found, 500):
                self.conn.execute(
                    f"UPDATE memories SET archived = ?, updated_at = ? WHERE id IN ({','.join('?' * len(chunk))})",
                    (int(archived), now, *chunk),
                )
        return found

    def touch(self, pks: Sequence[int], now: str) -> None:
        """Record that these memories were shown to someone."""
        if not pks:
            return
        with self.transaction():
            self.conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                f"WHERE pk IN ({','.join('?' * len(pks))})",
                (now, *pks),
            )

    # ------------------------------------------------------------------- reads
    def _existing(self, ids: Sequence[str]) -> list[str]:
        found: set[str] = set()
        for chunk in _chunks(list(dict.fromkeys(ids)), 500):
            found.update(
                r[0]
                for r in self.conn.execute(f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            )
        return [i for i in dict.fromkeys(ids) if i in found]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        return set(self._existing(ids))

    def find_live_duplicate(self, text: str, now: str) -> tuple[int, str] | None:
        row = self.conn.execute(
            "SELECT m.pk, m.id FROM memories m WHERE m.text_hash = ? AND m.archived = 0 "
            f"AND (m.expires_at IS NULL OR m.expires_at > ?) AND {VALID_MEMORY_SQL} LIMIT 1",
            (text_hash(text), now),
        ).fetchone()
        return (row[0], row[1]) if row else None

    def get_by_ids(self, ids: Sequence[str]) -> list[tuple[int, Memory]]:
        rows: list[tuple[int, Memory]] = []
        for chunk in _chunks(list(ids), 500):
            rows.extend(self._select(f"m.id IN ({','.join('?' * len(chunk))})", list(chunk)))
        by_id = {m.id: (pk, m) for pk, m in rows}
        return [by_id[i] for i in ids if i in by_id]

    def get_by_pks(self, pks: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in _chunks(list(pks), 500):
            out.update(self._select(f"m.pk IN ({','.join('?' * len(chunk))})", list(chunk)))
        return out

    def _select(self, where: str, params: list[Any], tail: str = "") -> list[tuple[int, Memory]]:
        rows = self.conn.execute(f"SELECT {_MEMORY_COLUMNS} FROM memories m WHERE {where} {tail}", params).fetchall()
        tags = self._tags_for([r[0] for r in rows])
        out: list[tuple[int, Memory]] = []
        for r in rows:
            mem = memory_from_row(r, tags.get(r[0], []))
            if mem is not None:
                out.append((r[0], mem))
        return out

    def tags_of(self, pks: Sequence[int]) -> dict[int, list[str]]:
        return self._tags_for(list(pks))

    def _tags_for(self, pks: list[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for chunk in _chunks(pks, 500):
            for pk, name in self.conn.execute(
                "SELECT mt.memory_pk, t.name FROM memory_tags mt JOIN tags t ON t.id = mt.tag_id "
                f"WHERE mt.memory_pk IN ({','.join('?' * len(chunk))}) ORDER BY t.name",
                chunk,
            ):
                out.setdefault(pk, []).append(name)
        return out

    def list_memories(
        self,
        filters: Filters,
        *,
        sort: str = "created",
        descending: bool = True,
        limit: int = 20,
        offset: int = 0,
    ) -> list[Memory]:
        where, params = filters.where()
        direction = "DESC" if descending else "ASC"
        nulls = "NULLS LAST"
        tail = f"ORDER BY {SORT_COLUMNS[sort]} {direction} {nulls}, m.pk {direction} LIMIT ? OFFSET ?"
        return [m for _, m in self._select(where, [*params, limit, offset], tail)]

    def count_all(self) -> int:
        """Every memory row, archived, expired and superseded included (what embeddings are kept for)."""
        return int(self.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def count(self, filters: Filters) -> int:
        where, params = filters.where()
        return int(self.conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0])

    def iter_all(self, batch: int = 1000) -> Iterator[Memory]:
        """Every memory, oldest first, in batches (export)."""
        last = 0
        while True:
            row = self.conn.execute(
                "SELECT max(pk) FROM (SELECT pk FROM memories WHERE pk > ? ORDER BY pk LIMIT ?)", (last, batch)
            ).fetchone()
            if row[0] is None:
                return
            for _, mem in self._select("m.pk > ? AND m.pk <= ?", [last, row[0]], "ORDER BY m.pk"):
                yield mem  # a batch may lose rows the mapper skips; the next starts after it all the same
            last = row[0]

    def fts_search(self, match: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        """BM25 candidates (smaller score is better, as FTS5 reports it)."""
        where, params = filters.where()
        try:
            return self.conn.execute(
                "SELECT m.pk, bm25(memories_fts) AS score FROM memories_fts "
                "JOIN memories m ON m.pk = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {where} ORDER BY score LIMIT ?",
                (match, *params, limit),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if _is_query_error(exc):
                return []  # the query compiler should prevent this; an odd query finds nothing, never crashes
            raise

    def fts_subset(self, match: str, pks: Sequence[int]) -> set[int]:
        """Which of these memories the keyword expression matches."""
        out: set[int] = set()
        try:
            for chunk in _chunks(list(pks), 500):
                out.update(
                    r[0]
                    for r in self.conn.execute(
                        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                        f"AND rowid IN ({','.join('?' * len(chunk))})",
                        (match, *chunk),
                    )
                )
        except sqlite3.OperationalError as exc:
            if not _is_query_error(exc):
                raise
        return out

    def substring_search(self, match: str, filters: Filters, limit: int) -> list[int]:
        where, params = filters.where()
        try:
            return [
                r[0]
                for r in self.conn.execute(
                    "SELECT m.pk FROM memories_trigram JOIN memories m ON m.pk = memories_trigram.rowid "
                    f"WHERE memories_trigram MATCH ? AND {where} ORDER BY m.importance DESC LIMIT ?",
                    (match, *params, limit),
                )
            ]
        except sqlite3.OperationalError as exc:
            if _is_query_error(exc):
                return []
            raise

    def rank_rows(self, pks: Sequence[int]) -> dict[int, RankRow]:
        out: dict[int, RankRow] = {}
        for chunk in _chunks(list(pks), 500):
            for pk, text, importance, created_at in self.conn.execute(
                f"SELECT pk, text, importance, created_at FROM memories WHERE pk IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[pk] = RankRow(pk, text, importance, created_at)
        return out

    def vocabulary(self) -> list[str]:
        """Distinct unstemmed words of all memories (for typo correction), cached until the store changes."""
        key = int(self.conn.execute("SELECT value FROM counters WHERE name = 'text_version'").fetchone()[0])
        if key != self._vocab_key:
            self._vocab = [
                r[0]
                for r in self.conn.execute(
                    "SELECT term FROM memories_vocab WHERE length(term) BETWEEN 3 AND 100 AND term GLOB '*[a-z]*' "
                    "AND term NOT GLOB ?",  # a tampered index could hold any "word": never one with a line break
                    ("*[\x01-\x20\x7f]*",),
                )
            ]
            self._vocab_key = key
            self._vocab_set = frozenset(self._vocab)
        return self._vocab

    def vocabulary_set(self) -> frozenset[str]:
        self.vocabulary()
        return self._vocab_set

    # -------------------------------------------------------------- embeddings
    def needing_embedding(self, model: str, limit: int, pks: Sequence[int] | None = None) -> list[tuple[int, str]]:
        """Memories with no vector from `model`, or one computed from different text."""
        where = "e.memory_pk IS NULL OR e.text_hash != m.text_hash"
        params: list[Any] = [model]
        if pks is not None:
            if not pks:
                return []
            where = f"({where}) AND m.pk IN ({','.join('?' * len(pks))})"
            params.extend(pks)
        return self.conn.execute(
            "SELECT m.pk, m.text FROM memories m LEFT JOIN embeddings e ON e.memory_pk = m.pk AND e.model = ? "
            f"WHERE {where} ORDER BY m.pk LIMIT ?",
            (*params, limit),
        ).fetchall()

    def count_without_vector(self, model: str) -> int:
        """Memories with no vector from `model` at all: a cheap count for every search (the covering index
        embeddings_model_seq answers it), unlike count_needing_embedding, which also compares text hashes."""
        row = self.conn.execute(
            "SELECT (SELECT COUNT(*) FROM memories) - (SELECT COUNT(*) FROM embeddings WHERE model = ?)", (model,)
        ).fetchone()
        return max(0, int(row[0]))

    def count_needing_embedding(self, model: str) -> int:
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM memories m LEFT JOIN embeddings e ON e.memory_pk = m.pk AND e.model = ? "
                "WHERE e.memory_pk IS NULL OR e.text_hash != m.text_hash",
                (model,),
            ).fetchone()[0]
        )

    def save_embeddings(self, model: str, rows: Sequence[tuple[int, str, bytes, int]]) -> None:
        """rows: (memory pk, text the vector was computed from, float32 bytes, dimension)."""
        if not rows:
            return
        with self.transaction():
            seq = int(self.conn.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0])
            self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings(memory_pk, model, dim, text_hash, seq, vector) "
                "SELECT pk, ?, ?, ?, ?, ? FROM memories WHERE pk = ?",
                [(model, dim, text_hash(text), seq + i + 1, blob, pk) for i, (pk, text, blob, dim) in enumerate(rows)],
            )
            self.conn.execute("UPDATE counters SET value = ? WHERE name = 'embedding_seq'", (seq + len(rows),))

    def drop_other_embeddings(self, model: str) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM embeddings WHERE model != ?", (model,))

    def embedding_state(self, model: str) -> tuple[int, int]:
        """(number of vectors for `model`, highest sequence number): changes whenever the vectors do."""
        count, top = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM embeddings WHERE model = ?", (model,)
        ).fetchone()
        return int(count), int(top)

    def vectors(self, model: str, after_seq: int = 0) -> list[tuple[int, int, bytes]]:
        """(memory pk, seq, vector bytes) for `model`, newer than `after_seq`."""
        return self.conn.execute(
            "SELECT memory_pk, seq, vector FROM embeddings WHERE model = ? AND seq > ? ORDER BY seq",
            (model, after_seq),
        ).fetchall()

    def vectors_for(self, model: str, pks: Sequence[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for chunk in _chunks(list(pks), 500):
            out.update(
                self.conn.execute(
                    "SELECT memory_pk, vector FROM embeddings "
                    f"WHERE model = ? AND memory_pk IN ({','.join('?' * len(chunk))})",
                    (model, *chunk),
                ).fetchall()
            )
        return out

    def live_pks(self, pks: Sequence[int], filters: Filters) -> set[int]:
        """Which of these memories pass the filters (vector hits come from a cache that may be stale)."""
        where, params = filters.where()
        out: set[int] = set()
        for chunk in _chunks(list(pks), 500):
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT m.pk FROM memories m WHERE m.pk IN ({','.join('?' * len(chunk))}) AND {where}",
                    (*chunk, *params),
                )
            )
        return out

    # ------------------------------------------------------------------- links
    def add_links(self, rows: Sequence[tuple[int, int, str, float | None]], now: str) -> None:
        """rows: (from pk, to pk, link type, score). An existing link between the pair is replaced."""
        if not rows:
            return
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO memory_links(memory_pk, linked_pk, link_type, score, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(a, b, t, s, now) for a, b, t, s in rows],
            )

    def supersede(self, old_pks: Sequence[int], new_id: str, now: str) -> None:
        with self.transaction():
            for chunk in _chunks(list(old_pks), 500):
                self.conn.execute(
                    f"UPDATE memories SET superseded_by = ?, updated_at = ? WHERE pk IN ({','.join('?' * len(chunk))})",
                    (new_id, now, *chunk),
                )

    def outgoing_links(self) -> dict[str, list[dict[str, Any]]]:
        """Every link, by the id of the memory it starts from: {id: [{to, type, score}]} (export)."""
        out: dict[str, list[dict[str, Any]]] = {}
        rows = self.conn.execute(
            "SELECT a.id, b.id, l.link_type, l.score FROM memory_links l "
            "JOIN memories a ON a.pk = l.memory_pk JOIN memories b ON b.pk = l.linked_pk ORDER BY a.pk, b.pk"
        )
        for from_id, to_id, kind, score in rows:
            if _valid_link(from_id, to_id, kind, score):
                out.setdefault(from_id, []).append({"to": to_id, "type": kind, "score": score})
        return out

    def links_of(self, pk: int) -> list[tuple[str, str, str, float | None]]:
        """(direction 'out'|'in', other memory id, link type, score) for one memory."""
        rows = self.conn.execute(
            "SELECT 'out', m.id, l.link_type, l.score FROM memory_links l JOIN memories m ON m.pk = l.linked_pk "
            "WHERE l.memory_pk = ? UNION ALL "
            "SELECT 'in', m.id, l.link_type, l.score FROM memory_links l JOIN memories m ON m.pk = l.memory_pk "
            "WHERE l.linked_pk = ? ORDER BY 1 DESC, 4 DESC",
            (pk, pk),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows if _valid_link(r[1], r[1], r[2], r[3])]

    def categories_of(self, pks: Sequence[int]) -> dict[int, str]:
        return {pk: row_cat for pk, row_cat in self._pairs("SELECT pk, category FROM memories WHERE pk IN", pks)}

    def ids_of(self, pks: Sequence[int]) -> dict[int, str]:
        return {pk: mid for pk, mid in self._pairs("SELECT pk, id FROM memories WHERE pk IN", pks) if is_memory_id(mid)}

    def get_pk_map(self, ids: Sequence[str]) -> list[tuple[str, int]]:
        return [(mid, pk) for mid, pk in self._pairs("SELECT id, pk FROM memories WHERE id IN", ids)]

    def _pairs(self, select: str, keys: Sequence[Any]) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        for chunk in _chunks(list(dict.fromkeys(keys)), 500):
            out.extend(self.conn.execute(f"{select} ({','.join('?' * len(chunk))})", chunk).fetchall())
        return out

    def sessions_around(self, pks: Sequence[int], filters: Filters) -> dict[str, list[int]]:
        """For the sessions these memories belong to: every member passing the filters, in turn order."""
        keys = [
            k
            for _, k in self._pairs("SELECT pk, session_key FROM memories WHERE session_key IS NOT NULL AND pk IN", pks)
        ]
        if not keys:
            return {}
        where, params = filters.where()
        out: dict[str, list[int]] = {}
        for chunk in _chunks(list(dict.fromkeys(keys)), 500):
            for key, pk in self.conn.execute(
                f"SELECT m.session_key, m.pk FROM memories m WHERE m.session_key IN ({','.join('?' * len(chunk))}) "
                f"AND {where} ORDER BY m.session_key, m.seq, m.created_at, m.pk",
                (*chunk, *params),
            ):
                out.setdefault(key, []).append(pk)
        return out

    def pk_of(self, memory_id: str) -> int | None:
        row = self.conn.execute("SELECT pk FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return int(row[0]) if row else None

    # ---------------------------------------------------------------- entities
    def set_entities(self, items: Sequence[tuple[int, Sequence[tuple[str, str]]]]) -> None:
        """items: (memory pk, [(entity name, type)]) — replaces each memory's entities."""
        with self.transaction():
            for pk, entities in items:
                self.conn.execute("DELETE FROM memory_entities WHERE memory_pk = ?", (pk,))
                if not entities:
                    continue
                self.conn.executemany(
                    "INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", list(entities)
                )
                self.conn.executemany(
                    "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) "
                    "SELECT ?, id FROM entities WHERE name = ?",
                    [(pk, name) for name, _ in entities],
                )

    def entities_of(self, pks: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        out: dict[int, list[tuple[str, str]]] = {}
        for chunk in _chunks(list(pks), 500):
            for pk, name, typ in self.conn.execute(
                "SELECT me.memory_pk, e.name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk IN ({','.join('?' * len(chunk))}) ORDER BY e.name",
                chunk,
            ):
                if is_label(name) and is_label(typ):
                    out.setdefault(pk, []).append((name, typ))
        return out

    def memories_with_entities(self, names: Sequence[str], filters: Filters, limit: int) -> list[tuple[int, int]]:
        """Hub discovery: (memory pk, how many of the named entities it mentions), most first."""
        if not names:
            return []
        where, params = filters.where()
        return self.conn.execute(
            "SELECT m.pk, COUNT(*) AS n FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
            "JOIN memories m ON m.pk = me.memory_pk "
            f"WHERE e.name IN ({','.join('?' * len(names))}) AND {where} "
            "GROUP BY m.pk ORDER BY n DESC, m.importance DESC, m.created_at DESC LIMIT ?",
            (*names, *params, limit),
        ).fetchall()

    def entity_counts(self, limit: int = 50) -> list[tuple[str, str, int]]:
        rows = self.conn.execute(
            "SELECT e.name, e.type, COUNT(*) FROM entities e JOIN memory_entities me ON me.entity_id = e.id "
            "GROUP BY e.id ORDER BY 3 DESC, e.name LIMIT ?",
            (limit,),
        ).fetchall()
        return [(name, typ, n) for name, typ, n in rows if is_label(name) and is_label(typ)]

    # ------------------------------------------------------------------- stats
    def expired_or_before(self, now: str, before: str | None) -> list[Memory]:
        if before:
            where, params = (
                "m.created_at < ? OR (m.expires_at IS NOT NULL AND m.expires_at <= ?)",
                [before, now],
            )
        else:
            where, params = "m.expires_at IS NOT NULL AND m.expires_at <= ?", [now]
        return [m for _, m in self._select(where, params, "ORDER BY m.created_at")]

    def stats(self, now: str) -> dict[str, Any]:
        c = self.conn
        total, archived, expired = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(archived), 0), "
            "COALESCE(SUM(expires_at IS NOT NULL AND expires_at <= ?), 0) FROM memories",
            (now,),
        ).fetchone()
        oldest, newest = c.execute(
            f"SELECT MIN(created_at), MAX(created_at) FROM memories m WHERE {VALID_MEMORY_SQL}"
        ).fetchone()
        live = Filters(now=now)
        where, params = live.where()
        live_count = c.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0]
        return {
            "total": total,
            "live": live_count,
            "archived": archived,
            "expired": expired,
            "oldest": oldest,
            "newest": newest,
            "categories": _known(
                c.execute("SELECT category, COUNT(*) FROM memories GROUP BY category ORDER BY 2 DESC"), CATEGORIES
            ),
            "tag_count": c.execute("SELECT COUNT(*) FROM tags").fetchone()[0],
            "entity_count": c.execute("SELECT COUNT(*) FROM entities").fetchone()[0],
            "link_count": c.execute("SELECT COUNT(*) FROM memory_links").fetchone()[0],
            "superseded": c.execute("SELECT COUNT(*) FROM memories WHERE superseded_by IS NOT NULL").fetchone()[0],
            "embeddings": _known(c.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model ORDER BY 2 DESC")),
            "schema_version": self.schema_version(),
        }

    def tag_frequencies(self) -> dict[str, int]:
        return {
            name: n
            for name, n in self.conn.execute(
                "SELECT t.name, COUNT(*) FROM tags t JOIN memory_tags mt ON mt.tag_id = t.id "
                "GROUP BY t.id ORDER BY 2 DESC, t.name"
            )
            if is_tag(name)
        }

    def agent_frequencies(self) -> dict[str, int]:
        return _known(
            ("(unknown)" if name is None else name, n)
            for name, n in self.conn.execute(
                "SELECT entered_by, COUNT(*) FROM memories GROUP BY entered_by ORDER BY 2 DESC, entered_by"
            )
        )


def _known(pairs: Iterable[tuple[Any, Any]], allowed: Sequence[str] | None = None) -> dict[str, int]:
    """Counts by a stored label; labels no codememory writes (control characters, not text, too long, not
    in `allowed`) are counted together as '(invalid)' instead of being shown."""
    out: dict[str, int] = {}
    for label, n in pairs:
        good = is_label(label) and (allowed is None or label in allowed)
        key = label if good else "(invalid)"
        out[key] = out.get(key, 0) + int(n)
    return out


def _valid_link(from_id: object, to_id: object, kind: object, score: object) -> bool:
    ok = is_memory_id(from_id) and is_memory_id(to_id) and kind in LINK_TYPES
    if not ok or not (score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))):
        warn(f"skipped a link of memory {escape(from_id)}")
        return False
    return True


def _raise_translated(exc: sqlite3.Error, path: Path) -> NoReturn:
    unusable = translate(exc, path, BUSY_TIMEOUT_S)
    if unusable is None:
        raise exc
    raise unusable from exc


def _is_query_error(exc: sqlite3.OperationalError) -> bool:
    return "fts5: syntax error" in str(exc) or "unterminated string" in str(exc)


def _chunks(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield list(items[i : i + size])
