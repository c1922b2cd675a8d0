"""Publishing to the organisation's Milvus in the background: every `[remote] publish_interval` seconds (0, the
default: never; `codememory publish` by hand), each project with a remote gets one incremental publish
(codememory.operations.publish: only changes and tombstones, resumable). A remote that is down is logged and
retried at the next interval; it never stops the daemon's other work."""

from __future__ import annotations

import logging
import time

from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")


class PublishTask:
    __name__ = "publish"

    def __init__(self) -> None:
        self.last: dict[str, float] = {}  # project root -> monotonic time of its last attempt

    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("publish"):
            try:
                with state.stores.use(root) as store:
                    remote = store.config.remote
                    interval = remote.publish_interval
                    if not remote.uri.strip() or interval <= 0:
                        continue
                    last = self.last.get(str(root))
                    if last is not None and time.monotonic() - last < interval:
                        continue
                    self.last[str(root)] = time.monotonic()
                    from codememory.operations.publish import publish

                    done = publish(store)
                    if done.sent or done.deleted:
                        log.info("published %s: %d sent, %d deleted", done.project, done.sent, done.deleted)
            except Exception as exc:  # one project's (or the remote's) failure must not stop the others
                log.warning("publish failed in %s: %s", root, exc)
                state.health.record_error(exc, "publish")
