"""The vector index's upkeep, owned by the daemon: for each open project, the HNSW graph is built once the store
is large enough and extended by the vectors written after it (`VectorIndex.maintenance`), in a thread of its own
so neither a request nor the other background tasks ever wait for it.

The job touches only the index's files under `.codememory/cache/vectors/`; a search in the meantime uses the
graph it has and scores the newer vectors exactly, then picks up the new graph file on its next look.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")


class VectorUpkeep:
    """A daemon task: at most one maintenance job runs at a time, started from the worker thread's poll."""

    def __init__(self) -> None:
        self._running: threading.Thread | None = None
        self.jobs_done = 0

    def __call__(self, state: DaemonState) -> None:
        if self._running is not None and self._running.is_alive():
            return
        for root in state.stores.open_roots():
            if state.stop_event.is_set():
                return
            try:
                with state.stores.use(root) as store:
                    job = store.semantic.maintenance() if store.semantic.configured else None
            except Exception as exc:  # a project that cannot be looked at now is looked at on the next poll
                state.health.record_error(exc, "vector index")
                continue
            if job is not None:
                self._running = threading.Thread(
                    target=self._run, args=(state, str(root), job), name="codememory-vector-upkeep", daemon=True
                )
                self._running.start()
                return

    def _run(self, state: DaemonState, root: str, job: Callable[[], bool]) -> None:
        try:
            if job():
                log.info("vector index of %s brought up to date", root)
            self.jobs_done += 1
        except Exception as exc:  # the index is a cache: searches go on with the one they have
            log.exception("vector index upkeep failed in %s", root)
            state.health.record_error(exc, "vector index")
        finally:
            _give_memory_back()


def _give_memory_back() -> None:
    """A job held a modifiable copy of the graph (tens of MB at 100k vectors) and freed it; glibc keeps freed memory
    for reuse, so the idle daemon would stay that much larger. malloc_trim returns it (glibc only; elsewhere the
    allocator decides)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
        if trim is not None:
            trim(0)
    except OSError:
        pass
