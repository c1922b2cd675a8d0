"""A project's store as one object: the connection (connection.py) with the table groups that speak SQL for
memories, keyword search, embeddings, links, entities and stats, one module each. Everything above the
store works with Memory objects and opaque row keys, and sees sqlite3 errors only as codememory's errors.

The session, capture, extraction, raw-event and injection tables have their own classes over the same
connection (sessions.py, capture.py, ...)."""

from __future__ import annotations

from codememory.store.connection import BUSY_TIMEOUT_S
from codememory.store.embeddings import EmbeddingRows
from codememory.store.entities import EntityRows
from codememory.store.failures import store_errors
from codememory.store.links import LinkRows
from codememory.store.memories import MemoryRows
from codememory.store.provenance import ProvenanceRows
from codememory.store.session_seen import SessionSeenRows
from codememory.store.shared import SharedRows
from codememory.store.staleness import StaleRows
from codememory.store.stats import StoreStats
from codememory.store.text_search import TextSearch
from codememory.store.usage import UsageRows


@store_errors(BUSY_TIMEOUT_S)
class Database(
    SharedRows,
    ProvenanceRows,
    MemoryRows,
    TextSearch,
    EmbeddingRows,
    LinkRows,
    EntityRows,
    StoreStats,
    StaleRows,
    UsageRows,
    SessionSeenRows,
):
    """A project's SQLite store (see StoreConnection for how it is opened and written). The file is
    untrusted input: its schema must be exactly the migrations' (schema.py), nothing stored in it runs,
    rows are checked as they are read (rows.py), and every sqlite3 error a method meets leaves it as one
    of codememory's errors (failures.py)."""
