"""The entities table group: the libraries, tools, files and errors each memory mentions (names and types
from text.entities), for hub discovery and the entity counts of `stats`."""

from __future__ import annotations

from collections.abc import Sequence

from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import Filters
from codememory.store.rows import is_label


class EntityRows(StoreConnection):
    """Writes and reads of memories' entities."""

    def set_entities(self, items: Sequence[tuple[int, Sequence[tuple[str, str]]]]) -> None:
        """items: (memory pk, [(entity name, type)]) — replaces each memory's entities."""
        with self.transaction():
            for pk, entities in items:
                self.conn.execute("DELETE FROM memory_entities WHERE memory_pk = ?", (pk,))
                self.conn.execute("DELETE FROM entities_pending WHERE memory_pk = ?", (pk,))
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

    def add_entities(self, items: Sequence[tuple[int, Sequence[tuple[str, str]]]], *, unmark: bool = True) -> None:
        """items: (memory pk, [(entity name, type)]) for memories that have none yet (just inserted, or pending):
        two statements for the whole batch instead of three per memory; their pending marks go in the same
        transaction (`unmark`: False for rows inserted in this transaction, which were never marked)."""
        pairs = [(pk, name) for pk, entities in items for name, _ in entities]
        with self.transaction():
            if unmark:
                self.conn.executemany("DELETE FROM entities_pending WHERE memory_pk = ?", [(pk,) for pk, _ in items])
            if not pairs:
                return
            named = {name: (name, kind) for _, entities in items for name, kind in entities}
            self.conn.executemany(
                "INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", list(named.values())
            )
            # Each name's id read once for the batch (a few hundred names for thousands of links), then the links
            # written as plain values: a sub-select per link was the largest statement of an import's writer.
            ids: dict[str, int] = {}
            for chunk in chunks(list(named)):
                ids.update(
                    self.conn.execute(
                        f"SELECT name, id FROM entities WHERE name IN ({','.join('?' * len(chunk))})", chunk
                    ).fetchall()
                )
            self.conn.executemany(
                "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) VALUES (?, ?)",
                [(pk, ids[name]) for pk, name in pairs],
            )

    # ------------------------------------------------------------------ entities not extracted yet
    def mark_entities_pending(self, pks: Sequence[int]) -> None:
        """These memories' entities are still to be read from their text (inside the caller's transaction)."""
        with self.transaction():
            if pks and max(pks) - min(pks) + 1 == len(pks) == len(set(pks)):  # an import's batch: consecutive pks
                self.conn.execute(
                    "INSERT OR IGNORE INTO entities_pending(memory_pk) "
                    "SELECT pk FROM memories WHERE pk BETWEEN ? AND ?",
                    (min(pks), max(pks)),
                )
            else:
                self.conn.executemany(
                    "INSERT OR IGNORE INTO entities_pending(memory_pk) VALUES (?)", [(pk,) for pk in pks]
                )

    def entities_pending(self, limit: int, after: int = 0) -> list[tuple[int, str]]:
        """(pk, text) of up to `limit` memories after pk `after` whose entities are not known yet, oldest first."""
        rows = self.conn.execute(
            "SELECT m.pk, m.text FROM entities_pending p JOIN memories m ON m.pk = p.memory_pk "
            "WHERE p.memory_pk > ? ORDER BY p.memory_pk LIMIT ?",
            (after, limit),
        ).fetchall()
        return [(int(pk), str(text)) for pk, text in rows]

    def still_pending(self, pks: Sequence[int]) -> set[int]:
        """Those of `pks` still marked (an edit since unmarked the others: their entities are stored already)."""
        out: set[int] = set()
        for chunk in chunks(list(pks)):
            out.update(
                pk
                for (pk,) in self.conn.execute(
                    f"SELECT memory_pk FROM entities_pending WHERE memory_pk IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def has_entities_pending(self) -> bool:
        """One probe of a small table: whether any memory still waits for its entities."""
        return self.conn.execute("SELECT 1 FROM entities_pending LIMIT 1").fetchone() is not None

    def count_entities_pending(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM entities_pending").fetchone()[0])

    def entities_of(self, pks: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        out: dict[int, list[tuple[str, str]]] = {}
        for chunk in chunks(list(pks)):
            for pk, name, typ in self.conn.execute(
                "SELECT me.memory_pk, e.name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk IN ({','.join('?' * len(chunk))}) ORDER BY e.name",
                chunk,
            ):
                if is_label(name) and is_label(typ):
                    out.setdefault(pk, []).append((name, typ))
        out.update(self._read_pending(pks))
        return out

    def _read_pending(self, pks: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
        """The entities of those of `pks` an import left pending, read from their text (not stored: that is the
        pass after the import's). Nothing is read when no memory is pending."""
        if not self.has_entities_pending():
            return {}
        from codememory.text.entities import extract_entities  # the pass after a large import is seldom behind

        out: dict[int, list[tuple[str, str]]] = {}
        for chunk in chunks(list(pks)):
            for pk, text in self.conn.execute(
                "SELECT m.pk, m.text FROM entities_pending p JOIN memories m ON m.pk = p.memory_pk "
                f"WHERE p.memory_pk IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                found = sorted((e.name, e.type) for e in extract_entities(str(text)))
                if found:
                    out[int(pk)] = found
        return out

    def entities_with_counts(self, pks: Sequence[int], cap: int) -> dict[int, list[tuple[str, str, int]]]:
        """Each memory's entities with how many memories name them, counted up to `cap + 1` (enough to tell a rare
        entity from a common one without counting every memory that names `python`)."""
        out: dict[int, list[tuple[str, str, int]]] = {}
        for chunk in chunks(list(pks)):
            for pk, name, typ, count in self.conn.execute(
                "SELECT me.memory_pk, e.name, e.type, (SELECT COUNT(*) FROM (SELECT 1 FROM memory_entities o "
                "WHERE o.entity_id = e.id LIMIT ?)) FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk IN ({','.join('?' * len(chunk))}) ORDER BY me.memory_pk, e.id",
                (cap + 1, *chunk),
            ):
                if is_label(name) and is_label(typ) and isinstance(count, int):
                    out.setdefault(pk, []).append((name, typ, count))
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

    def count_with_entity_type(self, kind: str) -> int:
        """How many memories name an entity of this type (`database`, `framework`, ...)."""
        row = self.conn.execute(
            "SELECT COUNT(DISTINCT me.memory_pk) FROM entities e JOIN memory_entities me ON me.entity_id = e.id "
            "WHERE e.type = ?",
            (kind,),
        ).fetchone()
        return int(row[0]) if row else 0

    def with_entity_type(self, kind: str, pks: Sequence[int]) -> set[int]:
        """Which of these memories name an entity of this type."""
        out: set[int] = set()
        for chunk in chunks(list(pks)):
            out.update(
                pk
                for (pk,) in self.conn.execute(
                    "SELECT DISTINCT me.memory_pk FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                    f"WHERE e.type = ? AND me.memory_pk IN ({','.join('?' * len(chunk))})",
                    (kind, *chunk),
                )
            )
        return out
