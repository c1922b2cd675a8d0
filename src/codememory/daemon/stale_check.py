"""The daemon's scheduled staleness check (`codememory stale`, codememory.operations.stale): each registered
project in a git repository is checked every `[staleness] check_interval` seconds (its own setting: 0 turns it
off). The time of a project's last check is read from its recorded runs, so a restarted daemon does not check
everything again at once; a project whose check fails (no git, no commit yet) waits a full interval too."""

from __future__ import annotations

import logging
import time

from codememory.core.dates import from_iso
from codememory.daemon.state import DaemonState
from codememory.errors import GitError

log = logging.getLogger("codememory.daemon")


class StaleCheck:
    __name__ = "stale-check"

    def __init__(self) -> None:
        self.next_at: dict[str, float] = {}  # root -> time.time() of its next check

    def __call__(self, state: DaemonState) -> None:
        for root in state.stores_on_disk("stale-check"):
            if state.stop_event.is_set():
                return
            key = str(root)
            if time.time() < self.next_at.get(key, 0.0):
                continue
            try:
                with state.stores.use(root) as store:
                    interval = store.config.staleness.check_interval
                    if interval <= 0:
                        self.next_at[key] = time.time() + 3600.0  # off: look at the setting again in an hour
                        continue
                    last = _epoch(store.db.last_staleness_check())
                    if last is not None and time.time() < last + interval and key not in self.next_at:
                        self.next_at[key] = last + interval
                        continue
                    self.next_at[key] = time.time() + interval
                    from codememory.operations.stale import check_stale

                    report = check_stale(store)
                    if report.marked or report.cleared:
                        log.info(
                            "staleness in %s: %d stale, %d new marks, %d cleared",
                            root,
                            report.stale,
                            report.marked,
                            len(report.cleared),
                        )
            except GitError as exc:  # not a git repository (yet): nothing to check against
                log.debug("staleness check skipped in %s: %s", root, exc)
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("staleness check failed in %s", root)
                state.health.record_error(exc, "stale-check")


def _epoch(stamp: str | None) -> float | None:
    try:
        return from_iso(stamp).timestamp() if stamp else None
    except ValueError:
        return None
