"""Capture of Claude Code, Codex, Gemini CLI and Copilot CLI transcripts: the same daily log and `captured_turns`
records as OpenCode capture (opencode_capture), read from the JSONL file a hook names in `transcript_path`.

One capture of one file, under the project's capture lock:
1. read the file from the cursor's byte offset (`capture_cursors`, source "claude-code", "codex", …,
   key the file's resolved path; position: transcript_common.ReadState as JSON), whole lines only,
   up to the end of the last finished turn;
2. for each finished turn not yet recorded, in order: append its entry to the daily log (skipped when
   its anchor is already there), then record it in `captured_turns` (a no-op when already recorded);
3. move the cursor past those turns.

Every step may be repeated without effect, so a crash at any point neither duplicates an entry nor
skips a turn: the next capture re-reads from the old offset and skips what is already there. A file
that shrank (replaced or truncated) is read again from the start; turns already recorded are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.capture import claude_code as claude_transcript
from codememory.capture import codex as codex_transcript
from codememory.capture import copilot as copilot_transcript
from codememory.capture import gemini as gemini_transcript
from codememory.capture.daily_log import MEMORY_DIR, DailyLog
from codememory.capture.jsonl_reader import Chunk, ReadState, TranscriptFormat, project_root_of, read_transcript
from codememory.capture.opencode import TurnCounts, project_lock, write_turn
from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.core.bounded_input import TRANSCRIPT_LINE_MAX_BYTES, size_text
from codememory.core.dates import now_utc, to_iso
from codememory.core.project import store_dir
from codememory.errors import TranscriptError
from codememory.store.capture import CaptureTables

if TYPE_CHECKING:
    from codememory.service.project_store import Store

SNIFF_BYTES = 256_000  # enough for Codex's first line, which carries its whole system prompt


# Checked in this order when a file's format is sniffed: Gemini CLI's first line also has a `sessionId`.
READERS: dict[str, TranscriptFormat] = {
    codex_transcript.SOURCE: codex_transcript.FORMAT,
    gemini_transcript.SOURCE: gemini_transcript.FORMAT,
    copilot_transcript.SOURCE: copilot_transcript.FORMAT,
    claude_transcript.SOURCE: claude_transcript.FORMAT,
}


@dataclass
class TranscriptReport(TurnCounts):
    path: str
    source: str
    session_id: str | None = None
    bytes_read: int = 0
    offset: int = 0  # where the next capture of this file starts
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source": self.source,
            "session_id": self.session_id,
            "bytes_read": self.bytes_read,
            "offset": self.offset,
            "turns_captured": self.turns_captured,
            "turns_repaired": self.turns_repaired,
            "turns_pending": self.turns_pending,
            "log_files": sorted(self.log_files),
            "error": self.error,
        }


# --------------------------------------------------------------------------- format
def _first_lines(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open("rb") as f:
            data = f.read(SNIFF_BYTES)
    except OSError as exc:
        raise TranscriptError(f"cannot read {path}: {exc.strerror or exc}") from None
    out = []
    for raw in data.splitlines()[:50]:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def detect_source(path: str | Path) -> str | None:
    """The source whose format a transcript's first lines are in ("claude-code", "codex", "gemini", "copilot"); None
    when it is none of them (or empty)."""
    for line in _first_lines(Path(path)):
        for source, fmt in READERS.items():
            if fmt.sniff(line):
                return source
    return None


def _cwd(path: Path, source: str | None = None) -> str | None:
    kind = source if source in READERS else detect_source(path)
    return READERS[kind].cwd(path, _first_lines(path)) if kind else None


def transcript_project(path: str | Path) -> str | None:
    """The project a transcript's session ran in (from the working directory it records)."""
    return project_root_of(_cwd(Path(path).expanduser()))


def _source(path: Path, source: str | None) -> str:
    if source is not None:
        if source not in READERS:
            raise TranscriptError(f"unknown transcript source {source!r}; choose one of: {', '.join(READERS)}")
        return source
    found = detect_source(path)
    if found is None:
        names = ", ".join(READERS)
        raise TranscriptError(f"{path} is not a transcript codememory can read (it reads: {names})")
    return found


# --------------------------------------------------------------------------- reading
def read_session(
    path: str | Path, *, source: str | None = None, root: str | None = None
) -> tuple[SessionInfo, list[Turn]]:
    """The whole session in a transcript, read from the start: its info and every turn in order (the
    last one with completed=False while the assistant is still answering). `root` (default: the
    project holding the transcript's working directory) is what file paths are made relative to.
    Raises TranscriptError when the file cannot be read."""
    file = Path(path).expanduser()
    kind = _source(file, source)
    root = root or project_root_of(_cwd(file, kind))
    try:
        chunk = read_transcript(READERS[kind], file, root=root, keep_unfinished=True)
    except OSError as exc:
        raise TranscriptError(f"cannot read {file}: {exc.strerror or exc}") from None
    return chunk.session, chunk.turns


