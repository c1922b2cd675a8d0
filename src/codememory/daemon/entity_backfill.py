"""Entities for the memories a large import stored without them (service/entity_backfill.py): a few batches per
project per poll, so entity filters, hubs and counts see an imported file's memories seconds after the import."""

from __future__ import annotations

import logging

from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")

PER_POLL = 10_000  # memories per project per poll: about a second of extraction
BATCH = 1_000  # memories per hold of the project's store: ~0.1 s, while /retrieve waits on the same lock


class EntityBackfill:
    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("entities"):
            if state.stop_event.is_set():
                return
            done = 0
            try:
                while done < PER_POLL and not state.stop_event.is_set():
                    with state.stores.use(root) as store:  # released between batches: a recall may come first
                        if not store.db.has_entities_pending():
                            break
                        filled = store.fill_pending_entities(min(BATCH, PER_POLL - done))
                    if not filled:
                        break
                    done += filled
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("entity backfill failed in %s", root)
                state.health.record_error(exc, "entities")
            if done:
                log.info("read the entities of %d imported memories of %s", done, root)
