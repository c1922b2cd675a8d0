"""The memories table group: memories, their tags and their full-text indexes (written here, in the same
transaction as the row: the store has no triggers), and the reads that map rows to Memory objects."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from codememory.core.model import Memory, session_position
from codememory.core.provenance import Provenance
from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import SORT_COLUMNS, SORT_TIE, Filters
from codememory.store.rows import VALID_MEMORY_SQL, is_memory_id, memory_from_row
from codememory.store.session_windows import long_sessions, windows

# Kept by this module's own statements (no triggers since schema 7, so trusted_schema can be OFF).
_FTS_TABLES = ("memories_fts", "memories_trigram", "memories_words")
# FTS5 writes its pending terms out as a new segment whenever they pass `hashsize` bytes (1 MiB unless set), and
# merges segments as they pile up: a bulk write with room for a whole batch's terms writes a few large segments
# instead of many small ones to merge (the trigram index of a 100k import: about half the time). The terms are
# written at each statement's start anyway, so what this holds at most is one batch's.
_FTS_DEFAULT_HASH_BYTES = 1 << 20
_FTS_BULK_HASH_BYTES = 64 << 20  # a cap: a batch's terms rarely take a tenth of it
# Indexes of `memories` a bulk load reads while it runs (new ids and duplicate texts are looked up batch by batch).
_BULK_KEPT_INDEXES = ("memories_hash",)

_MEMORY_COLUMNS = (
    "m.pk, m.id, m.text, m.category, m.importance, m.entered_by, m.source, m.created_at, m.updated_at, "
    "m.expires_at, m.access_count, m.last_accessed_at, m.archived, m.superseded_by, "
    "m.origin, m.origin_by, m.origin_at, m.review"
)

_INSERT_COLUMNS = (
    "id, text, text_hash, category, importance, entered_by, source, created_at, updated_at, expires_at, "
    "access_count, last_accessed_at, archived, superseded_by, session_key, seq, git_commit, "
    "origin, origin_by, origin_at, review"
)
_INSERT_COUNT = 21

_SESSIONS_SEEN = 50_000  # memories whose session turns_around keeps while the store is unchanged

# What ranking may read of a row's importance and creation date (core/provenance.py): a memory not written here
# counts as neutral importance and as created no later than it arrived here (its own dates are claims).
RANKED_IMPORTANCE_SQL = SORT_COLUMNS["importance"]
RANKED_CREATED_SQL = SORT_COLUMNS["created"]

# A stale memory's ranking score is scaled by this (the store's [staleness] demote; retrieval/lexical.demoted).
STALE_FACTOR = 0.5


def _insert_row(mem: Memory, git_commit: str | None = None) -> tuple[Any, ...]:
    return (*memory_row(mem, git_commit), *provenance_row(mem.provenance))


def memory_row(mem: Memory, git_commit: str | None = None) -> tuple[Any, ...]:
    """The columns of a new row but its provenance (`provenance_row`): what needs no store, built where the memory
    was read (an import's worker processes send these plain tuples, cheaper to pass than Memory objects)."""
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
        git_commit,
    )


def provenance_row(provenance: Provenance) -> tuple[Any, ...]:
    """The provenance columns that end a row of `_INSERT_COLUMNS`."""
    return (provenance.origin, provenance.by, provenance.at, provenance.review)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


@dataclass
class RankRow:
    pk: int
    text: str
    importance: float
    created_at: str
    stale: bool = False  # a staleness check marked it (service/staleness.py): retrieval demotes it