def read_todos(path: str | Path, *, source: str | None = None) -> list[Todo]:
    """The agent's own todo list as the assistant last kept it beside the transcript (Copilot CLI's session
    database); [] for assistants whose todos are tool calls in the transcript, or when it cannot be read."""
    file = Path(path).expanduser()
    return READERS[_source(file, source)].todos(file)


# --------------------------------------------------------------------------- capture
def capture_transcript(
    store: Store,
    path: str | Path,
    source: str | None = None,
    *,
    finished: Iterable[str] = (),
    final: bool = False,
    max_bytes: int | None = None,
    max_turns: int | None = None,
    now: Callable[[], datetime] = now_utc,
) -> TranscriptReport:
    """Capture the finished turns of one transcript into `store`'s project (see the module docstring).
    `finished`: turn or prompt ids a Stop hook says are done (Codex writes its own end marker only
    after the hook); `final`: the session ended, take its last turn as it is; `max_bytes` and
    `max_turns` bound one capture's work (a hook catching up on a long transcript), the rest waits for
    the next capture (a single turn longer than `max_bytes` is still read whole). Never raises for a
    bad file (the report's `error` says what went wrong); store and lock errors propagate."""
    file = Path(path).expanduser()
    report = TranscriptReport(str(file), source or "")
    try:
        report.source = _source(file, source)
        with project_lock(store.root):
            limits = _Limits(frozenset(finished), final, max_bytes, max_turns)
            _capture(store, file, report, limits, now)
    except TranscriptError as exc:
        report.error = str(exc)
    return report


@dataclass(frozen=True)
class _Limits:
    finished: frozenset[str]
    final: bool
    max_bytes: int | None
    max_turns: int | None


def _read(file: Path, kind: str, state: ReadState, root: str, limits: _Limits) -> Chunk:
    def read(max_bytes: int | None) -> Chunk:
        return read_transcript(
            READERS[kind],
            file,
            state,
            root=root,
            finished=limits.finished,
            final=limits.final,
            max_bytes=max_bytes,
            max_turns=limits.max_turns,
        )

    chunk = read(limits.max_bytes)
    if not chunk.turns and not chunk.at_end:
        chunk = read(None)  # the next turn alone is longer than max_bytes: read it whole
    return chunk


def _capture(store: Store, file: Path, report: TranscriptReport, limits: _Limits, now: Callable[[], datetime]) -> None:
    tables = CaptureTables(store.db)
    key = str(file.resolve())
    cursor = tables.get_cursor(report.source, key)
    state = ReadState.from_json(cursor.position if cursor else None)
    try:
        size = file.stat().st_size
        if size < state.offset:
            state = ReadState()  # replaced or truncated: read it again (recorded turns are skipped)
        report.offset = state.offset
        if size == state.offset:
            return
        chunk = _read(file, report.source, state, str(store.root), limits)
    except OSError as exc:
        raise TranscriptError(f"cannot read {file}: {exc.strerror or exc}") from None
    report.session_id = chunk.session.session_id
    if chunk.skipped_lines:
        report.error = f"skipped {chunk.skipped_lines} line(s) over the {size_text(TRANSCRIPT_LINE_MAX_BYTES)} limit"
    limit = size if chunk.at_end or limits.max_bytes is None else min(size, state.offset + limits.max_bytes)
    report.bytes_read = limit - state.offset
    report.turns_pending = chunk.pending
    log = DailyLog(store_dir(store.root) / MEMORY_DIR, root=store.root)
    for turn in chunk.turns:
        _record(tables, log, chunk.session, turn, now, report)
    if chunk.state != state:
        tables.set_cursor(report.source, key, chunk.state.to_json(), to_iso(now()))
    report.offset = chunk.state.offset


def _record(
    tables: CaptureTables,
    log: DailyLog,
    session: SessionInfo,
    turn: Turn,
    now: Callable[[], datetime],
    report: TranscriptReport,
) -> None:
    if tables.is_captured(turn.source, turn.session_id, turn.turn_id):
        return  # a file read again from the start, or a capture that died before moving the cursor
    written = write_turn(tables, log, session, turn, to_iso(now()))
    if written is not None:
        report.count(log, written)
