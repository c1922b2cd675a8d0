"""The daemon's part of team sharing: after a `git pull`, the memory files that changed in a registered project's
`.codememory/memories/` are applied to its store (the shards git touched, every poll; every shard, catching edits
made in place, every FULL_EVERY seconds) and the changed memories embedded, so the OpenCode plugin's next call
sees them. The daemon's stores stay open between requests, so opening one does not do this for them."""

from __future__ import annotations

import logging
import time

from codememory.core.project import store_dir
from codememory.daemon.state import DaemonState
from codememory.service.shared_form import FOLDER

log = logging.getLogger("codememory.daemon")

FULL_EVERY = 300.0


class ShareFollow:
    __name__ = "share-follow"

    def __init__(self) -> None:
        self._last_full: float | None = None

    def __call__(self, state: DaemonState) -> None:
        full = self._last_full is None or time.monotonic() - self._last_full >= FULL_EVERY
        for root in state.stores_on_disk("share"):
            if not (store_dir(root) / FOLDER).is_dir():
                continue
            try:
                with state.stores.use(root) as store:
                    report = store.sync() if full else store.sharing.follow()
                    if report is not None and not full and report.changed:
                        report.embedded = store.embed_ids(report.changed)
                if report is not None and (report.changed or report.deleted or report.skipped):
                    log.info(
                        "followed the memory files of %s: %d added, %d updated, %d deleted, %d skipped",
                        root,
                        len(report.added),
                        len(report.updated),
                        len(report.deleted),
                        len(report.skipped),
                    )
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("following the memory files failed in %s", root)
                state.health.record_error(exc, "share")
        if full:
            self._last_full = time.monotonic()
