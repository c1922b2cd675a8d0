"""The daily log: one markdown file per local day, `<project>/.codememory/memory/YYYY-MM-DD.md`, with a
short deterministic record of every completed turn (no model involved):

    # 2026-11-22

    ## Session 14:30

    ### 14:31
    <!-- session:ses_abc turn:msg_123 -->
    - User: fix the failing test in auth.ts
    - OpenCode: The token check compared seconds with milliseconds; fixed and the suite passes.
    - [Tool: bash `npm test`] failed (exit 1)
    - [Tool: edit `src/auth.ts`] completed
    - [Tool: bash `npm test`] completed
    - Files: src/auth.ts

A turn goes into the file of its local start date. `## Session HH:MM` (the session's local start time,
with the date when it started on another day) opens whenever the previous entry in the file belongs to
another session. The anchor comment ties an entry to its transcript, and is how a crash between the
append and the store insert is repaired: an anchor already in the log means the entry is there.

Every text passes through `privacy.scrub` before it is written; a whole entry is appended with a single
write of an O_APPEND file descriptor and fsynced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from codememory.assistants import REGISTRY
from codememory.capture.turns import SessionInfo, ToolCall, Turn, project_path
from codememory.core import safe_files
from codememory.core.dates import from_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.safe_text import printable_line
from codememory.text.privacy import scrub

MEMORY_DIR = "memory"
MAX_LOG_BYTES = 64_000_000  # one day's log; anchors past this are not seen (a replay may then repeat an entry)
ANCHOR_RE = lazy_pattern(r"<!--\s*session:(\S+)\s+turn:(\S+?)(?:\s+[^>]*?)?\s*-->")
USER_CHARS = 300
ANSWER_CHARS = 400
TOOL_ARG_CHARS = 80
MAX_TOOL_LINES = 12
MAX_FILES = 20
LABELS = {name: a.display for a in REGISTRY for name in (a.recorded_as, *a.names)}
# the input that says best what a tool call did, per tool; other tools: the first of ARG_KEYS present
_TOOL_ARG = {"bash": "command", "write": "filePath", "edit": "filePath", "read": "filePath", "task": "description"}
_ARG_KEYS = (
    "command",
    "cmd",
    "filePath",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
    "name",
)
_PATH_KEYS = frozenset({"filePath", "file_path", "notebook_path", "path"})
_SPACE_RE = lazy_pattern(r"\s+")


def local_time(iso: str) -> datetime:
    """A stored UTC timestamp in the machine's local time zone."""
    return from_iso(iso).astimezone()


def log_name(turn: Turn) -> str:
    """`YYYY-MM-DD.md`: the local date the turn started."""
    return f"{local_time(turn.started_at):%Y-%m-%d}.md"


def log_field(text: str, limit: int) -> str:
    """A field of an entry: scrubbed, whitespace collapsed, other control characters (ESC, NUL, ...) escaped as
    `\\x1b` (`core.safe_text.printable_line`: a terminal showing the log runs no escape sequence), cut to
    `limit` characters with an ellipsis; an HTML comment opener is escaped, so quoted text can never pass for an
    anchor."""
    flat = printable_line(_SPACE_RE.sub(" ", scrub(text)).strip()).replace("<!--", "<\\!--")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _code(text: str) -> str:
    """An inline code span that survives backticks in `text`."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _tool_arg(call: ToolCall) -> tuple[str | None, str]:
    """(input key, value) that says best what a call did; the tool's title when no input does."""
    keys = ([_TOOL_ARG[call.tool]] if call.tool in _TOOL_ARG else []) + list(_ARG_KEYS)
    for key in keys:
        value = call.input.get(key)
        if isinstance(value, str) and value.strip():
            return key, value
    return None, call.title or ""


def tool_status(call: ToolCall) -> str:
    """`completed`, `failed (exit 1)`, `failed: File not found: ...`, `running`, ..."""
    if not call.failed:
        return log_field(call.status, 20) or "unknown"
    status = "failed" if call.exit_code is None else f"failed (exit {call.exit_code})"
    return f"{status}: {log_field(call.error, TOOL_ARG_CHARS)}" if call.error else status


def tool_line(call: ToolCall, root: str | None = None) -> str:
    """``- [Tool: bash `npm test`] completed``; a failed call says so with its exit status or error:
    ``- [Tool: bash `pytest -q`] failed (exit 1)``."""
    key, value = _tool_arg(call)
    if key in _PATH_KEYS:
        value = project_path(value, root)
    arg = log_field(value, TOOL_ARG_CHARS)
    tool = log_field(call.tool, TOOL_ARG_CHARS)
    head = f"[Tool: {tool} {_code(arg)}]" if arg else f"[Tool: {tool}]"
    return f"- {head} {tool_status(call)}"


