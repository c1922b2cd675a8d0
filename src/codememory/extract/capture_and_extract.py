"""One capture-and-extraction pass: what `codememory capture` runs once and the daemon runs every poll.

1. Capture: every completed OpenCode turn not yet captured goes to its project's daily log and
   `captured_turns` (codememory.capture.opencode).
2. Extraction: in every project the pass knows (those it captured, and the registered ones, whose
   Claude Code and Codex sessions the hooks captured), each session with captured turns not yet
   extracted is extracted once it has been idle for `[capture] idle_after` seconds and has at least
   `[capture] min_messages` messages (codememory.extract). The project's own config decides the
   thresholds and the LLM provider; `idle_after` may be overridden for the whole pass.

A session whose extraction failed (the model could not be reached) is retried after RETRY_AFTER
seconds, not on every poll. Extraction of one project runs under a non-blocking lock on
`.codememory/extract.lock`: a second process passing at the same time skips that project instead of
asking the model twice (the daemon and a `codememory capture` from cron, say).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from codememory.assistants import REGISTRY
from codememory.capture.hook_transcripts import read_session, read_todos, transcript_project
from codememory.capture.jsonl_reader import ReadState
from codememory.capture.opencode import CaptureReport, capture_opencode, open_initialised_store
from codememory.capture.opencode_db import DbStatus, OpenCodeDB
from codememory.capture.opencode_turns import SOURCE as OPENCODE
from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.core import safe_files
from codememory.core.config import Config
from codememory.core.dates import from_iso, now_utc, to_iso
from codememory.core.project import store_dir
from codememory.core.result import Result
from codememory.errors import CodememoryError, RegistryError, StoreUnusable, TranscriptError
from codememory.extract.extractor import Extractor
from codememory.extract.llm import Provider, provider_from_config
from codememory.extract.report import ExtractionReport
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables, Cursor
from codememory.store.extraction import ExtractionTables

log = logging.getLogger("codememory.extract.capture_and_extract")

EXTRACT_LOCK = "extract.lock"
# captured by the hooks from the assistants' transcript files (their specs name the readers)
TRANSCRIPT_SOURCES = tuple(reader for a in REGISTRY if (reader := a.transcript_reader))
RETRY_AFTER = 300.0  # seconds before a failed extraction of a session is tried again

ProviderFor = Callable[[Config], Provider | None]


@dataclass
class ProjectExtraction(Result):
    """What the pass extracted in one project (`capture --json`'s extraction)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"created": int}

    root: str
    sessions: list[ExtractionReport] = field(default_factory=list)  # one per session extracted
    waiting: int = 0  # sessions with new turns that are not idle long enough yet (or too short)
    skipped: str | None = None  # why the project was not extracted this pass
    error: str | None = None

    @property
    def created(self) -> int:
        return sum(s.created for s in self.sessions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "sessions": [s.to_dict() for s in self.sessions],
            "created": self.created,
            "waiting": self.waiting,
            "skipped": self.skipped,
            "error": self.error,
        }


@dataclass
class PassReport(Result):
    """One capture-and-extraction pass: `codememory capture --json`."""

    COMPUTED: ClassVar[dict[str, Any]] = {"turns_captured": int, "memories_created": int, "errors": list[str]}

    capture: CaptureReport
    extraction: list[ProjectExtraction] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def turns_captured(self) -> int:
        return self.capture.turns_captured

    @property
    def memories_created(self) -> int:
        return sum(p.created for p in self.extraction)

    @property
    def errors(self) -> list[str]:
        out = list(self.capture.errors)
        out += [f"{p.root}: {p.error}" for p in self.extraction if p.error]
        out += [f"{p.root}: {s.session_id}: {e}" for p in self.extraction for s in p.sessions for e in s.errors]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "capture": self.capture.to_dict(),
            "extraction": [p.to_dict() for p in self.extraction],
            "turns_captured": self.turns_captured,
            "memories_created": self.memories_created,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
        }


def _provider(config: Config) -> Provider | None:
    return provider_from_config(config.llm)


