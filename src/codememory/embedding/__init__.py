"""Embedders: text -> unit-length float32 vectors, behind one small interface.

Heavy dependencies (torch, sentence-transformers) are imported only when a local model is configured.
"""

from __future__ import annotations

from codememory.embedding.base import Embedder
from codememory.embedding.factory import create_embedder

__all__ = ["Embedder", "create_embedder"]
