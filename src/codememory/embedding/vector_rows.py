"""How a vector is kept in the embeddings table (half-precision blobs) and which of the index's rows holds a
memory's latest vector: the row-level pieces the vector index (vectors.py) and its upkeep share, and the blob
format every reader of the table (publishing, consolidation) decodes."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from codememory.embedding.vector_files import Keys, Matrix


def to_blob(vector: npt.ArrayLike) -> bytes:
    """How a vector is stored: float16 (half the bytes; a cosine moves by about 1e-4)."""
    return np.asarray(vector, dtype="<f2").tobytes()


def from_blob(blob: bytes, dim: int) -> Matrix:
    """A stored vector as float32: float16 bytes, or float32 ones written before vectors were stored in half."""
    if len(blob) == 2 * dim:
        return np.frombuffer(blob, dtype="<f2").astype(np.float32)
    return np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32)


def decode_rows(rows: list[tuple[int, int, int, bytes]], dim: int) -> tuple[Keys, Keys, Matrix]:
    """(pks, seqs, float32 matrix) of table rows with `dim` values (a row of another size is left out)."""
    half = [r for r in rows if r[2] == dim and len(r[3]) == 2 * dim]
    full = [r for r in rows if r[2] == dim and len(r[3]) == 4 * dim]
    if full and half:  # rows of both kinds (written before and after vectors were halved): keep the table's order
        kept = sorted(half + full, key=lambda r: r[1])
        matrix = np.vstack([from_blob(r[3], dim) for r in kept]) if kept else np.zeros((0, dim), np.float32)
    else:
        kept = half or full
        dtype = "<f2" if half else "<f4"
        matrix = np.frombuffer(b"".join(r[3] for r in kept), dtype=dtype).reshape(len(kept), dim).astype(np.float32)
    pks = np.fromiter((r[0] for r in kept), dtype=np.int64, count=len(kept))
    seqs = np.fromiter((r[1] for r in kept), dtype=np.int64, count=len(kept))
    return pks, seqs, matrix


class Positions:
    """Memory row key -> the row holding its latest vector (a memory embedded again is appended again)."""

    def __init__(self) -> None:
        self.n = 0  # rows covered
        self._built = 0
        self._keys: Keys = np.zeros(0, np.int64)  # sorted, unique
        self._rows: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._tail: dict[int, int] = {}  # rows after the sorted part

    def update(self, pks: Keys) -> None:
        if len(pks) < self.n or len(self._tail) + len(pks) - self.n > max(20_000, self._built // 8):
            order = np.argsort(pks, kind="stable")
            ordered = pks[order]
            last = np.ones(len(ordered), dtype=bool)
            last[:-1] = ordered[1:] != ordered[:-1]
            self._keys, self._rows = ordered[last], order[last].astype(np.int64)
            self._tail, self._built = {}, len(pks)
        else:
            for i, pk in enumerate(pks[self.n :].tolist(), start=self.n):
                self._tail[pk] = i
        self.n = len(pks)

    def rows(self, pks: Iterable[int]) -> npt.NDArray[np.int64]:
        """Each key's row, -1 for a key with no vector."""
        wanted = np.fromiter(pks, dtype=np.int64)
        out = np.full(len(wanted), -1, dtype=np.int64)
        if len(self._keys) and len(wanted):
            at = np.minimum(np.searchsorted(self._keys, wanted), len(self._keys) - 1)
            hit = self._keys[at] == wanted
            out[hit] = self._rows[at[hit]]
        if self._tail:
            for i, pk in enumerate(wanted.tolist()):
                row = self._tail.get(pk)
                if row is not None:
                    out[i] = row
        return out

    def distinct(self) -> int:
        """How many memories have a vector among the rows."""
        if not self._tail:
            return len(self._keys)
        tail = np.fromiter(self._tail, dtype=np.int64, count=len(self._tail))
        if not len(self._keys):
            return len(tail)
        at = np.minimum(np.searchsorted(self._keys, tail), len(self._keys) - 1)
        return len(self._keys) + int((self._keys[at] != tail).sum())
