"""What the Claude Code and Codex transcript readers share: reading whole JSON lines from a byte offset,
the read state a capture cursor keeps, a mutable turn being assembled, and cutting out what codememory
itself injected (memory must never re-ingest its own context).

Both assistants append one JSON object per line and never rewrite a line, so a byte offset is a stable
place to resume from. A read takes only whole lines (a line still being written has no newline yet) and
stops, for the next read, at the first line of the first turn that is not finished yet: that turn is
read again, whole, once it is.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ..dates import canonical_iso, to_iso
from .model import SessionInfo, ToolCall, Turn, project_path

# Blocks an assistant wraps around context it adds to a prompt (hook output, reminders, our own
# `<developer_context>` for OpenCode); an unclosed one runs to the end of the text.
_INJECTED_TAGS = ("system-reminder", "user-prompt-submit-hook", "session-start-hook", "developer_context")
_INJECTED_RE = re.compile(
    r"<(" + "|".join(_INJECTED_TAGS) + r")\b[^>]*>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
# hooks.py starts every context it injects with one of these (the heading in versions before the tag)
OUR_CONTEXT_PREFIX = ("<project_memory>", "## codememory:")
_SPACE_RE = re.compile(r"[ \t]+\n")


def strip_injected(text: str) -> str:
    """`text` without injected blocks; "" when the whole text is context codememory injected."""
    if "<" in text:
        text = _INJECTED_RE.sub("", text)
    text = text.strip()
    if text.startswith(OUR_CONTEXT_PREFIX):
        return ""
    return _SPACE_RE.sub("\n", text)


def iso(value: Any) -> str | None:
    """A transcript timestamp (ISO text, or epoch seconds) in the store's canonical form."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return to_iso(datetime.fromtimestamp(float(value), UTC))
    if not isinstance(value, str) or not value:
        return None
    try:
        return canonical_iso(value)
    except ValueError:  # a malformed timestamp only costs the turn its time
        return None


# --------------------------------------------------------------------------- lines
@dataclass(frozen=True)
class Line:
    offset: int  # byte offset where the line starts
    end: int  # byte offset just after its newline
    data: dict[str, Any]


def read_lines(path: Path, offset: int, max_bytes: int | None = None) -> tuple[list[Line], int, bool]:
    """The whole JSON-object lines from `offset` on (at most `max_bytes` of them), the offset just
    after the last whole line, and whether the read reached the end of the file. Lines that are not
    JSON objects are skipped (still counted in the offsets)."""
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    at_end = max_bytes is None or len(data) <= max_bytes
    if not at_end:
        data = data[:max_bytes]
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset, at_end
    lines: list[Line] = []
    pos = 0
    for raw in data[: end + 1].splitlines(keepends=True):
        start, pos = pos, pos + len(raw)
        text = raw.strip()
        if not text:
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            lines.append(Line(offset + start, offset + pos, value))
    return lines, offset + end + 1, at_end


# --------------------------------------------------------------------------- state
@dataclass
class ReadState:
    """Where a transcript was read up to: the capture cursor's position (stored as JSON)."""

    offset: int = 0  # next byte to read: the start of the first unfinished turn, or the end of the file
    seq: int = 0  # turns before `offset`
    messages: int = 0  # prompts and assistant messages in those turns
    turn: str | None = None  # the last finished turn's id
    session_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    title: str | None = None
    cwd: str | None = None

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> ReadState:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        state = cls()
        if not isinstance(value, dict):
            return state
        for key, default in cls().__dict__.items():
            got = value.get(key, default)
            if key in ("offset", "seq", "messages"):
                got = got if isinstance(got, int) and not isinstance(got, bool) and got >= 0 else 0
            elif got is not None and not isinstance(got, str):
                got = default
            setattr(state, key, got)
        return state


@dataclass(frozen=True)
class Chunk:
    """What one read found: the session, its turns (finished ones first and only those unless the read
    was final), the state to resume from, and how many turns are still unfinished."""

    session: SessionInfo
    turns: list[Turn]
    state: ReadState
    pending: int = 0
    at_end: bool = True  # the read reached the end of the file (no byte limit cut it)


# --------------------------------------------------------------------------- turns
@dataclass
class Call:
    tool: str
    call_id: str
    input: dict[str, Any]
    status: str = "pending"
    output: str = ""
    error: str | None = None
    title: str | None = None

    def frozen(self) -> ToolCall:
        return ToolCall(self.tool, self.call_id, self.status, self.input, self.output, self.error, self.title)


@dataclass
class TurnBuilder:
    """A turn being read: opened by a prompt (or, for Codex, by its task_started event)."""

    turn_id: str
    start: int  # byte offset of the line that opened it
    started_at: str | None
    prompt_id: str | None = None  # Claude's promptId / Codex's turn id: what a Stop hook names
    user_texts: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    calls: dict[str, Call] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    ended_at: str | None = None
    done: bool = False  # the assistant said it finished (end_turn, task_complete)
    error: str | None = None
    steps: set[str] = field(default_factory=set)

    def touch(self, when: str | None) -> None:
        if when:
            self.ended_at = when

    def add_file(self, path: str, cwd: str | None, root: str | None) -> None:
        if not path:
            return
        if not os.path.isabs(path) and cwd:
            path = os.path.normpath(os.path.join(cwd, path))
        rel = project_path(path, root)
        if rel not in self.files:
            self.files.append(rel)

    def finished(self) -> bool:
        return self.done and all(c.status != "pending" for c in self.calls.values())

    def empty(self) -> bool:
        return not (self.user_texts or self.texts or self.calls)

    def build(self, source: str, session_id: str, seq: int, completed: bool) -> Turn:
        started = self.started_at or self.ended_at or ""
        return Turn(
            source=source,
            session_id=session_id,
            turn_id=self.turn_id,
            seq=seq,
            started_at=started,
            ended_at=(self.ended_at or started) if completed else None,
            user_text="\n\n".join(self.user_texts),
            assistant_texts=tuple(self.texts),
            tool_calls=tuple(c.frozen() for c in self.calls.values()),
            files=tuple(self.files),
            completed=completed,
            error=self.error,
            steps=len(self.steps),
        )


