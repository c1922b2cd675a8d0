"""One capture pass over OpenCode's database: every completed turn not yet captured goes to its project's
daily log and into the project's store.

For each session with new activity, for each completed turn not yet recorded, in session order:
1. append the turn's entry to `.codememory/memory/YYYY-MM-DD.md` (skipped when its anchor is already
   there: a crash between steps 1 and 2 left it);
2. record the turn in `captured_turns` and move the session's cursor, in one transaction.

So a crash at any point neither duplicates an entry nor skips a turn. Within a session turns are taken
in order and the pass stops at the first one still running: later turns wait for it, so the captured
turns are always a prefix of the session. A turn left unfinished (OpenCode was killed mid-answer) is
captured anyway once the session has been idle for `[capture] idle_after` seconds, marked as stopped.

Routing: a session belongs to its project's worktree (`project.worktree`, never the session's
directory); sub-agent sessions share their parent's project and are captured like any other. Only
projects with a codememory store are captured (`codememory init`), unless `auto_init`. Each project's
pass runs under an exclusive lock on `.codememory/capture.lock`, so two processes passing at once
take turns instead of both appending.

The session cursor (`capture_cursors`, source "opencode", key the session id) holds JSON
`{"turn", "seq", "activity"}`: the last captured turn, and the session's last activity when everything
up to it was captured (a session whose activity has not moved since is not read again).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from codememory.capture.daily_log import MEMORY_DIR, Appended, DailyLog
from codememory.capture.opencode_db import DbStatus, OpenCodeDB
from codememory.capture.opencode_turns import SOURCE
from codememory.capture.turns import SessionInfo, Turn
from codememory.core import safe_files
from codememory.core.dates import from_iso, now_utc, to_iso
from codememory.core.lenient_json import json_object
from codememory.core.project import db_path, store_dir
from codememory.core.result import Result
from codememory.errors import OpenCodeDBError
from codememory.service.project_store import Store
from codememory.store.capture import CapturedTurn, CaptureTables

LOCK_NAME = "capture.lock"
log = logging.getLogger(__name__)
UNFINISHED = "unfinished: the session went idle before the assistant finished"

OpenStore = Callable[[Path], Store | None]


def open_initialised_store(root: Path) -> Store | None:
    """The project's store when it has one (`codememory init` ran), else None."""
    if not db_path(root).is_file():
        return None
    return Store.open(root)


@contextmanager
def project_lock(root: Path) -> Iterator[None]:
    """Exclusive lock on `.codememory/capture.lock` (blocks until the other holder is done)."""
    path = store_dir(root) / LOCK_NAME
    fd = safe_files.open_fd(path, os.O_RDWR | os.O_CREAT, 0o644)  # a committed link is refused
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass(kw_only=True)
class TurnCounts:
    """What a capture wrote (OpenCode passes and transcript captures alike)."""

    turns_captured: int = 0  # turns recorded by this capture
    turns_repaired: int = 0  # of those, turns whose log entry an earlier, interrupted capture had written
    turns_pending: int = 0  # turns still running (captured later)
    log_files: list[str] = field(default_factory=list)  # daily logs written, relative to the project root

    def count(self, log: DailyLog, written: Appended) -> None:
        self.turns_captured += 1
        if not written.appended:
            self.turns_repaired += 1
        log_file = written.path.relative_to(log.folder.parent.parent).as_posix()
        if log_file not in self.log_files:
            self.log_files.append(log_file)


def write_turn(
    tables: CaptureTables,
    log: DailyLog,
    info: SessionInfo,
    turn: Turn,
    captured_at: str,
    *,
    source: str | None = None,
    cursor: str | None = None,
) -> Appended | None:
    """Write one completed turn: its daily-log entry (skipped when the anchor is there), then its
    `captured_turns` row under `source` (default: the turn's) and, with `cursor`, the session cursor, in
    one transaction. None when the turn was recorded already."""
    written = log.append(turn, info)
    row = CapturedTurn(
        source=source or turn.source,
        session_id=turn.session_id,
        turn_id=turn.turn_id,
        seq=turn.seq,
        started_at=turn.started_at,
        ended_at=turn.ended_at,
        log_path=written.path.relative_to(log.folder.parent).as_posix(),
        summary=written.summary,
        captured_at=captured_at,
    )
    if not tables.record_turn(row, cursor=cursor):
        return None
    _observe(tables, turn)
    return written


