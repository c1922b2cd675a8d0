"""The team-sharing table group: which memories are personal, the bookkeeping of the text form in
`.codememory/memories/` (shared_files, shared_state), and applying a batch of memory files to the store in one
transaction (service/sharing.py decides what to apply; this module only writes it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codememory.core.model import Memory, session_position
from codememory.store.connection import chunks
from codememory.store.memories import MemoryRows, text_hash
from codememory.store.rows import is_memory_id


@dataclass(frozen=True)
class SharedRecord:
    """What the store knows of one memory file: the file as last written or applied, and the memory's shared
    form in the store at that moment."""

    memory_id: str
    file_sha256: str | None
    form_sha256: str | None
    mtime_ns: int | None
    size: int | None
    # "ok"; "invalid": a file that did not parse (not read again until its size, mtime or sha256 change); "skipped":
    # a file that parsed but was not applied (a collision with a memory this store never shared: looked at again)
    status: str = "ok"
    reason: str | None = None  # why an invalid or skipped file was not applied (one line, scrubbed)


def _record(row: Sequence[Any]) -> SharedRecord:
    """A row of shared_files (a committed store may hold anything there: a reason that is not one line of text is
    shown as a generic one, and is never the store's to write in a report)."""
    reason = row[6]
    if not isinstance(reason, str) or not reason.isprintable() or len(reason) > 400:
        reason = "did not parse" if reason is not None else None
    return SharedRecord(row[0], row[1], row[2], row[3], row[4], row[5], reason)


@dataclass
class SharedMemory:
    """One memory as a file of the text form gives it: the record, its entity names and its outgoing links."""

    memory: Memory
    entities: list[tuple[str, str]] = field(default_factory=list)
    links: list[tuple[str, str, float | None]] = field(default_factory=list)  # (to id, type, score)


class SharedRows(MemoryRows):
    """Reads and writes of the sharing bookkeeping; `apply_shared` writes memories from files."""

    # ------------------------------------------------------------------ personal
    def personal_ids(self, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(ids))):
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT id FROM memories WHERE personal = 1 AND id IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def set_personal(self, ids: Sequence[str], personal: bool) -> None:
        with self.transaction():
            for chunk in chunks(list(ids)):
                self.conn.execute(
                    f"UPDATE memories SET personal = ? WHERE id IN ({','.join('?' * len(chunk))})",
                    (int(personal), *chunk),
                )

    def shared_memory_ids(self) -> list[str]:
        """Every memory that may reach the text form (not personal), oldest first."""
        return [
            r[0]
            for r in self.conn.execute("SELECT id FROM memories WHERE personal = 0 ORDER BY pk")
            if is_memory_id(r[0])
        ]

    # ------------------------------------------------------------------ bookkeeping
    def shared_records(self, ids: Sequence[str] | None = None) -> dict[str, SharedRecord]:
        columns = "memory_id, file_sha256, form_sha256, mtime_ns, size, status, reason"
        if ids is None:
            rows = self.conn.execute(f"SELECT {columns} FROM shared_files").fetchall()
        else:
            rows = []
            for chunk in chunks(list(dict.fromkeys(ids))):
                rows += self.conn.execute(
                    f"SELECT {columns} FROM shared_files WHERE memory_id IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
        return {r[0]: _record(r) for r in rows if is_memory_id(r[0])}

    def shared_records_with_prefix(self, prefix: str) -> dict[str, SharedRecord]:
        """The records of the ids starting with `prefix` (one shard): a range of the primary key."""
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        rows = self.conn.execute(
            "SELECT memory_id, file_sha256, form_sha256, mtime_ns, size, status, reason FROM shared_files "
            "WHERE memory_id >= ? AND memory_id < ?",
            (prefix, upper),
        ).fetchall()
        return {r[0]: _record(r) for r in rows if is_memory_id(r[0])}

    def save_shared_records(self, records: Sequence[SharedRecord], dropped: Sequence[str] = ()) -> None:
        with self.transaction():
            self._save_records(records, dropped)

    def _save_records(self, records: Sequence[SharedRecord], dropped: Sequence[str]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO shared_files(memory_id, file_sha256, form_sha256, mtime_ns, size, status, reason) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.memory_id, r.file_sha256, r.form_sha256, r.mtime_ns, r.size, r.status, r.reason) for r in records],
        )
        for chunk in chunks(list(dropped)):
            self.conn.execute(f"DELETE FROM shared_files WHERE memory_id IN ({','.join('?' * len(chunk))})", chunk)

    def shared_state(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM shared_state WHERE name = ?", (name,)).fetchone()
        return row[0] if row and isinstance(row[0], str) else None

    def set_shared_state(self, name: str, value: str) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO shared_state(name, value) VALUES (?, ?)", (name, value))

    # ------------------------------------------------------------------ applying files
    def apply_shared(
        self,
        upserts: Sequence[SharedMemory],
        deletes: Sequence[str],
        records: Sequence[SharedRecord],
        dropped: Sequence[str],
        state: tuple[str, str] | None = None,
        *,
        local: bool = False,
    ) -> tuple[list[str], list[str], list[str]]:
        """In one transaction: insert or update the memories of `upserts` (their tags, entities and outgoing
        links replaced), delete the memories in `deletes`, save the bookkeeping. Personal memories are never
        touched by files; `local` (an edit made here) updates them too. Returns the ids (added, updated, deleted)."""
        added: list[str] = []
        updated: list[str] = []
        c = self.conn
        with self.transaction():
            personal = set() if local else self.personal_ids([s.memory.id for s in upserts] + list(deletes))
            current = dict(self.get_pk_map([s.memory.id for s in upserts]))
            # FTS5 flushes at every statement: the changed texts leave and re-enter the indexes in one statement each
            old_text = dict(self._pairs("SELECT pk, text FROM memories WHERE pk IN", list(current.values())))
            retext = [
                current[s.memory.id]
                for s in upserts
                if s.memory.id in current
                and s.memory.id not in personal
                and old_text.get(current[s.memory.id]) != s.memory.text
            ]
            for chunk in chunks(retext):
                self._unindex_text(f"pk IN ({','.join('?' * len(chunk))})", chunk)
            for item in upserts:
                mem = item.memory
                if mem.id in personal:
                    continue
                pk = current.get(mem.id)
                if pk is None:
                    self._insert(mem)
                    pk = self.pk_of(mem.id)
                    assert pk is not None
                    current[mem.id] = pk
                    added.append(mem.id)
                else:
                    self._update(pk, mem, keep_review=old_text.get(pk) == mem.text)
                    updated.append(mem.id)
                c.execute("DELETE FROM memory_entities WHERE memory_pk = ?", (pk,))
                c.execute("DELETE FROM entities_pending WHERE memory_pk = ?", (pk,))  # its entities are these now
                if item.entities:
                    c.executemany(
                        "INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", item.entities
                    )
                    c.executemany(
                        "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) SELECT ?, id FROM entities "
                        "WHERE name = ?",
                        [(pk, name) for name, _ in item.entities],
                    )
            for chunk in chunks(retext):
                self._index_text(f"pk IN ({','.join('?' * len(chunk))})", chunk)
            targets = dict(self.get_pk_map([to for s in upserts for to, _, _ in s.links]))
            for item in upserts:
                pk = current.get(item.memory.id)
                if pk is None or item.memory.id in personal:
                    continue
                c.execute("DELETE FROM memory_links WHERE memory_pk = ?", (pk,))
                c.executemany(  # a link to a memory this store does not have (personal elsewhere) is left out
                    "INSERT OR REPLACE INTO memory_links(memory_pk, linked_pk, link_type, score, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [
                        (pk, targets[to], kind, score, item.memory.updated_at)
                        for to, kind, score in item.links
                        if to in targets and targets[to] != pk
                    ],
                )
            gone = [i for i in self._existing(deletes) if i not in personal]
            if gone:
                self._delete_ids(gone)
            c.execute("DELETE FROM tags WHERE id NOT IN (SELECT tag_id FROM memory_tags)")
            self._save_records(records, dropped)
            if state is not None:
                c.execute("INSERT OR REPLACE INTO shared_state(name, value) VALUES (?, ?)", state)
        return added, updated, gone

    def _update(self, pk: int, mem: Memory, *, keep_review: bool = False) -> None:
        """The row's fields, provenance and tags (its text's indexes are the caller's: unindexed before, indexed
        after). `keep_review`: the text is the one the user reviewed (if they did), so their answer stands."""
        origin = mem.provenance
        self.conn.execute(
            "UPDATE memories SET text = ?, text_hash = ?, category = ?, importance = ?, entered_by = ?, source = ?, "
            "created_at = ?, updated_at = ?, expires_at = ?, archived = ?, superseded_by = ?, session_key = ?, "
            "seq = ?, origin = ?, origin_by = ?, origin_at = ?, "
            "review = CASE WHEN ? AND review IS NOT NULL THEN review ELSE ? END WHERE pk = ?",
            (
                mem.text,
                text_hash(mem.text),
                mem.category,
                mem.importance,
                mem.entered_by,
                mem.source,
                mem.created_at,
                mem.updated_at,
                mem.expires_at,
                int(mem.archived),
                mem.superseded_by,
                *session_position(mem.source),
                origin.origin,
                origin.by,
                origin.at,
                keep_review,
                origin.review,
                pk,
            ),
        )
        self.conn.execute("DELETE FROM memory_tags WHERE memory_pk = ?", (pk,))
        if mem.tags:
            self.conn.executemany("INSERT OR IGNORE INTO tags(name) VALUES (?)", [(t,) for t in mem.tags])
            self.conn.executemany(
                "INSERT OR IGNORE INTO memory_tags(memory_pk, tag_id) SELECT ?, id FROM tags WHERE name = ?",
                [(pk, t) for t in mem.tags],
            )
