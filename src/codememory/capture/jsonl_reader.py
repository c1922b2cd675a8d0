"""What the transcript readers (Claude Code, Codex, Gemini CLI, Copilot CLI) share: reading whole JSON lines from a
byte offset, the read state a capture cursor keeps, a mutable turn being assembled, and cutting out what codememory
itself injected (memory must never re-ingest its own context).

The assistants append one JSON object per line, so a byte offset is a place to resume from. (Gemini CLI may
write a message again, with its tool calls added, and rewrites the file when a session is resumed: its reader
keeps a message's last version, and a rewritten file that shrank is read again from the start.) A read takes only
whole lines (a line still being written has no newline yet) and stops, for the next read, at the first line of the
first turn that is not finished yet: that turn is read again, whole, once it is.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from codememory.capture.turns import SessionInfo, Todo, ToolCall, Turn, project_path
from codememory.core.bounded_input import TRANSCRIPT_LINE_MAX_BYTES, TRANSCRIPT_READ_MAX_BYTES, decode, valid_json_text
from codememory.core.dates import canonical_iso, to_iso
from codememory.core.lazy_pattern import lazy_pattern

# Blocks an assistant wraps around context it adds to a prompt (hook output, reminders, our own
# `<developer_context>` for OpenCode); an unclosed one runs to the end of the text.
_INJECTED_TAGS = ("system-reminder", "user-prompt-submit-hook", "session-start-hook", "developer_context")
_INJECTED_RE = lazy_pattern(
    r"<(" + "|".join(_INJECTED_TAGS) + r")\b[^>]*>.*?(?:</\1>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
# hooks/dispatch.py starts every context it injects with one of these (the heading in versions before the tag)
OUR_CONTEXT_PREFIX = ("<project_memory>", "## codememory:")
_SPACE_RE = lazy_pattern(r"[ \t]+\n")
_SKIP_CHUNK = 1 << 20


def strip_injected(text: str) -> str:
    """`text` without injected blocks; "" when the whole text is context codememory injected. The rule of
    Claude Code and Codex transcripts, where hooks' output arrives wrapped in the assistant's own tags;
    OpenCode's messages carry only the plugin's block (`opencode_turns.strip_developer_context`)."""
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


class LineRead(NamedTuple):
    lines: list[Line]
    end: int  # the offset just after the last line read (or read past)
    at_end: bool  # the read reached the end of the file
    skipped: int = 0  # lines over TRANSCRIPT_LINE_MAX_BYTES read past


def read_lines(
    path: Path, offset: int, max_bytes: int | None = None, *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> LineRead:
    """The whole JSON-object lines from `offset` on, within `max_bytes` (at most, and by default,
    TRANSCRIPT_READ_MAX_BYTES), the offset just after the last line read, and whether the read reached
    the end of the file. A first line longer than `max_bytes` is still read whole. Lines that are not
    JSON objects are skipped (still counted in the offsets), and so is a line over `line_cap` bytes: it
    is read past in chunks, never held, and when the byte budget ends inside it the next read starts
    there and skips its rest (which is not a JSON object). Bytes that are not UTF-8 become U+FFFD and
    lone surrogate escapes \\ufffd, so no line's text holds a string that cannot be written out."""
    limit = TRANSCRIPT_READ_MAX_BYTES if max_bytes is None else min(max_bytes, TRANSCRIPT_READ_MAX_BYTES)
    lines: list[Line] = []
    pos = offset
    skipped = 0
    with path.open("rb") as f:
        f.seek(offset)
        while True:
            room = offset + limit - pos
            first = pos == offset
            if room <= 0 and not first:
                return LineRead(lines, pos, f.read(1) == b"", skipped)
            want = (line_cap if first else min(room, line_cap)) + 1
            raw = f.readline(want)
            if not raw:
                return LineRead(lines, pos, True, skipped)
            if raw.endswith(b"\n"):
                if len(raw) > room and not first:
                    return LineRead(lines, pos, False, skipped)  # the budget ends before this line does
                if len(raw) <= line_cap:
                    line = _json_line(raw)
                    if line is not None:
                        lines.append(Line(pos, pos + len(raw), line))
                    pos += len(raw)
                    continue
            elif len(raw) < want:
                return LineRead(lines, pos, True, skipped)  # a last line still being written
            elif want <= line_cap:
                return LineRead(lines, pos, False, skipped)  # longer than what is left of the budget
            # over line_cap: read past it, up to the budget (a first line: up to line_cap more)
            stop = max(room, line_cap + 1)
            taken = len(raw)
            while not raw.endswith(b"\n") and taken < stop:
                raw = f.readline(min(_SKIP_CHUNK, stop - taken))
                if not raw:
                    break
                taken += len(raw)
            pos += taken
            skipped += 1
            if not raw:
                return LineRead(lines, pos, True, skipped)
            if not raw.endswith(b"\n"):
                return LineRead(lines, pos, False, skipped)


def _json_line(raw: bytes) -> dict[str, Any] | None:
    text = raw.strip()
    if not text:
        return None
    try:
        value = json.loads(valid_json_text(decode(text)))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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
    skipped_lines: int = 0  # lines over TRANSCRIPT_LINE_MAX_BYTES, read past


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
    exit_code: int | None = None
    started_at: str | None = None  # the time of the line that made the call

    def frozen(self) -> ToolCall:
        return ToolCall(
            self.tool,
            self.call_id,
            self.status,
            self.input,
            self.output,
            self.error,
            self.title,
            self.exit_code,
            self.started_at,
        )


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
    text_calls: list[int] = field(default_factory=list)  # per text: the calls before it (see Turn.text_calls)

    def add_text(self, text: str) -> None:
        """An assistant text, after the calls read so far."""
        self.texts.append(text)
        self.text_calls.append(len(self.calls))

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
            text_calls=tuple(self.text_calls) if len(self.text_calls) == len(self.texts) else (),
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


def _no_todos(path: Path) -> list[Todo]:
    return []


@dataclass(frozen=True)
class TranscriptFormat:
    """One assistant's transcript format: how to tell a file is one (`sniff`, given each of its first lines), where
    its session ran (`cwd`, given the file and its first lines), how to read its lines into turns (`reader`), and the
    agent's own todo list when the assistant keeps it beside the transcript rather than in tool calls (`todos`)."""

    source: str
    reader: Callable[[ReadState, str | None], LineReader]  # (state to update, root) -> a fresh reader
    session_id: Callable[[Path], str]  # the session id from the file name, when no line names it
    sniff: Callable[[dict[str, Any]], bool]
    cwd: Callable[[Path, list[dict[str, Any]]], str | None]
    todos: Callable[[Path], list[Todo]] = _no_todos


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
    lines, end, at_end, skipped = read_lines(path, state.offset, max_bytes)
    reader = fmt.reader(state, root)
    for line in lines:
        reader.line(line)
    chunk = finish_read(
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
    return replace(chunk, skipped_lines=skipped) if skipped else chunk


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
