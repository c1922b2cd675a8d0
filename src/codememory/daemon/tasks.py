"""The daemon's background work: capture OpenCode turns every poll, extract idle sessions beside it.

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

from ..capture.opencode_db import OpenCodeDBError
from ..dates import now_utc
from ..ingest import capture_pass, extract_idle, registered_roots
from .state import DaemonState, Task

log = logging.getLogger("codememory.daemon")

FULL_PASS_EVERY = 300.0
# Activity stamps are OpenCode's milliseconds; a second of overlap costs nothing (captured turns are
# skipped) and covers a clock step between passes.
SINCE_OVERLAP = timedelta(seconds=1)


class PassFailed(Exception):
    """A capture or extraction pass reported an error (for /health's last_error)."""


def capture_disabled() -> bool:
    return os.environ.get("CODEMEMORY_NO_CAPTURE", "").strip().lower() not in ("", "0", "false", "no")


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
            state.health.record_error(OpenCodeDBError(report.db), "capture")
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
                if session["created"] or session["errors"]:
                    log.info(
                        "extracted %s in %s: %s, %d new memories, %d duplicates",
                        session["session_id"],
                        project.root,
                        session["status"],
                        session["created"],
                        session["duplicates"],
                    )
                for error in session["errors"]:
                    state.health.record_error(PassFailed(error), "extract")
            if project.error:
                log.warning("extraction in %s: %s", project.root, project.error)
                state.health.record_error(PassFailed(project.error), "extract")

    def wait_for_extraction(self, timeout: float | None = None) -> None:
        """For an orderly stop or a test: let a running extraction finish."""
        if self._extractor is not None:
            self._extractor.join(timeout)


def default_tasks() -> list[Task]:
    return [CaptureLoop()]
