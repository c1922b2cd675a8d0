"""The embeddings table group: one vector per memory and model, with the hash of the text it was computed
from (a changed text needs a new vector) and a sequence number (what changed since a cached index). The vector
itself (float16 bytes; float32 in rows written before) is in `embedding_vectors`, keyed by that number."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import Filters
from codememory.store.memories import text_hash
from codememory.store.rows import VALID_MEMORY_SQL

_NEEDS_VECTOR = "e.memory_pk IS NULL OR e.text_hash != m.text_hash"
_COUNT_NEEDING = (
    "SELECT COUNT(*) FROM memories m LEFT JOIN embeddings e ON e.memory_pk = m.pk AND e.model = ? "
    f"WHERE ({_NEEDS_VECTOR}) AND {VALID_MEMORY_SQL}"
)
_CHANGE_COUNTERS = "SELECT name, value FROM counters WHERE name IN ('text_version', 'embedding_seq')"


def _counters(rows: Iterator[Any]) -> tuple[int, int]:
    found = dict(rows)
    return int(found.get("text_version", 0)), int(found.get("embedding_seq", 0))


def count_needing_apart(path: Path, model: str) -> tuple[tuple[int, int], int]:
    """count_needing_embedding on a read-only connection of its own, with the change counters it answers for (read
    in the same snapshot): the count visits every memory (0.5-0.6 s of a core at 100k), and on the store's shared
    connection every request to the store waited behind it. What it sees is the last commit, as the counters are."""
    reader = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        reader.execute("PRAGMA trusted_schema = OFF")  # as the store's own connection (connection.py)
        reader.execute("PRAGMA query_only = ON")
        reader.execute("BEGIN")  # one snapshot for both reads (WAL): the counters say which state was counted
        key = _counters(reader.execute(_CHANGE_COUNTERS))
        count = int(reader.execute(_COUNT_NEEDING, (model,)).fetchone()[0])
        reader.execute("COMMIT")
        return key, count
    finally:
        reader.close()


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
        return int(self.conn.execute(_COUNT_NEEDING, (model,)).fetchone()[0])

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
        """rows: (memory pk, text the vector was computed from, vector bytes, dimension). Each gets the next
        sequence number; a memory's earlier vector from the model is replaced (a trigger drops its bytes)."""
        if not rows:
            return
        with self.transaction():
            rows = list({row[0]: row for row in rows}.values())  # one vector per memory: the last given
            seq = int(self.conn.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0])
            numbered = [(seq + i + 1, pk, text, blob, dim) for i, (pk, text, blob, dim) in enumerate(rows)]
            # The row's own text_hash while its text is the one embedded (a committed row may hold any hash: with
            # the recomputed one it would never match, and be embedded again on every poll); else the text's.
            self.conn.executemany(
                "INSERT INTO embeddings(memory_pk, model, dim, text_hash, seq) "
                "SELECT pk, ?, ?, CASE WHEN text = ? THEN text_hash ELSE ? END, ? FROM memories "
                "WHERE pk = ? ON CONFLICT(memory_pk, model) DO UPDATE SET dim = excluded.dim, "
                "text_hash = excluded.text_hash, seq = excluded.seq",
                [(model, dim, text, text_hash(text), n, pk) for n, pk, text, _blob, dim in numbered],
            )
            self.conn.executemany(
                "INSERT INTO embedding_vectors(seq, vector) SELECT ?, ? "
                "WHERE EXISTS (SELECT 1 FROM memories WHERE pk = ?)",
                [(n, blob, pk) for n, pk, _text, blob, _dim in numbered],
            )
            self.conn.execute("UPDATE counters SET value = ? WHERE name = 'embedding_seq'", (seq + len(rows),))

    def copy_embeddings(self, from_pk: int, to_pk: int) -> None:
        """Give `to_pk` the vectors of `from_pk` (a squash keeps its source's meaning), each under a new sequence
        number so cached copies of the table see it. Runs inside the caller's transaction."""
        c = self.conn
        for model, dim, digest, blob in c.execute(
            "SELECT e.model, e.dim, e.text_hash, v.vector FROM embeddings e JOIN embedding_vectors v ON v.seq = e.seq "
            "WHERE e.memory_pk = ?",
            (from_pk,),
        ).fetchall():
            seq = int(c.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0]) + 1
            c.execute(
                "INSERT INTO embeddings(memory_pk, model, dim, text_hash, seq) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(memory_pk, model) DO UPDATE SET dim = excluded.dim, text_hash = excluded.text_hash, "
                "seq = excluded.seq",
                (to_pk, model, dim, digest, seq),
            )
            c.execute("INSERT INTO embedding_vectors(seq, vector) VALUES (?, ?)", (seq, blob))
            c.execute("UPDATE counters SET value = ? WHERE name = 'embedding_seq'", (seq,))

    def drop_other_embeddings(self, model: str) -> None:
        """Drop every other model's vectors. When any went, a sequence number is spent with no vector: another
        process still embedding with one of those models keys its counts on the counters (Semantic.count_needing,
        kept until they move) and must count its memories as needing a vector again."""
        with self.transaction():
            if self.conn.execute("DELETE FROM embeddings WHERE model != ?", (model,)).rowcount:
                self.conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'embedding_seq'")

    def embedding_counter(self) -> int:
        """The highest sequence number ever given to a vector (any model): unchanged, no vector was written. One
        row read, for every search (counting the table took milliseconds at 100k vectors, several times a request)."""
        return int(self.conn.execute("SELECT value FROM counters WHERE name = 'embedding_seq'").fetchone()[0])

    def change_counters(self) -> tuple[int, int]:
        """(text_version, embedding_seq): the first moves whenever a memory is added, removed or its text changes,
        the second whenever a vector is written; a count derived from both is current while neither moved."""
        return _counters(self.conn.execute(_CHANGE_COUNTERS))

    def count_vectors(self, model: str) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0])

    def embedding_state(self, model: str) -> tuple[int, int]:
        """(number of vectors for `model`, highest sequence number)."""
        count, top = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM embeddings WHERE model = ?", (model,)
        ).fetchone()
        return int(count), int(top)

    def vector_pk_at(self, model: str, seq: int) -> int | None:
        """The memory whose vector from `model` has this sequence number (None: no such vector now)."""
        row = self.conn.execute("SELECT memory_pk FROM embeddings WHERE model = ? AND seq = ?", (model, seq)).fetchone()
        return int(row[0]) if row else None

    def vector_batches(self, model: str, after_seq: int, batch: int) -> Iterator[list[tuple[int, int, int, bytes]]]:
        """(memory pk, seq, dimension, vector bytes) for `model` newer than `after_seq`, in sequence order, `batch`
        rows at a time."""
        while True:
            rows = self.conn.execute(
                "SELECT e.memory_pk, e.seq, e.dim, v.vector FROM embeddings e "
                "JOIN embedding_vectors v ON v.seq = e.seq WHERE e.model = ? AND e.seq > ? ORDER BY e.seq LIMIT ?",
                (model, after_seq, batch),
            ).fetchall()
            if not rows:
                return
            yield rows
            after_seq = rows[-1][1]

    def vectors(self, model: str, after_seq: int = 0) -> list[tuple[int, int, int, bytes]]:
        """(memory pk, seq, dimension, vector bytes) for `model`, newer than `after_seq`."""
        return [row for rows in self.vector_batches(model, after_seq, 10_000) for row in rows]

    def vectors_for(self, model: str, pks: Sequence[int]) -> dict[int, tuple[int, bytes]]:
        """memory pk -> (dimension, vector bytes) of these memories' vectors from `model`."""
        out: dict[int, tuple[int, bytes]] = {}
        for chunk in chunks(list(pks)):
            for pk, dim, blob in self.conn.execute(
                "SELECT e.memory_pk, e.dim, v.vector FROM embeddings e JOIN embedding_vectors v ON v.seq = e.seq "
                f"WHERE e.model = ? AND e.memory_pk IN ({','.join('?' * len(chunk))})",
                (model, *chunk),
            ):
                out[pk] = (dim, blob)
        return out

    def live_pks(self, pks: Sequence[int], filters: Filters) -> set[int]:
        """Which of these memories pass the filters (vector hits come from a cache that may be stale)."""
        return self.passing(pks, filters)

    def filtered_pks(self, filters: Filters, limit: int) -> list[int]:
        """Up to `limit` memories passing the filters (a selective filter's members, searched exactly)."""
        where, params = filters.where()
        return [r[0] for r in self.conn.execute(f"SELECT m.pk FROM memories m WHERE {where} LIMIT ?", (*params, limit))]
