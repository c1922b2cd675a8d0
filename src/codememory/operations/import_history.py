"""`codememory import-history`: the project's past sessions of every coding assistant found on this machine, brought
in as if each had just ended.

Where to look comes from the assistants' specs (codememory.assistants: each names its transcript folder, pattern and
reader; OpenCode's sessions are in its database). A transcript belongs to the project when the working folder it
records is inside it, exactly as the hooks decide. Each session then goes down the path a live one takes: its turns
are captured (capture.hook_transcripts.capture_transcript with `final`, or the OpenCode capture pass), which writes the
scrubbed daily log and `captured_turns`, and it is extracted at once (extract.capture_and_extract.extract_idle with no
idle wait, limited to that session). Capture keeps a cursor per file and extraction a span per session, so a second
import finds everything done and adds nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from codememory.assistants import REGISTRY
from codememory.capture.hook_transcripts import capture_transcript, read_session, transcript_project
from codememory.capture.jsonl_reader import ReadState
from codememory.capture.opencode import capture_opencode
from codememory.capture.opencode_db import OpenCodeDB
from codememory.capture.opencode_turns import SOURCE as OPENCODE
from codememory.core.dates import from_iso, to_iso
from codememory.core.result import Result
from codememory.errors import CodememoryError, TranscriptError
from codememory.extract.capture_and_extract import extract_idle
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables

Progress = Callable[[int, int], None]  # (sessions done, sessions to do)

NEW, PARTLY, IMPORTED = "new", "partly imported", "imported"


@dataclass
class PastSession(Result):
    """One past session found for the project (`import-history --json`'s sessions)."""

    assistant: str  # the registry key: claude, codex, gemini, copilot, opencode
    source: str  # what its captured turns are recorded as
    session_id: str
    path: str  # its transcript file, or the OpenCode database
    updated_at: str  # its last activity
    turns: int  # finished turns in it
    status: str  # new | partly imported | imported (before this run)
    turns_captured: int = 0  # by this run
    memories_created: int = 0  # by this run
    error: str | None = None


@dataclass
class HistoryImport(Result):
    """What `codememory import-history` found and did."""

    project: str
    dry_run: bool
    found: int = 0  # sessions of this project found on the machine (within --since and --limit)
    to_import: int = 0  # of those, sessions with turns not imported yet
    turns_captured: int = 0
    memories_created: int = 0
    seconds: float = 0.0
    by_assistant: dict[str, int] = field(default_factory=dict)  # sessions found per assistant
    sessions: list[PastSession] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # places that could not be read


# ------------------------------------------------------------------------------------------ finding
def _same(a: str | None, b: Path) -> bool:
    return bool(a) and Path(str(a)).resolve() == b


def _transcript_status(tables: CaptureTables, source: str, path: Path) -> str:
    cursor = tables.get_cursor(source, str(path.resolve()))
    if cursor is None:
        return NEW
    offset = ReadState.from_json(cursor.position).offset
    return IMPORTED if offset >= path.stat().st_size else PARTLY


def _transcripts(store: Store, since: datetime | None, errors: list[str]) -> list[PastSession]:
    root = store.root.resolve()
    tables = CaptureTables(store.db)
    found: list[PastSession] = []
    for spec in REGISTRY:
        where, reader = spec.transcripts, spec.transcript_reader
        if where is None or reader is None:
            continue
        for path in where.files(store.root):
            try:
                modified = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
                if since is not None and modified < since:
                    continue
                if not _same(transcript_project(path), root):
                    continue
                info, turns = read_session(path, source=reader, root=str(root))
                status = _transcript_status(tables, reader, path)
            except (OSError, TranscriptError) as exc:
                errors.append(f"{path}: {exc}")
                continue
            finished = sum(1 for t in turns if t.completed)
            if not finished or not info.session_id:
                continue  # a file with no finished turn (Gemini CLI leaves one with only a session's setup)
            found.append(PastSession(spec.key, reader, info.session_id, str(path), to_iso(modified), finished, status))
    return found


def _opencode(store: Store, since: datetime | None, opencode_db: str, errors: list[str]) -> list[PastSession]:
    reader = OpenCodeDB.discover(configured=opencode_db)
    if reader is None:
        return []
    root = store.root.resolve()
    tables = CaptureTables(store.db)
    found: list[PastSession] = []
    with reader:
        status = reader.status()
        if status.state == "missing":
            return []  # OpenCode is not used on this machine
        if not status.ok:
            errors.append(f"OpenCode database {status.path}: {status.reason}")
            return []
        try:
            infos = [i for i in reader.sessions(since) if _same(i.project_root, root)]
            for info in infos:
                turns = [t for t in reader.turns(info.session_id) if t.completed]
                if not turns:
                    continue
                done = tables.captured_turn_ids(OPENCODE, info.session_id)
                state = IMPORTED if len(done) >= len(turns) else PARTLY if done else NEW
                path = str(reader.path)
                found.append(
                    PastSession("opencode", OPENCODE, info.session_id, path, info.updated_at, len(turns), state)
                )
        except CodememoryError as exc:
            errors.append(f"OpenCode database: {exc}")
    return found


def find_history(
    store: Store, *, since: datetime | None = None, limit: int | None = None, opencode_db: str = ""
) -> tuple[list[PastSession], list[str]]:
    """This project's past sessions on this machine, newest first (the `limit` newest with activity since `since`),
    and what could not be read."""
    errors: list[str] = []
    opencode_db = opencode_db or store.config.capture.opencode_db
    found = _transcripts(store, since, errors) + _opencode(store, since, opencode_db, errors)
    found.sort(key=lambda s: from_iso(s.updated_at), reverse=True)
    return (found if limit is None else found[:limit]), errors


# ------------------------------------------------------------------------------------------ importing
def _import_one(store: Store, session: PastSession, opencode_db: str) -> None:
    if session.source == OPENCODE:
        reader = OpenCodeDB.discover(configured=opencode_db)
        if reader is None:
            session.error = "the OpenCode database is gone"
            return
        with reader:
            report = capture_opencode(
                reader,
                lambda r: Store.open(r) if r.resolve() == store.root.resolve() else None,
                only={session.session_id},
            )
        session.turns_captured = report.turns_captured
        errors = report.errors
    else:
        captured = capture_transcript(store, session.path, session.source, final=True)
        session.turns_captured = captured.turns_captured
        errors = [captured.error] if captured.error else []
    extracted = extract_idle(
        {str(store.root)}, opencode_db=opencode_db, idle_after=0.0, only={(session.source, session.session_id)}
    )
    session.memories_created = sum(p.created for p in extracted)
    errors += [p.error for p in extracted if p.error]
    if errors:
        session.error = "; ".join(errors)


def import_history(
    store: Store,
    *,
    since: datetime | None = None,
    limit: int | None = None,
    dry_run: bool = False,
    opencode_db: str = "",
    progress: Progress | None = None,
) -> HistoryImport:
    """Find the project's past sessions and, unless `dry_run`, capture and extract each one not imported yet
    (see the module docstring). One session's failure is reported in its entry; the others still run."""
    started = time.monotonic()
    report = HistoryImport(str(store.root), dry_run)
    opencode_db = opencode_db or store.config.capture.opencode_db
    report.sessions, report.errors = find_history(store, since=since, limit=limit, opencode_db=opencode_db)
    report.found = len(report.sessions)
    for s in report.sessions:
        report.by_assistant[s.assistant] = report.by_assistant.get(s.assistant, 0) + 1
    todo = [s for s in report.sessions if s.status != IMPORTED]
    report.to_import = len(todo)
    if not dry_run:
        for done, session in enumerate(reversed(todo), 1):  # oldest first: memories arrive in the order they were made
            _import_one(store, session, opencode_db)
            report.turns_captured += session.turns_captured
            report.memories_created += session.memories_created
            if progress is not None:
                progress(done, len(todo))
    report.seconds = round(time.monotonic() - started, 3)
    return report


def count_history(root: Path) -> int:
    """How many past sessions of the project at `root` are on this machine and not imported yet (init's offer);
    0 when that cannot be told."""
    try:
        with Store.open(root) as store:
            found, _errors = find_history(store)
    except (CodememoryError, OSError):
        return 0
    return sum(1 for s in found if s.status != IMPORTED)