def _observe(tables: CaptureTables, turn: Turn) -> None:
    """What the newly recorded turn did with the memories its session was shown (capture/usage.py). A failure is
    logged and never costs the capture: at worst a use goes unnoticed."""
    from codememory.capture.usage import observe_turn

    try:
        observe_turn(tables.db, turn)
    except Exception:
        log.warning("use signals for turn %s of session %s failed", turn.turn_id, turn.session_id, exc_info=True)


@dataclass
class ProjectReport(TurnCounts, Result):
    """What a capture pass did in one project (`capture --json`'s capture.projects)."""

    root: str
    sessions_seen: int = 0  # sessions of this project in OpenCode's database
    sessions_read: int = 0  # sessions with new activity whose turns were read
    initialised: bool = False  # the store was created by this pass (auto_init)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "sessions_seen": self.sessions_seen,
            "sessions_read": self.sessions_read,
            "turns_captured": self.turns_captured,
            "turns_repaired": self.turns_repaired,
            "turns_pending": self.turns_pending,
            "log_files": sorted(self.log_files),
            "initialised": self.initialised,
            "error": self.error,
        }


@dataclass
class CaptureReport(Result):
    """One capture pass over OpenCode's database (`capture --json`'s capture)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"turns_captured": int}

    db: DbStatus
    started_at: str
    finished_at: str = ""
    projects: list[ProjectReport] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # project root -> why it was not captured
    errors: list[str] = field(default_factory=list)
    newest_turn_at: str | None = None  # the latest end of a turn captured in this pass
    max_lag_seconds: float | None = None  # the longest wait from a turn's end to its capture, this pass

    @property
    def turns_captured(self) -> int:
        return sum(p.turns_captured for p in self.projects)

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db.to_dict(),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "turns_captured": self.turns_captured,
            "projects": [p.to_dict() for p in self.projects],
            "skipped": dict(sorted(self.skipped.items())),
            "errors": list(self.errors),
            "newest_turn_at": self.newest_turn_at,
            "max_lag_seconds": self.max_lag_seconds,
        }


def _capturable(root: str) -> str | None:
    """Why a worktree cannot have a store (None when it can)."""
    if not root:
        return "the session has no project"
    if root == "/" or not os.path.isabs(root):
        return "not a project folder (OpenCode's global project: no git repository)"
    if not os.path.isdir(root):
        return "the project folder no longer exists"
    return None


def capture_opencode(
    reader: OpenCodeDB,
    open_store: OpenStore = open_initialised_store,
    *,
    auto_init: bool = False,
    since: str | datetime | None = None,
    now: Callable[[], datetime] = now_utc,
    only: Collection[str] | None = None,
) -> CaptureReport:
    """One capture pass (see the module docstring). `open_store(root)` gives the project's store or None
    (the pass closes it); `since` limits the pass to sessions with activity since then (a poller passes
    the start of its previous pass; None, the default, looks at every session, as after a restart); `only`: just
    these session ids (a history import, one session at a time).
    Never raises for a bad database or project: the report says what happened (`db.state` other than
    "ok", per-project `error`, `errors`)."""
    report = CaptureReport(db=reader.status(), started_at=to_iso(now()))
    if report.db.ok:
        try:
            sessions = reader.sessions(since)
        except OpenCodeDBError as exc:
            report.db = DbStatus.of(exc)
            sessions = []
        by_root: dict[str, list[SessionInfo]] = {}
        for info in sessions if only is None else [i for i in sessions if i.session_id in only]:
            by_root.setdefault(info.project_root, []).append(info)
        for root, infos in sorted(by_root.items()):
            reason = _capturable(root)
            if reason:
                report.skipped[root or "(none)"] = reason
                continue
            _capture_project(reader, Path(root), infos, open_store, auto_init, now, report)
    report.finished_at = to_iso(now())
    return report


def _capture_project(
    reader: OpenCodeDB,
    root: Path,
    infos: list[SessionInfo],
    open_store: OpenStore,
    auto_init: bool,
    now: Callable[[], datetime],
    report: CaptureReport,
) -> None:
    project = ProjectReport(str(root), sessions_seen=len(infos))
    try:
        store = open_store(root)
        if store is None:
            if not auto_init:
                report.skipped[str(root)] = "no codememory store (run `codememory init` there, or enable auto_init)"
                return
            store, project.initialised = Store.init(root)
    except Exception as exc:
        project.error = f"cannot open the store: {type(exc).__name__}: {exc}"
        report.projects.append(project)
        report.errors.append(f"{root}: {project.error}")
        return
    report.projects.append(project)
    try:
        with store, project_lock(store.root):
            tables = CaptureTables(store.db)
            log = DailyLog(store_dir(store.root) / MEMORY_DIR, root=root)
            idle_after = store.config.capture.idle_after
            for info in infos:
                _capture_session(reader, tables, log, info, idle_after, now, project, report)
    except OpenCodeDBError as exc:
        project.error = str(exc)
        report.errors.append(f"{root}: {exc}")
    except Exception as exc:  # one project's failure must not stop the others
        project.error = f"{type(exc).__name__}: {exc}"
        report.errors.append(f"{root}: {project.error}")


def _capture_session(
    reader: OpenCodeDB,
    tables: CaptureTables,
    log: DailyLog,
    info: SessionInfo,
    idle_after: float,
    now: Callable[[], datetime],
    project: ProjectReport,
    report: CaptureReport,
) -> None:
    cursor = tables.get_cursor(SOURCE, info.session_id)
    position = json_object(cursor.position if cursor else None)
    if position.get("activity") == info.updated_at:
        return  # everything up to the session's last activity is captured
    project.sessions_read += 1
    done = tables.captured_turn_ids(SOURCE, info.session_id)
    turns = reader.turns(info.session_id, exclude=done)
    idle = (now() - from_iso(info.updated_at)).total_seconds() >= idle_after if info.updated_at else False
    caught_up = True
    for index, turn in enumerate(turns):
        if not turn.completed:
            if not idle:
                project.turns_pending += len(turns) - index
                caught_up = False
                break
            turn = replace(turn, completed=True, error=turn.error or UNFINISHED)
        capture_turn(tables, log, info, turn, now, project, report)
        position = {"turn": turn.turn_id, "seq": turn.seq, "activity": None}
    if caught_up:
        position["activity"] = info.updated_at
        tables.set_cursor(SOURCE, info.session_id, json.dumps(position, sort_keys=True), to_iso(now()))


def capture_turn(
    tables: CaptureTables,
    log: DailyLog,
    info: SessionInfo,
    turn: Turn,
    now: Callable[[], datetime],
    project: ProjectReport,
    report: CaptureReport,
) -> None:
    """Write one completed turn: its daily-log entry (skipped when the anchor is there), then its
    `captured_turns` row and the session cursor in one transaction. Shared by the database poller and
    the raw-event flusher, so a turn either path reaches is captured once."""
    captured = now()
    position = json.dumps({"activity": None, "seq": turn.seq, "turn": turn.turn_id}, sort_keys=True)
    written = write_turn(tables, log, info, turn, to_iso(captured), source=SOURCE, cursor=position)
    if written is None:
        return  # another pass recorded it (it cannot: the lock; kept for safety)
    project.count(log, written)
    ended = turn.ended_at or turn.started_at
    if report.newest_turn_at is None or ended > report.newest_turn_at:
        report.newest_turn_at = ended
    lag = max(0.0, (captured - from_iso(ended)).total_seconds())
    report.max_lag_seconds = lag if report.max_lag_seconds is None else max(report.max_lag_seconds, lag)
