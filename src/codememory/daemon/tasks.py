"""The daemon's background work: capture OpenCode turns every poll, extract idle sessions beside it, and turn
the raw events the plugin streams into captured turns (`RawEventFlusher`, live capture).

Capture runs in the worker thread every `[capture] poll_interval` seconds. Incremental passes read only
sessions active since the previous pass; a full pass (every session) runs at start and every
FULL_PASS_EVERY seconds, which also captures a turn left unfinished once its session has gone idle.
Extraction may wait minutes on a model, so it runs in its own thread, one run at a time, and capture
never waits for it. `CODEMEMORY_NO_CAPTURE=1` turns both off (our own `opencode run` calls for
extraction set it, so the daemon they might start never captures its own prompts).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

from codememory.capture.opencode import project_lock
from codememory.capture.raw_events import FlushReport, flush_project
from codememory.core.dates import now_utc
from codememory.core.env_switches import capture_disabled
from codememory.core.paths import state_dir
from codememory.core.project import db_path
from codememory.daemon.state import DaemonState, Task
from codememory.errors import PassFailed, RegistryError, StoreNotFound
from codememory.extract.capture_and_extract import capture_pass, extract_idle, registered_roots
from codememory.store.raw_events import RawEventTables

log = logging.getLogger("codememory.daemon")

FULL_PASS_EVERY = 300.0
# Activity stamps are OpenCode's milliseconds; a second of overlap costs nothing (captured turns are
# skipped) and covers a clock step between passes.
SINCE_OVERLAP = timedelta(seconds=1)


class CaptureLoop:
    """A daemon task (callable with the state) holding what passes share: the projects seen and the
    start of the previous pass."""

    __name__ = "capture"

    def __init__(self, *, extract: bool = True) -> None:
        self.extract = extract
        self.roots: set[str] = set()
        self.since: datetime | None = None
        self._last_full: float | None = None
        self._extractor: threading.Thread | None = None

    def __call__(self, state: DaemonState) -> None:
        if capture_disabled():
            return
        cfg = state.config.capture
        full = self._last_full is None or time.monotonic() - self._last_full >= FULL_PASS_EVERY
        started = now_utc()
        report = capture_pass(opencode_db=cfg.opencode_db, auto_init=cfg.auto_init, since=None if full else self.since)
        if report.db.ok:
            if full:
                self._last_full = time.monotonic()
            self.since = started - SINCE_OVERLAP
            self.roots |= {p.root for p in report.projects if not p.error}
            state.health.set_capture(report.max_lag_seconds if report.turns_captured else 0.0)
        elif report.db.state != "missing":  # no OpenCode at all is normal (a Claude Code user, say)
            state.health.record_error(report.db.error(), "capture")
        if report.turns_captured:
            log.info(
                "captured %d turns in %s (lag %.1f s)",
                report.turns_captured,
                ", ".join(p.root for p in report.projects if p.turns_captured),
                report.max_lag_seconds or 0.0,
            )
        for error in report.errors:
            log.warning("capture: %s", error)
        if report.errors:
            state.health.record_error(PassFailed(report.errors[-1]), "capture")
        if self.extract:  # without OpenCode too: the hooks capture Claude Code and Codex sessions
            self._start_extraction(state)

    def _start_extraction(self, state: DaemonState) -> None:
        if self._extractor is not None and self._extractor.is_alive():
            return
        roots = self.roots | registered_roots()
        if not roots:
            return
        # A daemon thread: stopping the daemon mid-extraction is safe (a span is recorded after its
        # memories, and re-extraction finds them as duplicates).
        self._extractor = threading.Thread(target=self._extract, args=(state, roots), name="extract", daemon=True)
        self._extractor.start()

    def _extract(self, state: DaemonState, roots: set[str]) -> None:
        try:
            results = extract_idle(roots, opencode_db=state.config.capture.opencode_db)
        except Exception as exc:
            log.exception("extraction failed")
            state.health.record_error(exc, "extract")
            return
        for project in results:
            for session in project.sessions:
                if session.created or session.errors:
                    log.info(
                        "extracted %s in %s: %s, %d new memories, %d duplicates",
                        session.session_id,
                        project.root,
                        session.status,
                        session.created,
                        session.duplicates,
                    )
                for error in session.errors:
                    state.health.record_error(PassFailed(error), "extract")
            if project.error:
                log.warning("extraction in %s: %s", project.root, project.error)
                state.health.record_error(PassFailed(project.error), "extract")


RAW_ROOTS_NAME = "raw-event-roots"  # in the state folder: projects that were sent raw events (one per line)


class RawEventFlusher:
    """The flush worker of live capture (raw events the plugin streams to `POST /api/raw-events`): turns a
    project's queued events into captured turns (`capture.raw_events.flush_project`).

    - `kick(state, root)`: right after a batch is accepted, in a background thread (one at a time; roots kicked
      while it runs are taken in turn), so a turn reaches the daily log within moments of its end;
    - called as a daemon task every poll: a sweep over every project that was ever sent raw events (remembered
      in the state folder, so a daemon killed after accepting a batch processes it after its restart) and the
      open stores, as long as it is still in the user's registry.
    Both run under the project's capture lock, like the database poller, so the paths take turns."""

    __name__ = "raw-events"

    def __init__(self) -> None:
        self.roots: set[str] = set()
        self._saved_loaded = False  # the roots file is read at the first sweep; `remember` keeps both up to date
        self._wanted: set[Path] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ roots
    @staticmethod
    def _roots_file() -> Path:
        return state_dir() / RAW_ROOTS_NAME

    def remember(self, root: Path) -> None:
        """Note a project that is sent raw events, on disk before its first batch is acknowledged."""
        key = str(root)
        with self._lock:
            if key in self.roots:
                return
            self.roots.add(key)
        if key in self._saved_roots():
            return
        path = self._roots_file()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (key + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def _saved_roots(self) -> set[str]:
        try:
            text = self._roots_file().read_text(encoding="utf-8")
        except OSError:
            return set()
        return {line.strip() for line in text.splitlines() if line.strip()}

    # ---------------------------------------------------------------- flushing
    def flush(self, state: DaemonState, root: Path) -> FlushReport | None:
        """Process the project's queue now (None when it has no store any more)."""
        try:
            with state.stores.use(root) as store:
                if not RawEventTables(store.db).pending_count():
                    return None
            # The capture lock first, the store second: waiting for the lock (a capture pass holding it) must not
            # hold the pooled store, which /retrieve needs within its few hundred milliseconds.
            with project_lock(root), state.stores.use(root) as store:
                report = flush_project(store, locked=True)
        except (StoreNotFound, FileNotFoundError):
            return None
        if report.turns_captured:
            log.info("live capture: %d turns from raw events in %s", report.turns_captured, root)
            state.health.set_capture(report.max_lag_seconds)
        for error in report.errors:
            log.warning("live capture: %s", error)
            state.health.record_error(PassFailed(error), "raw-events")
        return report

    def kick(self, state: DaemonState, root: Path) -> None:
        """Flush the project's queue soon, in the background."""
        with self._lock:
            self._wanted.add(root)
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._drain, args=(state,), name="raw-events", daemon=True)
            self._thread.start()

    def _drain(self, state: DaemonState) -> None:
        while not state.stop_event.is_set():
            with self._lock:
                if not self._wanted:
                    self._thread = None
                    return
                root = self._wanted.pop()
            try:
                self.flush(state, root)
            except Exception as exc:
                log.exception("live capture failed in %s", root)
                state.health.record_error(exc, "raw-events")

    def __call__(self, state: DaemonState) -> None:
        if capture_disabled():
            return
        if not self._saved_loaded:
            saved = self._saved_roots()
            with self._lock:
                self.roots |= saved
            self._saved_loaded = True
        with self._lock:
            candidates = set(self.roots)
        candidates |= {str(s.root) for s in state.stores.stores()}
        try:
            registered = state.projects.roots()  # a project removed from the registry is no longer touched
        except RegistryError as exc:
            state.health.record_error(exc, "raw-events")
            return
        for key in sorted(candidates):
            root = Path(key)
            if root not in registered or not db_path(root).is_file():
                continue
            try:
                self.flush(state, root)
            except Exception as exc:  # one project's failure must not stop the others
                log.exception("live capture failed in %s", root)
                state.health.record_error(exc, "raw-events")


def default_tasks() -> list[Task]:
    from codememory.daemon.consolidation_task import ConsolidationSchedule
    from codememory.daemon.embedding_backfill import EmbeddingBackfill
    from codememory.daemon.entity_backfill import EntityBackfill
    from codememory.daemon.publish_task import PublishTask
    from codememory.daemon.share_follow import ShareFollow
    from codememory.daemon.stale_check import StaleCheck
    from codememory.daemon.vector_upkeep import VectorUpkeep
    from codememory.daemon.warm_up import WarmUp

    return [
        WarmUp(),
        ShareFollow(),
        RawEventFlusher(),
        CaptureLoop(),
        EntityBackfill(),
        EmbeddingBackfill(),
        VectorUpkeep(),
        StaleCheck(),
        ConsolidationSchedule(),
        PublishTask(),
    ]
