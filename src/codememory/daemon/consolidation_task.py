"""Consolidation on a schedule: every registered project whose last recorded run (or, before the first, the store's
creation) is older than its `[consolidation] interval` (default daily; 0: never) gets a run
(`codememory.operations.consolidate`, recorded with trigger "schedule", undoable like any other). A run may wait on
a model for minutes, so it happens in a thread of its own with a store of its own, one at a time, and capture never
waits for it; when a project is due is remembered between polls, so a poll opens no store that is not due."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from codememory.core.dates import from_iso, now_utc
from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")


class ConsolidationSchedule:
    __name__ = "consolidation"

    def __init__(self) -> None:
        self._due: dict[str, float] = {}  # root -> time.monotonic() when it is worth looking again
        self._thread: threading.Thread | None = None

    def __call__(self, state: DaemonState) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        now = time.monotonic()
        due = [r for r in state.stores_on_disk("consolidation") if self._due.get(str(r), 0.0) <= now]
        if due:
            self._thread = threading.Thread(target=self._run, args=(state, due), name="consolidation", daemon=True)
            self._thread.start()

    def _run(self, state: DaemonState, roots: list[Path]) -> None:
        from codememory.operations.consolidate import consolidate
        from codememory.service.project_store import Store
        from codememory.store.consolidation_runs import ConsolidationTables

        for root in roots:
            if state.stop_event.is_set():
                return
            try:
                # A store of its own, not the pooled one: /retrieve must not wait for a run that waits on a model.
                with Store.open(root) as store:
                    interval = store.config.consolidation.interval
                    if interval <= 0:
                        self._due[str(root)] = time.monotonic() + 3600  # the setting may change: look again later
                        continue
                    last = ConsolidationTables(store.db).schedule_reference()
                    waited = (now_utc() - from_iso(last)).total_seconds() if last else None
                    if waited is not None and waited < interval:
                        self._due[str(root)] = time.monotonic() + interval - waited
                        continue
                    report = consolidate(store, trigger="schedule")
                    self._due[str(root)] = time.monotonic() + interval
                changed = {k: v for k, v in report.counts.items() if v}
                log.info("consolidation run %s in %s: %s", report.run, root, changed or "no change")
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("consolidation failed in %s", root)
                state.health.record_error(exc, "consolidation")
                self._due[str(root)] = time.monotonic() + 3600