class MemoryRows(StoreConnection):
    """Writes and reads of memories and their tags (pk: the row key the other table groups refer to)."""

    stale_factor: float = STALE_FACTOR  # the Store sets its configured [staleness] demote
    # turns_around's reads: (store state, filters) -> session of each memory asked about, members of each session
    # read whole, whether each session is read around its candidates instead
    _sessions_seen: tuple[tuple[Any, ...], dict[int, str | None], dict[str, list[int]], dict[str, bool]] | None = None

    # ------------------------------------------------------------------ writes
    def insert(self, mem: Memory, *, git_commit: str | None = None, personal: bool = False) -> None:
        """Insert a memory; `git_commit`: HEAD when it was written (staleness is judged against it); `personal`:
        never written to the shared text form (set in the same transaction as the row)."""
        with self.transaction():
            self._insert(mem, git_commit)
            if personal:
                self.conn.execute("UPDATE memories SET personal = 1 WHERE id = ?", (mem.id,))

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """One write transaction for many `insert_rows` calls (an import). The full-text indexes keep up to
        _FTS_BULK_HASH_BYTES of pending terms each meanwhile. Into a store that held no memories, the secondary
        indexes of `memories` and of the entity links that the load does not read are dropped and built again at
        its end from the finished tables, instead of row by row. All of it inside the one transaction, settings put
        back too: an error or a crash leaves the store as it was, and no other connection ever sees an index
        missing. The text is indexed batch by batch, not once at the end: an import's worker processes prepare the
        next batches meanwhile, where at the end this process would index alone."""
        with self.transaction():
            before = {t: self._fts_hash_bytes(t) for t in _FTS_TABLES}
            for table in _FTS_TABLES:
                self._set_fts_hash_bytes(table, _FTS_BULK_HASH_BYTES)
            empty = self.conn.execute("SELECT NOT EXISTS (SELECT 1 FROM memories)").fetchone()[0]
            rebuilt = self._drop_secondary_indexes() if empty else []
            yield
            for create in rebuilt:
                self.conn.execute(create)
            for table, value in before.items():
                self._set_fts_hash_bytes(table, value)

    def _drop_secondary_indexes(self) -> list[str]:
        """Drop the indexes of `memories` and `memory_entities` that a bulk load does not read (the id's and any
        other that is a constraint stay, and the text hash's, which finds duplicate texts meanwhile); returns the
        statements that create them again."""
        rows = self.conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('memories', 'memory_entities') "
            "AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%' "
            f"AND name NOT IN ({','.join('?' * len(_BULK_KEPT_INDEXES))})",
            _BULK_KEPT_INDEXES,
        ).fetchall()
        for name, _ in rows:
            self.conn.execute(f'DROP INDEX "{name}"')
        return [sql for _, sql in rows]

    def _fts_hash_bytes(self, table: str) -> int:
        row = self.conn.execute(f"SELECT v FROM {table}_config WHERE k = 'hashsize'").fetchone()
        return int(row[0]) if row is not None and isinstance(row[0], int) else _FTS_DEFAULT_HASH_BYTES

    def _set_fts_hash_bytes(self, table: str, value: int) -> None:
        self.conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?)", (value,))

    def insert_many(self, mems: Iterable[Memory]) -> list[int]:
        """Bulk insert in one transaction; returns the new rows' pks, in order (`insert_rows`)."""
        return self.insert_rows([(_insert_row(m), m.tags) for m in mems])

    def insert_rows(self, rows: Sequence[tuple[tuple[Any, ...], Sequence[str]]]) -> list[int]:
        """Bulk insert of (row of `_INSERT_COLUMNS`, tags) in one transaction; returns the new rows' pks, in
        order. Rows go through a staging table and one INSERT ... SELECT (FTS5 flushes its pending terms at every
        statement, and the staged copy fills the table faster than a statement a row). The rows take consecutive
        pks (the table's largest rowid plus one, each), so the text indexes and tags find them by range rather than
        by id."""
        if not rows:
            return []
        c = self.conn
        with self.transaction():
            c.execute("CREATE TEMP TABLE IF NOT EXISTS stage_memories AS SELECT * FROM memories WHERE 0")
            c.execute("CREATE TEMP TABLE IF NOT EXISTS stage_tags (memory_pk INTEGER NOT NULL, name TEXT NOT NULL)")
            c.execute("DELETE FROM stage_memories")
            c.execute("DELETE FROM stage_tags")
            c.executemany(
                f"INSERT INTO stage_memories({_INSERT_COLUMNS}) VALUES ({','.join('?' * _INSERT_COUNT)})",
                (row for row, _ in rows),
            )
            before = int(c.execute("SELECT COALESCE(MAX(pk), 0) FROM memories").fetchone()[0])
            c.execute(
                f"INSERT INTO memories({_INSERT_COLUMNS}) SELECT {_INSERT_COLUMNS} FROM stage_memories ORDER BY rowid"
            )
            first, last = before + 1, before + len(rows)
            if int(c.execute("SELECT MAX(pk) FROM memories").fetchone()[0]) == last:
                pks = list(range(first, last + 1))
                self._index_text("pk BETWEEN ? AND ?", [first, last])
            else:  # rowids past the largest possible one are chosen at random: look them up
                found = dict(self._pairs("SELECT id, pk FROM memories WHERE id IN", [row[0] for row, _ in rows]))
                pks = [found[row[0]] for row, _ in rows]
                self._index_text("id IN (SELECT id FROM stage_memories)", [])
            tagged = ((pk, t) for pk, (_, tags) in zip(pks, rows, strict=True) for t in tags)
            c.executemany("INSERT INTO stage_tags VALUES (?, ?)", tagged)
            c.execute("INSERT OR IGNORE INTO tags(name) SELECT DISTINCT name FROM stage_tags")
            c.execute(
                "INSERT OR IGNORE INTO memory_tags(memory_pk, tag_id) SELECT s.memory_pk, t.id FROM stage_tags s "
                "JOIN tags t ON t.name = s.name"
            )
            c.execute("DELETE FROM stage_memories")
            c.execute("DELETE FROM stage_tags")
        return pks

    def _insert(self, mem: Memory, git_commit: str | None = None) -> None:
        cur = self.conn.execute(
            f"INSERT INTO memories({_INSERT_COLUMNS}) VALUES ({','.join('?' * _INSERT_COUNT)})",
            _insert_row(mem, git_commit),
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
        for chunk in chunks(ids):
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
            for chunk in chunks(found):
                self.conn.execute(
                    f"UPDATE memories SET archived = ?, updated_at = ? WHERE id IN ({','.join('?' * len(chunk))})",
                    (int(archived), now, *chunk),
                )
        return found

    def update_fields(
        self,
        pk: int,
        now: str,
        *,
        text: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        tags: Sequence[str] | None = None,
        provenance: Provenance | None = None,
    ) -> None:
        """Change a memory in place (a person curating it): new text is re-indexed in the same transaction (its
        vector, keyed by the text's hash, is then stale until re-embedded), new tags replace the old ones;
        `provenance`: where the memory now comes from (new text typed here is the person's)."""
        with self.transaction():
            if provenance is not None:
                self.conn.execute(
                    "UPDATE memories SET origin = ?, origin_by = ?, origin_at = ?, review = ? WHERE pk = ?",
                    (provenance.origin, provenance.by, provenance.at, provenance.review, pk),
                )
            if text is not None:
                self._unindex_text("pk = ?", [pk])  # FTS5 needs the exact text it indexed
                self.conn.execute(
                    "UPDATE memories SET text = ?, text_hash = ? WHERE pk = ?", (text, text_hash(text), pk)
                )
                self._index_text("pk = ?", [pk])
            if category is not None:
                self.conn.execute("UPDATE memories SET category = ? WHERE pk = ?", (category, pk))
            if importance is not None:
                self.conn.execute("UPDATE memories SET importance = ? WHERE pk = ?", (importance, pk))
            if tags is not None:
                self.conn.execute("DELETE FROM memory_tags WHERE memory_pk = ?", (pk,))
                self.conn.executemany("INSERT OR IGNORE INTO tags(name) VALUES (?)", [(t,) for t in tags])
                self.conn.executemany(
                    "INSERT OR IGNORE INTO memory_tags(memory_pk, tag_id) SELECT ?, id FROM tags WHERE name = ?",
                    [(pk, t) for t in tags],
                )
                self.conn.execute("DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM memory_tags)")
            self.conn.execute("UPDATE memories SET updated_at = ? WHERE pk = ?", (now, pk))

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
        for chunk in chunks(list(dict.fromkeys(ids))):
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
        for chunk in chunks(list(ids)):
            rows.extend(self._select(f"m.id IN ({','.join('?' * len(chunk))})", list(chunk)))
        by_id = {m.id: (pk, m) for pk, m in rows}
        return [by_id[i] for i in ids if i in by_id]

    def get_by_pks(self, pks: Sequence[int]) -> dict[int, Memory]:
        out: dict[int, Memory] = {}
        for chunk in chunks(list(pks)):
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
        for chunk in chunks(pks):
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
        tie = f"{SORT_TIE[sort]} {direction}, " if sort in SORT_TIE else ""
        tail = f"ORDER BY {SORT_COLUMNS[sort]} {direction} {nulls}, {tie}m.pk {direction} LIMIT ? OFFSET ?"
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

    def rank_rows(self, pks: Sequence[int]) -> dict[int, RankRow]:
        """What ranking reads of these rows: importance and creation date as ranking may use them (a memory not
        written here is ranked on its content: RANKED_IMPORTANCE_SQL, RANKED_CREATED_SQL)."""
        out: dict[int, RankRow] = {}
        for chunk in chunks(list(pks)):
            for pk, text, importance, created_at, stale in self.conn.execute(
                f"SELECT m.pk, m.text, {RANKED_IMPORTANCE_SQL}, {RANKED_CREATED_SQL}, "
                "EXISTS (SELECT 1 FROM memory_staleness s WHERE s.memory_pk = m.pk) "
                f"FROM memories m WHERE m.pk IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[pk] = RankRow(pk, text, importance, created_at, bool(stale))
        return out

    # ------------------------------------------------------------------ lookups by key
    def categories_of(self, pks: Sequence[int]) -> dict[int, str]:
        return {pk: row_cat for pk, row_cat in self._pairs("SELECT pk, category FROM memories WHERE pk IN", pks)}

    def ids_of(self, pks: Sequence[int]) -> dict[int, str]:
        return {pk: mid for pk, mid in self._pairs("SELECT pk, id FROM memories WHERE pk IN", pks) if is_memory_id(mid)}

    def get_pk_map(self, ids: Sequence[str]) -> list[tuple[str, int]]:
        return [(mid, pk) for mid, pk in self._pairs("SELECT id, pk FROM memories WHERE id IN", ids)]

    def _pairs(self, select: str, keys: Sequence[Any]) -> list[tuple[Any, Any]]:
        out: list[tuple[Any, Any]] = []
        for chunk in chunks(list(dict.fromkeys(keys))):
            out.extend(self.conn.execute(f"{select} ({','.join('?' * len(chunk))})", chunk).fetchall())
        return out

    def turns_around(self, pks: Sequence[int], filters: Filters, span: int) -> list[list[int]]:
        """Runs of consecutive members (passing the filters) of the sessions these memories belong to, in turn
        order, holding each of them with at least the `span` members before and after it: a session of up to
        LONG_SESSION members whole, a longer one only around these memories (store/session_windows.py). What was
        read whole is kept while nothing is written to the store (`write_stamp`): a step's retrieval ranks its
        phrases and then its request alone, over mostly the same memories."""
        where, params = filters.where()
        seen = self._sessions_seen
        state = (self.write_stamp(), where, tuple(params))
        if seen is None or seen[0] != state or len(seen[1]) > _SESSIONS_SEEN:
            seen = self._sessions_seen = (state, {}, {}, {})
        session_of, members, is_long = seen[1], seen[2], seen[3]
        unknown = [pk for pk in dict.fromkeys(pks) if pk not in session_of]
        found = dict(
            self._pairs("SELECT pk, session_key FROM memories WHERE session_key IS NOT NULL AND pk IN", unknown)
        )
        session_of.update({pk: found.get(pk) for pk in unknown})  # one update: another thread sees all or none
        keys = list(dict.fromkeys(k for pk in pks if (k := session_of[pk]) is not None))
        is_long.update(long_sessions(self.conn, [k for k in keys if k not in is_long]))
        long = {k for k in keys if is_long.get(k)}
        for chunk in chunks([k for k in keys if k not in members and k not in long]):
            read: dict[str, list[int]] = {k: [] for k in chunk}
            for key, pk in self.conn.execute(
                f"SELECT m.session_key, m.pk FROM memories m WHERE m.session_key IN ({','.join('?' * len(chunk))}) "
                f"AND {where} ORDER BY m.session_key, m.seq, m.created_at, m.pk",
                (*chunk, *params),
            ):
                read[key].append(pk)
            members.update(read)
        out = [list(members[k]) for k in sorted(keys) if k not in long and members[k]]
        for key in sorted(long):
            out += windows(self.conn, key, [pk for pk in pks if session_of[pk] == key], where, params, span)
        return out

    def pk_of(self, memory_id: str) -> int | None:
        row = self.conn.execute("SELECT pk FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return int(row[0]) if row else None

    def expired_or_before(self, now: str, before: str | None) -> list[Memory]:
        if before:
            where, params = (
                "m.created_at < ? OR (m.expires_at IS NOT NULL AND m.expires_at <= ?)",
                [before, now],
            )
        else:
            where, params = "m.expires_at IS NOT NULL AND m.expires_at <= ?", [now]
        return [m for _, m in self._select(where, params, "ORDER BY m.created_at")]