@contextmanager
def try_lock(root: Path, name: str) -> Iterator[bool]:
    """A non-blocking exclusive lock on `.codememory/<name>`: yields False when another process holds it."""
    path = store_dir(root) / name
    try:
        fd = safe_files.open_fd(path, os.O_RDWR | os.O_CREAT, 0o644)  # a committed link is refused
    except OSError as exc:
        raise StoreUnusable(f"cannot open the lock file {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def registered_roots() -> set[str]:
    """Every project `codememory init` registered: Claude Code and Codex sessions are captured by their
    hooks, so these projects may have sessions to extract even when OpenCode has none."""
    from codememory.core.registry import load

    try:
        return {str(p["root"]) for p in load()}
    except RegistryError as exc:
        log.warning("%s", exc)
        return set()


def missing_db_status(configured: str) -> DbStatus:
    where = f"[capture] opencode_db = {configured!r}" if configured else "OPENCODE_DB or OpenCode's data folders"
    return DbStatus("missing", configured or None, f"no OpenCode database found (looked at {where})")


def run_pass(
    *,
    opencode_db: str = "",
    auto_init: bool = False,
    idle_after: float | None = None,
    extract: bool = True,
    since: str | datetime | None = None,
    roots: set[str] | None = None,
    registered: bool = False,
    provider_for: ProviderFor = _provider,
    now: Callable[[], datetime] = now_utc,
) -> PassReport:
    """Capture, then extract idle sessions (see the module docstring). `roots`: project roots to consider
    for extraction besides those this pass captured; `registered`: and every registered project. Never
    raises for a missing or broken OpenCode database or project: the report says what happened."""
    started = time.monotonic()
    report = PassReport(capture_pass(opencode_db=opencode_db, auto_init=auto_init, since=since, now=now))
    if extract:  # also without OpenCode: Claude Code and Codex sessions are captured by the hooks
        known = {p.root for p in report.capture.projects if not p.error} | set(roots or ())
        if registered:
            known |= registered_roots()
        report.extraction = extract_idle(
            known, opencode_db=opencode_db, idle_after=idle_after, provider_for=provider_for, now=now
        )
    report.seconds = time.monotonic() - started
    return report


def capture_pass(
    *,
    opencode_db: str = "",
    auto_init: bool = False,
    since: str | datetime | None = None,
    now: Callable[[], datetime] = now_utc,
) -> CaptureReport:
    """One capture pass over the OpenCode database found (a report with db.state "missing" if none)."""
    reader = OpenCodeDB.discover(configured=opencode_db)
    if reader is None:
        stamp = to_iso(now())
        return CaptureReport(db=missing_db_status(opencode_db), started_at=stamp, finished_at=stamp)
    with reader:
        return capture_opencode(reader, auto_init=auto_init, since=since, now=now)


def extract_idle(
    roots: set[str],
    *,
    opencode_db: str = "",
    idle_after: float | None = None,
    provider_for: ProviderFor = _provider,
    now: Callable[[], datetime] = now_utc,
    only: Collection[tuple[str, str]] | None = None,
) -> list[ProjectExtraction]:
    """Extract the idle sessions of these projects (each project's config decides thresholds and model); `only`:
    just these (source, session id) pairs (a history import extracts what it captured, not a live session)."""
    reader = OpenCodeDB.discover(configured=opencode_db)
    wanted = None if only is None else frozenset(only)
    try:
        return [_extract_project(reader, Path(root), idle_after, provider_for, now, wanted) for root in sorted(roots)]
    finally:
        if reader is not None:
            reader.close()


def _extract_project(
    reader: OpenCodeDB | None,
    root: Path,
    idle_after: float | None,
    provider_for: ProviderFor,
    now: Callable[[], datetime],
    only: frozenset[tuple[str, str]] | None = None,
) -> ProjectExtraction:
    result = ProjectExtraction(str(root))
    try:
        store = open_initialised_store(root)
    except CodememoryError as exc:  # a malformed .codememory/config.toml, say: the message says what to fix
        result.error = f"cannot open the store: {exc}"
        return result
    except Exception as exc:
        result.error = f"cannot open the store: {type(exc).__name__}: {exc}"
        return result
    if store is None:
        result.skipped = "no codememory store"
        return result
    with store:
        try:
            with try_lock(store.root, EXTRACT_LOCK) as locked:
                if not locked:
                    result.skipped = "another process is extracting this project"
                    return result
                _extract_sessions(reader, store, result, idle_after, provider_for, now, only)
        except CodememoryError as exc:  # OpenCode's database, the store, the model
            result.error = str(exc)
        except Exception as exc:  # one project's failure must not stop the others
            log.exception("extraction in %s failed", root)
            result.error = f"{type(exc).__name__}: {exc}"
    return result


@dataclass
class _Candidate:
    """A session with turns to extract: enough to decide whether it is idle, and how to read it."""

    session_id: str
    updated_at: str
    message_count: int
    load: Callable[[], tuple[SessionInfo, list[Turn], list[Todo]] | None]


def _opencode_candidate(reader: OpenCodeDB | None, session_id: str) -> _Candidate | None:
    if reader is None:
        return None
    info = reader.session(session_id)
    if info is None:
        return None  # OpenCode deleted the session: its captured turns stay in the daily log

    def load() -> tuple[SessionInfo, list[Turn], list[Todo]]:
        return info, reader.turns(session_id), reader.todos(session_id)

    return _Candidate(session_id, info.updated_at, info.message_count, load)


def _transcript_cursors(store: Store, source: str) -> dict[str, tuple[Cursor, ReadState]]:
    """session id -> (capture cursor of its transcript file, its read state), from the cursors the hooks keep."""
    out: dict[str, tuple[Cursor, ReadState]] = {}
    for cursor in CaptureTables(store.db).cursors(source):
        state = ReadState.from_json(cursor.position)
        if state.session_id:
            out[state.session_id] = (cursor, state)
    return out


def _transcript_candidate(store: Store, source: str, session_id: str, cursor: Cursor, state: ReadState) -> _Candidate:
    """The cursor tells idleness and size without reading the file; the file is read only to extract."""
    path = cursor.key
    updated = state.updated_at or cursor.updated_at

    def load() -> tuple[SessionInfo, list[Turn], list[Todo]] | None:
        # The path comes from the store (which a clone may bring): read only a transcript of this project.
        try:
            ran_in = transcript_project(path)
        except TranscriptError:
            ran_in = None
        if ran_in is None or Path(ran_in).resolve() != store.root.resolve():
            log.info("not extracting %s session %s: its transcript %s is another project's", source, session_id, path)
            return None
        try:
            info, turns = read_session(path, source=source, root=str(store.root))
            todos = read_todos(path, source=source)
        except TranscriptError as exc:
            log.info("cannot extract %s session %s: %s", source, session_id, exc)
            return None
        return info, turns, todos

    return _Candidate(session_id, updated, state.messages, load)


def _extract_sessions(
    reader: OpenCodeDB | None,
    store: Store,
    result: ProjectExtraction,
    idle_after: float | None,
    provider_for: ProviderFor,
    now: Callable[[], datetime],
    only: frozenset[tuple[str, str]] | None = None,
) -> None:
    cfg = store.config.capture
    threshold = cfg.idle_after if idle_after is None else idle_after
    tables = ExtractionTables(store.db)
    extractor: Extractor | None = None
    for source in (OPENCODE, *TRANSCRIPT_SOURCES):
        cursors = _transcript_cursors(store, source) if source != OPENCODE else {}
        for pending in tables.pending_sessions(source):
            if only is not None and (source, pending.session_id) not in only:
                continue
            if _failed_recently(pending.last_status, pending.last_finished_at, now()):
                result.waiting += 1
                continue
            if source == OPENCODE:
                candidate = _opencode_candidate(reader, pending.session_id)
            elif pending.session_id in cursors:
                candidate = _transcript_candidate(store, source, pending.session_id, *cursors[pending.session_id])
            else:
                candidate = None
            if candidate is None:
                continue
            idle = (now() - from_iso(candidate.updated_at)).total_seconds() if candidate.updated_at else 0.0
            if idle < threshold or candidate.message_count < cfg.min_messages:
                result.waiting += 1
                continue
            if extractor is None:
                # A misconfigured provider stops the project's extraction rather than falling back to the
                # heuristic: the sessions wait (nothing is lost) until the user fixes the setting.
                extractor = Extractor(store, provider_for(store.config))
            loaded = candidate.load()
            if loaded is None:
                continue
            info, turns, todos = loaded
            extraction = extractor.extract_session(info, turns, todos=todos)
            result.sessions.append(extraction)


def _failed_recently(status: str | None, finished_at: str | None, now: datetime) -> bool:
    return (
        status == "failed" and bool(finished_at) and (now - from_iso(finished_at or "")).total_seconds() < RETRY_AFTER
    )
