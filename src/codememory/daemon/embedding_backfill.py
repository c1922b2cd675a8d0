"""Vectors for memories that have none from the configured model: after the model changed (or embeddings were
turned on) a store's older memories are embedded here, a batch per project per poll, so search stops being
`degraded` without anyone running `codememory embed`."""

from __future__ import annotations

import logging

from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")

BATCH = 64  # per project per poll: a few hundred milliseconds with the default model


class EmbeddingBackfill:
    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("embedding"):
            try:
                with state.stores.use(root) as store:
                    model = store.semantic.model
                    if model is None or not store.semantic.count_needing(model):
                        continue
                    done = store.semantic.backfill(BATCH)
                    if done:
                        log.info("embedded %d memories of %s with %s", done, root, model)
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("embedding backfill failed in %s", root)
                state.health.record_error(exc, "embedding")