def finish_read(
    source: str,
    builders: list[TurnBuilder],
    state: ReadState,
    end: int,
    *,
    finished: frozenset[str],
    final: bool,
    root: str | None,
    fallback_id: str,
    keep_unfinished: bool = False,
    at_end: bool = True,
    max_turns: int | None = None,
) -> Chunk:
    """Turn the builders of one read into a Chunk: a turn is finished when the assistant said so, a
    Stop hook named it (`finished`), a later prompt superseded it, or the read is `final` (the session
    ended). Turns are taken in order up to the first unfinished one, whose start is the next offset
    (`keep_unfinished` adds that one too, with completed=False), or up to `max_turns` turns. A read
    that stopped short of the end of the file (`at_end` False) may have cut its last turn: the hint
    and `final` do not apply to that one."""
    session_id = state.session_id or fallback_id
    turns: list[Turn] = []
    new = ReadState(**state.__dict__)
    new.session_id = session_id
    new.offset = end
    pending = 0
    for index, b in enumerate(builders):
        superseded = index + 1 < len(builders)
        told = superseded or at_end  # a turn cut by the read's end is not what the hint is about
        hinted = told and (b.turn_id in finished or (b.prompt_id is not None and b.prompt_id in finished))
        complete = b.finished() or hinted or superseded or (final and told)
        if max_turns is not None and len(turns) >= max_turns:
            complete = False
        if not complete:
            pending = len(builders) - index
            new.offset = b.start
            if keep_unfinished and not b.empty():
                turns.append(b.build(source, session_id, new.seq + 1, False))
            break
        if b.empty():
            continue  # a task with no prompt and no answer (e.g. Codex compacting): not a turn
        for call in b.calls.values():
            if call.status == "pending":
                call.status, call.error = "error", call.error or "no result: the turn ended first"
        turns.append(b.build(source, session_id, new.seq + 1, True))
        new.seq += 1
        new.messages += 1 + max(len(b.steps), 1 if b.texts or b.calls else 0)
        new.turn = b.turn_id
    if final and not builders:
        new.offset = end
    info = SessionInfo(
        source=source,
        session_id=session_id,
        project_root=root or new.cwd or "",
        title=new.title,
        created_at=new.created_at or (turns[0].started_at if turns else "") or "",
        updated_at=new.updated_at or "",
        message_count=new.messages,
    )
    return Chunk(info, turns, new, pending, at_end)


class LineReader(Protocol):
    """What a transcript format reads its lines with: it opens and fills turn builders, line by line,
    and keeps the session's facts (id, times, title, cwd) in the ReadState it was made with."""

    builders: list[TurnBuilder]

    def line(self, line: Line) -> None: ...


@dataclass(frozen=True)
class TranscriptFormat:
    source: str
    reader: Callable[[ReadState, str | None], LineReader]  # (state to update, root) -> a fresh reader
    session_id: Callable[[Path], str]  # the session id from the file name, when no line names it


def read_transcript(
    fmt: TranscriptFormat,
    path: str | Path,
    state: ReadState | None = None,
    *,
    root: str | None = None,
    finished: frozenset[str] = frozenset(),
    final: bool = False,
    keep_unfinished: bool = False,
    max_bytes: int | None = None,
    max_turns: int | None = None,
) -> Chunk:
    """Read a transcript of format `fmt` from `state.offset` (0: the start). `root`: the project the file
    paths are made relative to; `finished`: prompt ids (or turn ids) a Stop hook says are done; `final`:
    the session has ended, so its last turn is taken as it is; `max_bytes` / `max_turns` bound the work
    of one read (the rest is read next time); see finish_read."""
    path = Path(path)
    state = ReadState(**(state or ReadState()).__dict__)
    lines, end, at_end = read_lines(path, state.offset, max_bytes)
    reader = fmt.reader(state, root)
    for line in lines:
        reader.line(line)
    return finish_read(
        fmt.source,
        reader.builders,
        state,
        end,
        finished=finished,
        final=final,
        root=root,
        fallback_id=fmt.session_id(path),
        keep_unfinished=keep_unfinished,
        at_end=at_end,
        max_turns=max_turns,
    )


def output_text(value: Any) -> str:
    """A tool result's text: a string, or the text blocks of a list, or JSON for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text") for b in value if isinstance(b, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def project_root_of(cwd: str | None) -> str | None:
    """The project a transcript's working directory belongs to: the nearest folder holding a codememory
    store, else the nearest git work tree, else the directory itself."""
    if not cwd or not os.path.isabs(cwd):
        return None
    start = Path(cwd)
    for marker in (".codememory/memory.db", ".git"):
        for folder in (start, *start.parents):
            if (folder / marker).exists():
                return str(folder)
    return cwd
