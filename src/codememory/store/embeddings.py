"""The embeddings table group: one vector per memory and model, with the hash of the text it was computed
from (a changed text needs a new vector) and a sequence number (what changed since a cached index)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import Filters
from codememory.store.memories import text_hash
from codememory.store.rows import VALID_MEMORY_SQL

_NEEDS_VECTOR = "e.memory_pk IS NULL OR e.text_hash != m.text_hash"


class EmbeddingRows(StoreConnection):
    """Reads and writes of memories' vectors (float32 bytes)."""

    def needing_embedding(self, model: str, limit: int, pks: Sequence[int] | None = None) -> list[tuple[int, str]]:
        """Memories with no vector from `model`, or one computed from different text. Rows no codememory writes
        (a committed store's: a blob for text, a bad id) are never embedded: they would be on every poll."""
        where = f"({_NEEDS_VECTOR}) AND {VALID_MEMORY_SQL}"
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
                f"WHERE ({_NEEDS_VECTOR}) AND {VALID_MEMORY_SQL}",
                (model,),
            ).fetchone()[0]
        )

    def count_valid_without_vector(self, model: str) -> int:
        """count_without_vector of the valid rows only (a full scan: asked when the cheap count is not zero)."""
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM memories m LEFT JOIN embeddings e ON e.memory_pk = m.pk AND e.model = ? "
                f"WHERE e.memory_pk IS NULL AND {VALID_MEMORY_SQL}",
                (model,),
            ).fetchone()[0]
        )

    def save_embeddings(self, model: str, rows: Sequence[tuple[int, str, bytes, int]]) -> None:
        """rows: (memory pk, text the vector was computed from, float32 bytes, dimension)."""
        if not rows:
            return
        with self.transaction():
            seq = int(self.conn.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0])
            # The row's own text_hash while its text is the one embedded (a committed row may hold any hash: with
            # the recomputed one it would never match, and be embedded again on every poll); else the text's.
            self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings(memory_pk, model, dim, text_hash, seq, vector) "
                "SELECT pk, ?, ?, CASE WHEN text = ? THEN text_hash ELSE ? END, ?, ? FROM memories WHERE pk = ?",
                [
                    (model, dim, text, text_hash(text), seq + i + 1, blob, pk)
                    for i, (pk, text, blob, dim) in enumerate(rows)
                ],
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
        for chunk in chunks(list(pks)):
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
        for chunk in chunks(list(pks)):
            out.update(
                r[0]
                for r in self.conn.execute(
                    f"SELECT m.pk FROM memories m WHERE m.pk IN ({','.join('?' * len(chunk))}) AND {where}",
                    (*chunk, *params),
                )
            )
        return out
