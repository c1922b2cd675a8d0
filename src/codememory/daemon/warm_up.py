"""Load what the first agent request would otherwise wait for: the embedding model and each recent project's
vector snapshot, once, right after the daemon starts, and read the vector index's files into the page cache in one
sequential background pass (a request meanwhile answers from keywords rather than wait for the vectors).

The OpenCode plugin gives `/retrieve` a few hundred milliseconds before it treats the daemon as down; a cold
first call (the model loading, the vectors read from the store) can take seconds on a busy machine, so the
first turns of a session after `daemon start` got no memories at all (benchmarks/README.md, "What the agent
sees"). A search through the store does all of it the way a request would.

Then what the daemon holds for good (its modules, the app, the stores' vocabularies and models' wrappers: some 70,000
objects at 100k memories) is moved out of the cycle collector's sight (`gc.freeze`). Every full collection walked
all of it again, 10-40 ms with the interpreter held, about once in 20-30 requests: a request's own tail
(benchmarks/README.md, "/retrieve p95 at 100k").
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from codememory.core.project import db_path
from codememory.daemon.state import DaemonState
from codememory.errors import CodememoryError

if TYPE_CHECKING:
    from codememory.core.page_cache import Pass
    from codememory.service.project_store import Store

log = logging.getLogger("codememory.daemon")

MAX_PROJECTS = 4  # the most recently used stores: warming every registered project could take minutes


def _used_at(root: Path) -> float | None:
    """When the project's store was last written; None when it has none (or it vanished meanwhile)."""
    try:
        return db_path(root).stat().st_mtime
    except OSError:
        return None


def read_ahead(store: Store) -> Pass | None:
    """Queue the store's vector index for one sequential background read into the page cache (core/page_cache.py;
    a request skips the vectors until they are in). At 100k memories it is about 270 MB, which random faults took
    seconds to bring in, and one pass a fraction of that. None: no vector index.

    Not the database: this process must never open and close a descriptor of a SQLite file itself, since closing
    any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included."""
    return store.semantic.read_ahead()


class WarmUp:
    """A task that does its work on the first poll only: for each recent store, the model loaded and the files
    queued for reading (holding the store briefly), then, once its vectors are in, a search that opens the index
    (the store is not held while the disk is read: a request meanwhile answers from keywords)."""

    def __init__(self) -> None:
        self.done = False

    def __call__(self, state: DaemonState) -> None:
        if self.done:
            return
        self.done = True
        try:
            roots = [Path(r) for r in state.projects.roots()]
        except CodememoryError as exc:
            state.health.record_error(exc, "warm-up")
            return
        recent = sorted(((when, root) for root in roots if (when := _used_at(root)) is not None), reverse=True)
        reading: list[tuple[Path, Pass | None]] = []
        for _when, root in recent[:MAX_PROJECTS]:
            if state.stop_event.is_set():
                return
            try:
                with state.stores.use(root) as store:
                    if store.semantic.configured:
                        store.semantic.embed_query("codememory warm-up")  # the model, loaded once for all
                        loaded = store.semantic.embedder() is not None and store.semantic.reason is None
                        state.health.note_embedding(loaded, loaded, store.config.embedding.provider)
                        reading.append((root, read_ahead(store)))
            except Exception as exc:  # a project that cannot be warmed is warmed by its first request instead
                log.warning("warm-up of %s failed: %s", root, exc)
        from codememory.retrieval.second_opinion import not_asked

        for root, work in reading:
            while work is not None and not work.done.wait(0.5):
                if state.stop_event.is_set():
                    return
            try:
                with state.stores.use(root) as store, not_asked():
                    # maps the index and its graph, now in memory; counted as no one's access, asking no second opinion
                    store.search("codememory warm-up", limit=1, touch=False)
                    # what a request's retrieval loads on first use (its modules, word lists), shown to no one
                    store.retrieve(["codememory warm-up"], touch=False)
            except Exception as exc:
                log.warning("warm-up of %s failed: %s", root, exc)
        settle()


def settle() -> None:
    """Leave what the process holds now to the permanent generation: full collections then walk only what was
    allocated since (a request's garbage and the caches it grows), not the modules, app and stores held for good.
    Collected first, so no garbage is frozen with it."""
    gc.collect()
    gc.freeze()
