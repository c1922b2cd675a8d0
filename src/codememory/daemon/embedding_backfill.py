"""Vectors for memories that have none from the configured model: after the model changed (or embeddings were
turned on) a store's older memories are embedded here, a batch per project per poll, so search stops being
`degraded` without anyone running `codememory embed`."""

from __future__ import annotations

import logging
from pathlib import Path

from codememory.daemon.state import DaemonState
from codememory.store.embeddings import count_needing_apart

log = logging.getLogger("codememory.daemon")

BATCH = 64  # per project per poll: a few hundred milliseconds with the default model


class EmbeddingBackfill:
    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("embedding"):
            try:
                if self._needing(state, root):
                    with state.stores.use(root) as store:
                        done = store.semantic.backfill(BATCH)
                        if done:
                            log.info("embedded %d memories of %s with %s", done, root, store.semantic.model)
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("embedding backfill failed in %s", root)
                state.health.record_error(exc, "embedding")

    @staticmethod
    def _needing(state: DaemonState, root: Path) -> int:
        """How many of the project's memories need a vector: the count kept while nothing changed, else counted
        again on a read-only connection of its own without holding the store (0.6 s of a core at 100k memories,
        after every new memory or vector: requests to the store do not wait for it)."""
        with state.stores.use(root) as store:
            model = store.semantic.model
            if model is None:
                return 0
            known = store.semantic.needing_if_known(model)
            path = store.db.path
        if known is not None:
            return known
        counters, count = count_needing_apart(path, model)
        with state.stores.use(root) as store:  # kept for as long as the store's counters still say the same
            store.semantic.remember_needing(model, counters, count)
        return count
