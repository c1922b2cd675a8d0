from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(ABC):
    """`name` identifies the vector space: vectors from different names are never compared."""

    name: str

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One unit-length row per text."""

    @abstractmethod
    def embed_query(self, text: str) -> Vectors:
        """A unit-length vector for a search query (asymmetric models encode queries differently)."""

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Several queries at once (one model call where the backend allows it)."""
        return np.vstack([self.embed_query(t) for t in texts])


def normalize(vectors: npt.ArrayLike) -> Vectors:
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (arr / norms).astype(np.float32)
    return out
