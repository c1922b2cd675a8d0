"""Read a GitHub Copilot CLI session (`~/.copilot/session-state/<session id>/events.jsonl`, the Stop hook's
`transcript_path`) into turns. Lines are `{"type", "data", "id", "timestamp", "parentId"}`; as written by Copilot
CLI 1.0.102 (tests/fixtures/transcripts):

- `session.start`: `data.sessionId`, `data.context.cwd`, `data.startTime`;
- `user.message`: `data.content` is what the user typed (`transformedContent` adds the date and the hooks'
  `<system_reminder>` context, and is not read), `data.messageId`, `data.interactionId`;
- `assistant.message`: one model step: `data.content` (its text) and `data.toolRequests` (`toolCallId`, `name` as
  the model sees it, `arguments`); `assistant.turn_start` / `assistant.turn_end` frame each step;
- `tool.execution_complete`: `data.toolCallId`, `data.success`, `data.result.content` (or `data.error`),
  `data.fileEdits` (`path`, `kind`) for the files it wrote, and a shell command's `data.shellExecution.exitCode`
  (a command that exits non-zero is still a `success` of the tool);
- `hook.*`, `system.message`, `session.usage_record`, `session.shutdown`, … are bookkeeping and are skipped.

A turn (one prompt and everything that answered it) is finished when a step ends with text and no tool requests
and every tool call has its result, when the next prompt arrives, or when the session ends. The agent's todo list
is not in the events: its `sql` tool keeps it in the `todos` table of `session.db` beside them (`todos` below).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from codememory.capture.jsonl_reader import (
    Call,
    Line,
    ReadState,
    TranscriptFormat,
    TurnBuilder,
    iso,
    output_text,
    strip_injected,
)
from codememory.capture.turns import Todo, exit_status, shell_status

SOURCE = "copilot"
SESSION_DB = "session.db"
# the todos table's statuses in codememory's words: blocked work is still to do
_STATUS = {"pending": "pending", "in_progress": "in_progress", "done": "completed", "blocked": "pending"}
_MAX_TODOS = 200


def _data(d: dict[str, Any]) -> dict[str, Any]:
    data = d.get("data")
    return data if isinstance(data, dict) else {}


class _Reader:
    def __init__(self, state: ReadState, root: str | None) -> None:
        self.state = state
        self.root = root
        self.builders: list[TurnBuilder] = []

    @property
    def current(self) -> TurnBuilder | None:
        return self.builders[-1] if self.builders else None

    def line(self, line: Line) -> None:
        d = line.data
        kind, data = d.get("type"), _data(d)
        when = iso(d.get("timestamp"))
        if when:
            self.state.updated_at = when
            self.state.created_at = self.state.created_at or when
        if kind == "session.start" or kind == "session.resume":
            self.start(data)
        elif kind == "user.message":
            self.user(line, data, when)
        elif data.get("parentToolCallId"):
            return  # a sub-agent's step, reported to the main agent as its tool's result
        elif kind == "assistant.message":
            self.assistant(line, data, when)
        elif kind == "tool.execution_complete":
            self.result(data, when)
        elif kind in ("abort", "session.error") and self.current is not None:
            self.current.error = str(data.get("message") or data.get("reason") or kind)[:300]
            self.current.done = True
            self.current.touch(when)

    def start(self, data: dict[str, Any]) -> None:
        if isinstance(data.get("sessionId"), str) and not self.state.session_id:
            self.state.session_id = data["sessionId"]
        context = data.get("context")
        cwd = context.get("cwd") if isinstance(context, dict) else None
        if isinstance(cwd, str) and cwd:
            self.state.cwd = cwd
        started = iso(data.get("startTime"))
        if started and not self.state.created_at:
            self.state.created_at = started

    def user(self, line: Line, data: dict[str, Any], when: str | None) -> None:
        content = data.get("content")
        text = strip_injected(content) if isinstance(content, str) else ""
        if not text:
            return
        turn_id = str(data.get("messageId") or line.data.get("id") or f"offset-{line.offset}")
        interaction = data.get("interactionId") if isinstance(data.get("interactionId"), str) else None
        builder = TurnBuilder(turn_id, line.offset, when, prompt_id=interaction)
        builder.user_texts.append(text)
        builder.touch(when)
        self.builders.append(builder)

    def assistant(self, line: Line, data: dict[str, Any], when: str | None) -> None:
        turn = self.current
        if turn is None:
            return  # the answer to a prompt already captured
        turn.steps.add(str(data.get("messageId") or line.offset))
        content = data.get("content")
        text = strip_injected(content) if isinstance(content, str) else ""
        if text:
            turn.texts.append(text)
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, dict):
                continue
            call_id = str(request.get("toolCallId") or f"call-{len(turn.calls)}")
            raw = request.get("arguments")
            args: dict[str, Any] = raw if isinstance(raw, dict) else {}
            title = request.get("intentionSummary")
            title = title.splitlines()[0][:200] if isinstance(title, str) and title else None
            turn.calls[call_id] = Call(str(request.get("name") or "?"), call_id, args, title=title)
        turn.done = bool(text) and not requests
        turn.touch(when)

    def result(self, data: dict[str, Any], when: str | None) -> None:
        turn = self.current
        call = turn.calls.get(str(data.get("toolCallId") or "")) if turn is not None else None
        if turn is None or call is None:
            return
        result = data.get("result")
        call.output = output_text(result.get("content")) if isinstance(result, dict) else ""
        error = data.get("error")
        if data.get("success") is False or error:
            call.status = "error"
            message = error.get("message") if isinstance(error, dict) else error
            call.error = str(message)[:300] if message else (call.output.splitlines() or ["failed"])[0][:300]
        else:
            call.status = "completed"
            shell = data.get("shellExecution")
            call.exit_code = exit_status(shell.get("exitCode")) if isinstance(shell, dict) else None
            call.status = shell_status("completed", call.exit_code)
            edits = data.get("fileEdits")
            for edit in edits if isinstance(edits, list) else []:
                if isinstance(edit, dict) and isinstance(edit.get("path"), str):
                    turn.add_file(edit["path"], self.state.cwd, self.root)
        turn.touch(when)


def session_todos(path: Path) -> list[Todo]:
    """The todo list the agent kept with its `sql` tool: the `todos` table of the session's `session.db`, in the
    order they were added ([] when there is none or it cannot be read). Read only, never written."""
    db = path.parent / SESSION_DB
    if not db.is_file():
        return []
    try:
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            rows = conn.execute(
                "SELECT title, description, status FROM todos ORDER BY created_at, rowid LIMIT ?", (_MAX_TODOS,)
            ).fetchall()
    except sqlite3.Error:
        return []
    out: list[Todo] = []
    for title, description, status in rows:
        if not isinstance(title, str) or not title.strip():
            continue
        content = title.strip()
        if isinstance(description, str) and description.strip():
            content = f"{content}: {description.strip()}"
        out.append(Todo(content, _STATUS.get(str(status), "pending"), "medium", len(out)))
    return out


def is_copilot_line(line: dict[str, Any]) -> bool:
    kind = line.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(line.get("data"), dict)


def first_cwd(path: Path, lines: list[dict[str, Any]]) -> str | None:
    """The working directory its `session.start` line names."""
    for line in lines:
        if line.get("type") in ("session.start", "session.resume"):
            context = _data(line).get("context")
            cwd = context.get("cwd") if isinstance(context, dict) else None
            if isinstance(cwd, str) and cwd:
                return cwd
    return None


FORMAT = TranscriptFormat(
    SOURCE, _Reader, lambda path: path.parent.name, sniff=is_copilot_line, cwd=first_cwd, todos=session_todos
)