def summary_lines(turn: Turn, root: str | None = None) -> list[str]:
    """The entry's bullets: the request, the answer, one line per tool call, the files touched."""
    lines: list[str] = []
    if turn.user_text.strip():
        user = log_field(turn.user_text, USER_CHARS)
        if user:
            lines.append(f"- User: {user}")
    answer = next((t for t in reversed(turn.assistant_texts) if t.strip()), "")
    if answer:
        text = log_field(answer, ANSWER_CHARS)
        if text:
            lines.append(f"- {LABELS.get(turn.source, 'Assistant')}: {text}")
    calls = turn.tool_calls
    lines += [tool_line(call, root) for call in calls[:MAX_TOOL_LINES]]
    if len(calls) > MAX_TOOL_LINES:
        lines.append(f"- … and {len(calls) - MAX_TOOL_LINES} more tool calls")
    files = [log_field(f, 200) for f in turn.files[:MAX_FILES]]
    if files:
        more = f" and {len(turn.files) - MAX_FILES} more" if len(turn.files) > MAX_FILES else ""
        lines.append("- Files: " + ", ".join(files) + more)
    if turn.error:
        lines.append(f"- Stopped: {log_field(turn.error, 200)}")
    return lines or ["- (nothing said or done)"]


def session_heading(session: SessionInfo | None, turn: Turn) -> str:
    """`## Session HH:MM` for the session's local start (dated when it started on another day)."""
    day = local_time(turn.started_at).date()
    started = local_time(session.created_at) if session and session.created_at else local_time(turn.started_at)
    when = f"{started:%H:%M}" if started.date() == day else f"{started:%Y-%m-%d %H:%M}"
    heading = f"## Session {when}"
    if session and session.parent_id:
        heading += f" (sub-agent of {session.parent_id})"
    return heading


def render_entry(turn: Turn, lines: list[str]) -> str:
    """`### HH:MM`, the anchor, the bullets."""
    return f"### {local_time(turn.started_at):%H:%M}\n{turn.anchor}\n" + "\n".join(lines) + "\n"


def find_anchors(path: Path) -> list[tuple[str, str]]:
    """(session id, turn id) of every anchor in a log file, in file order ([] when there is no file)."""
    try:
        text = safe_files.read_text(path, MAX_LOG_BYTES, errors="replace")
    except FileNotFoundError:
        return []
    return ANCHOR_RE.findall(text)


def _ends_with_newline(path: Path) -> bool:
    with safe_files.open_read(path) as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


@dataclass(frozen=True)
class Appended:
    path: Path
    summary: str  # the bullet lines of the entry
    appended: bool  # False: the turn's anchor was already in the log (a repaired crash or a replay)


@dataclass
class _FileState:
    size: int
    anchors: set[tuple[str, str]]
    last_session: str | None


class DailyLog:
    """Appends turns to the daily logs under `folder` (`.codememory/memory/`). Remembers the anchors of
    the files it has read, re-reading a file whenever its size changed behind its back. Callers that
    may run concurrently must serialise (the capture pass holds a per-project file lock)."""

    def __init__(self, folder: Path, *, root: str | Path | None = None) -> None:
        self.folder = folder
        self.root = str(root) if root else None
        self._files: dict[Path, _FileState] = {}

    def path_for(self, turn: Turn) -> Path:
        return self.folder / log_name(turn)

    def _state(self, path: Path) -> _FileState:
        try:
            size = os.lstat(path).st_size
        except FileNotFoundError:
            size = -1
        state = self._files.get(path)
        if state is None or state.size != size:
            anchors = find_anchors(path)
            state = _FileState(size, set(anchors), anchors[-1][0] if anchors else None)
            self._files[path] = state
        return state

    def contains(self, turn: Turn) -> bool:
        return (turn.session_id, turn.turn_id) in self._state(self.path_for(turn)).anchors

    def append(self, turn: Turn, session: SessionInfo | None = None) -> Appended:
        """Append the turn's entry unless its anchor is already in the log."""
        path = self.path_for(turn)
        lines = summary_lines(turn, self.root)
        summary = "\n".join(lines)
        state = self._state(path)
        if (turn.session_id, turn.turn_id) in state.anchors:
            return Appended(path, summary, appended=False)
        chunks: list[str] = []
        if state.size <= 0:
            chunks.append(f"# {local_time(turn.started_at):%Y-%m-%d}\n")
        elif not _ends_with_newline(path):
            chunks.append("\n")  # a torn last line must not swallow the new heading
        if state.last_session != turn.session_id:
            chunks.append(f"\n{session_heading(session, turn)}\n")
        chunks.append("\n" + render_entry(turn, lines))
        data = "".join(chunks).encode("utf-8")
        size = safe_files.append_bytes(path, data, sync=True)
        state.anchors.add((turn.session_id, turn.turn_id))
        state.last_session = turn.session_id
        state.size = size
        return Appended(path, summary, appended=True)
