"""OpenCode's messages and parts as turns: the rules the database reader (opencode_db) and the plugin's live
raw events (raw_events) share, so a turn is the same whichever path sees it, and a turn rendered whole for
`codememory transcript`.

Turns: each user message starts a turn; assistant messages belong to the turn of their `parentID`
(OpenCode's link from an answer to the prompt it answers), else to the preceding user message. The
turn id is the user message id, its seq the 1-based position among the session's turns. Compaction
turns (OpenCode summarising the conversation to itself) are not turns: they are skipped and not
counted. Parts marked `synthetic` (file contents OpenCode inlines, text that plugins inject) or
`ignored` are skipped, and `<developer_context>` blocks are cut out of every text: memory must never
re-ingest what it injected.

A turn is completed when the assistant has finished it, the rule OpenCode's own prompt loop uses to
stop: every assistant message of the turn has `time.completed`, and the last one either ended with an
error (aborted, provider error) or has a `finish` reason other than "tool-calls"/"unknown" (which mean
another step follows). A turn that a later user message has superseded is also complete once none of
its messages is still streaming. Everything else (no answer yet, a step or tool still running) is
incomplete.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from codememory.capture.turns import ToolCall, Turn, exit_status, project_path, shell_status
from codememory.core.dates import to_iso
from codememory.core.lazy_pattern import lazy_pattern

SOURCE = "opencode"
# finish reasons after which OpenCode's loop runs another model step
CONTINUING_FINISH = frozenset({"tool-calls", "unknown"})
# tools whose `filePath` input is a file they change
WRITING_TOOLS = frozenset({"write", "edit", "multiedit"})
_DEVELOPER_CONTEXT_RE = lazy_pattern(r"<developer_context\b[^>]*>.*?(?:</developer_context>|\Z)", re.DOTALL | re.I)


@dataclass
class OpenCodeMessage:
    id: str
    role: str
    created: int
    data: dict[str, Any]


def ms_to_iso(ms: object) -> str | None:
    """Epoch milliseconds as canonical ISO; None for anything that is not a number."""
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    return to_iso(datetime.fromtimestamp(float(ms) / 1000.0, UTC))


def strip_developer_context(text: str) -> str:
    """Text without `<developer_context>` blocks, the context the codememory plugin adds to OpenCode's
    messages (the plugin cuts them by the same rule before it sends raw events). Only that block: nothing
    else is wrapped into an OpenCode message, unlike the Claude Code and Codex transcripts, whose hook
    wrappers `jsonl_reader.strip_injected` also cuts; a text without the block is kept exactly as stored."""
    if "developer_context" not in text.lower():
        return text
    return _DEVELOPER_CONTEXT_RE.sub("", text).strip()


def error_text(error: Any) -> str | None:
    """An OpenCode error (`{name, data: {message}}`, or a plain message) as one line of text."""
    if not error:
        return None
    if isinstance(error, dict):
        name = str(error.get("name") or "error")
        data = error.get("data")
        message = data.get("message") if isinstance(data, dict) else error.get("message")
        return f"{name}: {message}" if message else name
    return str(error)


def _completed_ms(msg: OpenCodeMessage) -> int | None:
    time = msg.data.get("time")
    value = time.get("completed") if isinstance(time, dict) else None
    return int(value) if isinstance(value, int | float) else None


def is_compaction(message: dict[str, Any]) -> bool:
    """Whether an assistant message is a compaction summary (its turn is not a turn)."""
    return message.get("summary") is True or message.get("mode") == "compaction" or message.get("agent") == "compaction"


def answer_finished(last: dict[str, Any]) -> tuple[bool, str | None]:
    """Whether a turn's last assistant message ends the turn (an error, or a finish reason that does not
    continue with tool results), and its error."""
    error = error_text(last.get("error"))
    return error is not None or last.get("finish") not in CONTINUING_FINISH, error


def written_file(call: ToolCall) -> str | None:
    """The file a completed write/edit tool call wrote."""
    path = call.input.get("filePath")
    if call.tool in WRITING_TOOLS and call.status == "completed" and isinstance(path, str):
        return path
    return None


def _turn_state(assistants: list[OpenCodeMessage], superseded: bool) -> tuple[bool, str | None, str | None]:
    """(completed, ended_at, error) of a turn from its assistant messages."""
    if not assistants:
        return superseded, None, None
    last = assistants[-1]
    streaming = any(_completed_ms(m) is None for m in assistants)
    finished, error = answer_finished(last.data)
    finished = finished and not streaming
    done = finished or (superseded and not streaming)
    ended = ms_to_iso(_completed_ms(last)) if done else None
    return done, ended, error


def group_turns(messages: list[OpenCodeMessage]) -> list[tuple[OpenCodeMessage, list[OpenCodeMessage]]]:
    """[(user message, its assistant messages)] in order, compaction turns left out."""
    groups: dict[str, list[OpenCodeMessage]] = {}
    order: list[OpenCodeMessage] = []
    current: str | None = None
    for m in messages:
        if m.role == "user":
            groups[m.id] = []
            order.append(m)
            current = m.id
        elif m.role == "assistant":
            parent = m.data.get("parentID")
            key = parent if isinstance(parent, str) and parent in groups else current
            if key is not None:
                groups[key].append(m)
    return [(u, groups[u.id]) for u in order if not any(is_compaction(m.data) for m in groups[u.id])]


def build_turn(
    session_id: str,
    seq: int,
    user: OpenCodeMessage,
    answers: list[OpenCodeMessage],
    parts: dict[str, list[dict[str, Any]]],
    root: str | None,
    superseded: bool,
) -> Turn:
    """Turn number `seq` of a session from its user message, its assistant messages and their parts
    (`parts` by message id); `superseded`: a later turn exists."""
    user_texts = []
    for part in parts.get(user.id, []):
        if part.get("type") == "text" and not part.get("synthetic") and not part.get("ignored"):
            text = strip_developer_context(str(part.get("text") or ""))
            if text.strip():
                user_texts.append(text.strip())
    texts: list[str] = []
    text_calls: list[int] = []
    calls: list[ToolCall] = []
    files: list[str] = []
    steps = 0
    for message in answers:
        for part in parts.get(message.id, []):
            kind = part.get("type")
            if part.get("synthetic") or part.get("ignored"):
                continue
            if kind == "text":
                text = strip_developer_context(str(part.get("text") or "")).strip()
                if text:
                    texts.append(text)
                    text_calls.append(len(calls))
            elif kind == "step-start":
                steps += 1
            elif kind == "patch":
                for f in part.get("files") or []:
                    if isinstance(f, str):
                        files.append(project_path(f, root))
            elif kind == "tool":
                call = tool_call(part)
                calls.append(call)
                path = written_file(call)
                if path:
                    files.append(project_path(path, root))
    completed, ended_at, error = _turn_state(answers, superseded)
    return Turn(
        source=SOURCE,
        session_id=session_id,
        turn_id=user.id,
        seq=seq,
        started_at=ms_to_iso(user.created) or "",
        ended_at=ended_at,
        user_text="\n\n".join(user_texts),
        assistant_texts=tuple(texts),
        tool_calls=tuple(calls),
        files=tuple(dict.fromkeys(files)),
        completed=completed,
        error=error,
        steps=steps,
        text_calls=tuple(text_calls),
    )


def tool_call(part: dict[str, Any]) -> ToolCall:
    """A `tool` part as the ToolCall every capture source produces."""
    raw_state = part.get("state")
    state: dict[str, Any] = raw_state if isinstance(raw_state, dict) else {}
    raw_input = state.get("input")
    output = state.get("output")
    title = state.get("title")
    # OpenCode's bash tool ends "completed" whatever the command's exit status; that is in `metadata.exit`.
    metadata = state.get("metadata")
    code = exit_status(metadata.get("exit")) if isinstance(metadata, dict) else None
    return ToolCall(
        tool=str(part.get("tool") or "?"),
        call_id=str(part.get("callID") or ""),
        status=shell_status(str(state.get("status") or "pending"), code),
        input=raw_input if isinstance(raw_input, dict) else {},
        output=output if isinstance(output, str) else "",
        error=error_text(state.get("error")),
        title=title if isinstance(title, str) and title else None,
        exit_code=code,
        started_at=_started(state.get("time")),
    )


def _started(time: object) -> str | None:
    """A tool part's `state.time.start` (milliseconds) as an ISO stamp."""
    return ms_to_iso(time.get("start")) if isinstance(time, dict) else None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… [{len(text) - limit} more characters]"


