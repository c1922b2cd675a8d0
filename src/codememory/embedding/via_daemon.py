"""Vectors from the daemon's warm model, when this user runs a daemon; the local model otherwise.

A CLI call or a hook that loads a model itself pays its start-up on every call (a tenth of a second for the
default model, seconds for a torch model); the daemon keeps one loaded. Only local models go this way: the
daemon computes exactly what this process would, so vectors from either are interchangeable (same `name`).
Any failure — no daemon, an older daemon without /embed, a timeout, another model — switches this process to
its own copy of the model for good, so a request is never lost, only slower.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import asdict

import numpy as np

from codememory.core.config import EmbeddingConfig
from codememory.core.loopback import post_json
from codememory.embedding.base import Embedder, Vectors

MAX_TEXTS = 512  # per request (the daemon's limit)
SENT_SETTINGS = ("provider", "model", "query_model", "query_prompt", "query_prefix", "document_prefix", "device")
SECONDS_PER_DOCUMENT = 0.05


class DaemonEmbedder(Embedder):
    def __init__(self, cfg: EmbeddingConfig, name: str, local: Callable[[], Embedder]) -> None:
        self.cfg = cfg
        self.name = name
        self._make_local = local
        self._local: Embedder | None = None
        self.via_daemon = True  # False once the daemon failed us (then every call is local)

    def local(self) -> Embedder:
        if self._local is None:
            self._local = self._make_local()
        return self._local

    def _remote(self, texts: Sequence[str], query: bool) -> Vectors | None:
        if not self.via_daemon or not texts:
            return None
        settings = {k: v for k, v in asdict(self.cfg).items() if k in SENT_SETTINGS}  # the daemon batches as it likes
        parts = []
        for start in range(0, len(texts), MAX_TEXTS):
            chunk = list(texts[start : start + MAX_TEXTS])
            timeout = self.cfg.daemon_query_timeout + (0.0 if query else SECONDS_PER_DOCUMENT * len(chunk))
            answer = post_json("/embed", {"embedding": settings, "texts": chunk, "query": query}, timeout)
            vectors = _decode(answer, self.name, len(chunk))
            if vectors is None:
                self.via_daemon = False
                return None
            parts.append(vectors)
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        vectors = self._remote(texts, query=False)
        return vectors if vectors is not None else self.local().embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_queries([text])[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        vectors = self._remote(texts, query=True)
        return vectors if vectors is not None else self.local().embed_queries(texts)


def _decode(answer: dict[str, object] | None, name: str, rows: int) -> Vectors | None:
    """The daemon's {model, dim, vectors: base64 float32} as rows × dim, or None when it is not what we asked."""
    if answer is None or answer.get("model") != name:
        return None
    dim, blob = answer.get("dim"), answer.get("vectors")
    if not isinstance(dim, int) or dim <= 0 or not isinstance(blob, str):
        return None
    try:
        raw = base64.b64decode(blob, validate=True)
    except ValueError:
        return None
    if len(raw) != rows * dim * 4:
        return None
    vectors: Vectors = np.frombuffer(raw, dtype=np.float32).reshape(rows, dim).copy()
    return vectors


def encode_vectors(vectors: Vectors) -> str:
    """The daemon's side of `_decode`."""
    return base64.b64encode(np.ascontiguousarray(vectors, dtype=np.float32).tobytes()).decode("ascii")
