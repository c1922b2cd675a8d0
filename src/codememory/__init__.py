"""codememory: local, per-project memory for AI coding agents.

from codememory import open_store
with open_store("/path/to/project") as store:
    store.add("We use pytest, not unittest", category="convention", tags=["testing"])
    for hit in store.search("pytest").hits:
        print(hit.memory.id, hit.memory.text)
"""

import os

# Vector math here is matrix-vector products on one query: OpenBLAS threads gain nothing, and their
# spinning starves PyTorch's threads on small machines (proactive retrieval p50 137 ms -> 42 ms at 10k).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .api import AddResult, ImportReport, Store, open_store
from .errors import CodememoryError, InvalidInput, NotFound, StoreNotFound, StoreUnusable
from .model import CATEGORIES, Memory
from .search import Hit, SearchResult

__version__ = "0.1.0"

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