def render_full_turn(turn: Turn, events: list[dict[str, Any]], *, max_output: int = 2000) -> str:
    """A turn as plain text, in full: the prompt, then the assistant's parts (`events`, in order) with each
    tool call's input and output (cut at `max_output` characters), for someone reading what happened. Not
    scrubbed: callers scrub before showing or storing it. The extraction prompt uses a different, compact
    form of turns (`extract.compress.compact_transcript`): one sentence per tool call, no outputs."""
    state = "completed" if turn.completed else "still running"
    lines = [f"# Turn {turn.seq} of session {turn.session_id} ({turn.turn_id}), {turn.started_at}, {state}", ""]
    lines += ["## User", "", turn.user_text or "(no text)", "", "## Assistant", ""]
    step = 0
    for part in events:
        kind = part.get("type")
        if part.get("synthetic") or part.get("ignored"):
            continue
        if kind == "step-start":
            step += 1
            lines += [f"### Step {step}", ""]
        elif kind == "text":
            text = strip_developer_context(str(part.get("text") or "")).strip()
            if text:
                lines += [text, ""]
        elif kind == "tool":
            call = tool_call(part)
            args = json.dumps(call.input, ensure_ascii=False, sort_keys=True)
            lines.append(f"[Tool: {call.tool}] {call.status}: {_cut(args, max_output)}")
            if call.exit_code not in (None, 0):
                lines.append(f"exit status: {call.exit_code}")
            if call.error:
                lines.append(f"error: {call.error}")
            if call.output:
                lines += ["output:", _cut(call.output.rstrip(), max_output)]
            lines.append("")
    if turn.files:
        lines += ["Files: " + ", ".join(turn.files), ""]
    if turn.error:
        lines += [f"Stopped: {turn.error}", ""]
    return "\n".join(lines).rstrip() + "\n"
