"""Entities for the memories a large import stored without them (service/entity_backfill.py): a few batches per
project per poll, so entity filters, hubs and counts see an imported file's memories seconds after the import."""

from __future__ import annotations

import logging

from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")

PER_POLL = 10_000  # memories per project per poll: about a second of extraction, in transactions of 2,000


class EntityBackfill:
    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("entities"):
            if state.stop_event.is_set():
                return
            try:
                with state.stores.use(root) as store:
                    if not store.db.has_entities_pending():
                        continue
                    done = store.fill_pending_entities(PER_POLL)
                    if done:
                        log.info("read the entities of %d imported memories of %s", done, root)
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("entity backfill failed in %s", root)
                state.health.record_error(exc, "entities")
