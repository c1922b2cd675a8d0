"""codememory: local, per-project memory for AI coding agents.

from codememory import open_store
with open_store("/path/to/project") as store:
    store.add("We use pytest, not unittest", category="convention", tags=["testing"])
    for hit in store.search("pytest").hits:
        print(hit.memory.id, hit.memory.text)
"""

import importlib
import os
from typing import TYPE_CHECKING, Any

# Vector math here is matrix-vector products on one query: OpenBLAS threads gain nothing, and their
# spinning starves PyTorch's threads on small machines (proactive retrieval p50 137 ms -> 42 ms at 10k).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

if TYPE_CHECKING:
    from codememory.core.model import CATEGORIES, Memory
    from codememory.errors import CodememoryError, InvalidInput, NotFound, StoreNotFound, StoreUnusable
    from codememory.retrieval.search import Hit, SearchResult
    from codememory.service.project_store import Store, open_store
    from codememory.service.results import AddResult, ImportReport

__version__ = "0.1.0"

# The public names load on first use (PEP 562): the hook entry point (`codememory.hooks.dispatch`) runs on every
# prompt and edit and must not pay for the whole API when it only appends to a journal.
_LAZY = {
    "AddResult": ".service.results",
    "ImportReport": ".service.results",
    "Store": ".service.project_store",
    "open_store": ".service.project_store",
    "CodememoryError": ".errors",
    "InvalidInput": ".errors",
    "NotFound": ".errors",
    "StoreNotFound": ".errors",
    "StoreUnusable": ".errors",
    "CATEGORIES": ".core.model",
    "Memory": ".core.model",
    "Hit": ".retrieval.search",
    "SearchResult": ".retrieval.search",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codememory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "CATEGORIES",
    "AddResult",
    "CodememoryError",
    "Hit",
    "ImportReport",
    "InvalidInput",
    "Memory",
    "NotFound",
    "SearchResult",
    "Store",
    "StoreNotFound",
    "StoreUnusable",
    "__version__",
    "open_store",
]
