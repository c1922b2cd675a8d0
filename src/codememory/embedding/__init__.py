"""Embedders: text -> unit-length float32 vectors, behind one small interface.

Heavy dependencies (numpy, torch, sentence-transformers) are imported only when used: the names below load
on first use (PEP 562), so a module of this package that needs none of them (`semantic`'s constants, the
relevance floor's settings) can be imported by the CLI and the hooks without paying for numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codememory.embedding.base import Embedder
    from codememory.embedding.factory import create_embedder

_LAZY = {"Embedder": "codememory.embedding.base", "create_embedder": "codememory.embedding.factory"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codememory.embedding' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["Embedder", "create_embedder"]
