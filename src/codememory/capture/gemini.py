"""Read a Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, the hooks' `transcript_path`)
into turns. As written by Gemini CLI 0.61.0 (tests/fixtures/transcripts; its chatRecordingService):

- the first line is the session's metadata: `sessionId`, `projectHash`, `startTime`, `kind` ("main" | "subagent");
- a message is `{"id", "timestamp", "type": "user" | "gemini" | "info" | "error" | "warning", "content"}`; a `gemini`
  message may be written again under the same id, with its `toolCalls` added (`{id, name, args, status: "success" |
  "error" | "cancelled", result: [{functionResponse: {response: {output | error}}}]}`): the last version counts;
- a `user` message whose content is `functionResponse` parts hands tool results back to the model (the results are
  in the `gemini` message's `toolCalls` already); other `user` messages are prompts. The first one, `<session_context>`,
  is Gemini's own setup, not a prompt; a prompt carries the hooks' context in `<hook_context>` blocks, which are cut;
- `{"$set": {...}}` updates the metadata (`lastUpdated`, `summary`; `messages` replaces them all: read as messages);
  `{"$rewindTo": id}` drops that message and everything after it.

The project a session ran in is in `<project>/.project_root`, beside the `chats` folder. A turn is finished when its
last `gemini` message has text and no tool calls, when the next prompt arrives, or when the session ends. The todo
list is the `write_todos` tool's (`{"todos": [{"description", "status"}]}`), read from its calls by extraction.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from codememory.capture.codex import shell_written
from codememory.capture.jsonl_reader import Call, Line, ReadState, TranscriptFormat, TurnBuilder, iso, strip_injected
from codememory.core.lazy_pattern import lazy_pattern

SOURCE = "gemini"
WRITING_TOOLS = frozenset({"write_file", "replace"})  # their args name the file in `file_path`
SHELL_TOOLS = frozenset({"run_shell_command"})
MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
_HOOK_CONTEXT_RE = lazy_pattern(r"<hook_context>.*?(?:</hook_context>|\Z)", re.DOTALL)
_SETUP = ("<session_context>",)
_EXIT_RE = lazy_pattern(r"^Exit Code:\s*(-?\d+)\s*$", re.MULTILINE)
_UUID_PREFIX_RE = lazy_pattern(r"^session-.+-([0-9a-f]{8})$")


def parts_text(content: Any) -> str:
    """The text of a message's content: a string, or the `text` parts of a part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    texts = [p.get("text") for p in content if isinstance(p, dict) and not p.get("thought")]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t)


def prompt_text(content: Any) -> str:
    """What the user typed: the prompt's text without the hooks' `<hook_context>` blocks ("" for tool results and
    Gemini's own session context)."""
    if isinstance(content, list) and any(isinstance(p, dict) and "functionResponse" in p for p in content):
        return ""
    text = _HOOK_CONTEXT_RE.sub("", parts_text(content)).strip()
    if text.startswith(_SETUP):
        return ""
    return strip_injected(text)


def _result(call: dict[str, Any]) -> tuple[str, str | None]:
    """A tool call's output text and its error message, from its `result` parts."""
    result = call.get("result")
    outputs: list[str] = []
    error: str | None = None
    for part in result if isinstance(result, list) else []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if not isinstance(body, dict):
            continue
        if isinstance(body.get("output"), str):
            outputs.append(body["output"])
        if isinstance(body.get("error"), str) and body["error"]:
            error = body["error"]
    if not outputs and isinstance(call.get("resultDisplay"), str):
        outputs.append(call["resultDisplay"])
    return "\n".join(outputs), error


class _Reader:
    def __init__(self, state: ReadState, root: str | None) -> None:
        self.state = state
        self.root = root
        self.builders: list[TurnBuilder] = []
        self.texts: dict[str, dict[str, str]] = {}  # turn id -> its gemini messages' texts, by message id
        self.prompts: set[str] = set()

    @property
    def current(self) -> TurnBuilder | None:
        return self.builders[-1] if self.builders else None

    def line(self, line: Line) -> None:
        d = line.data
        if isinstance(d.get("$rewindTo"), str):
            self.rewind(d["$rewindTo"])
        elif isinstance(d.get("$set"), dict):
            self.metadata(d["$set"])
            messages = d["$set"].get("messages")
            for message in messages if isinstance(messages, list) else []:
                if isinstance(message, dict):
                    self.message(line, message)
        elif d.get("type") in MESSAGE_TYPES and isinstance(d.get("id"), str):
            self.message(line, d)
        elif isinstance(d.get("sessionId"), str):
            self.metadata(d)

    def metadata(self, d: dict[str, Any]) -> None:
        if isinstance(d.get("sessionId"), str) and not self.state.session_id:
            self.state.session_id = d["sessionId"]
        started = iso(d.get("startTime"))
        if started and not self.state.created_at:
            self.state.created_at = started
        updated = iso(d.get("lastUpdated"))
        if updated:
            self.state.updated_at = updated
        if isinstance(d.get("summary"), str) and d["summary"].strip():
            self.state.title = d["summary"].strip()[:200]

    def message(self, line: Line, d: dict[str, Any]) -> None:
        when = iso(d.get("timestamp"))
        if when:
            self.state.updated_at = max(self.state.updated_at or when, when)
            self.state.created_at = self.state.created_at or when
        kind, message_id = d.get("type"), str(d.get("id"))
        if kind == "user":
            self.user(line, message_id, d.get("content"), when)
            return
        turn = self.current
        if turn is None:
            return  # the answer to a prompt already captured
        if kind == "gemini":
            self.gemini(turn, message_id, d, when)
        elif kind == "error":
            turn.error = parts_text(d.get("content"))[:300] or "error"
            turn.done = True
            turn.touch(when)

    def user(self, line: Line, message_id: str, content: Any, when: str | None) -> None:
        text = prompt_text(content)
        if not text or message_id in self.prompts:
            return
        self.prompts.add(message_id)
        builder = TurnBuilder(message_id, line.offset, when, prompt_id=message_id)
        builder.user_texts.append(text)
        builder.touch(when)
        self.builders.append(builder)

    def gemini(self, turn: TurnBuilder, message_id: str, d: dict[str, Any], when: str | None) -> None:
        turn.steps.add(message_id)
        texts = self.texts.setdefault(turn.turn_id, {})
        texts[message_id] = strip_injected(parts_text(d.get("content")))  # written again: its last version counts
        turn.texts[:] = [t for t in texts.values() if t]
        calls = d.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                self.call(turn, call)
        turn.done = bool(texts[message_id]) and not calls
        turn.touch(when)

    def call(self, turn: TurnBuilder, d: dict[str, Any]) -> None:
        name = str(d.get("name") or "?")
        call_id = str(d.get("id") or f"{name}-{len(turn.calls)}")
        raw = d.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        description = d.get("description")
        title = description.splitlines()[0][:200] if isinstance(description, str) and description else None
        call = turn.calls.get(call_id) or Call(name, call_id, args, title=title)
        turn.calls[call_id] = call
        status = d.get("status")
        if status not in ("success", "error", "cancelled"):
            return  # still running
        call.output, call.error = _result(d)
        if status == "success":
            m = _EXIT_RE.findall(call.output) if name in SHELL_TOOLS else []
            call.exit_code = int(m[-1]) if m else None
            call.status = "error" if call.exit_code not in (None, 0) else "completed"
        else:
            call.status = "error"
            call.error = call.error or ("cancelled" if status == "cancelled" else "failed")
        if call.status != "completed":
            return
        if name in WRITING_TOOLS and isinstance(args.get("file_path"), str):
            turn.add_file(args["file_path"], self.state.cwd, self.root)
        elif name in SHELL_TOOLS and isinstance(args.get("command"), str):
            for path in shell_written(args["command"]):
                turn.add_file(path, self.state.cwd, self.root)

    def rewind(self, message_id: str) -> None:
        """Drop the message `message_id` and everything after it (what this read holds of them)."""
        for index, builder in enumerate(self.builders):
            if builder.turn_id == message_id:
                del self.builders[index:]
                return
            if message_id in builder.steps:
                del self.builders[index + 1 :]
                builder.done = False
                return


def session_id_from_name(path: Path) -> str:
    """The file name holds only the session id's first 8 characters; its first line has the whole id."""
    m = _UUID_PREFIX_RE.match(path.stem)
    return m.group(1) if m else path.stem


def is_gemini_line(line: dict[str, Any]) -> bool:
    if "projectHash" in line or "$set" in line or "$rewindTo" in line:
        return True
    return line.get("type") in MESSAGE_TYPES and "content" in line and "message" not in line and "id" in line


def project_root_file(path: Path) -> str | None:
    """The project folder Gemini CLI recorded for the folder its chats are in (`<project>/.project_root`)."""
    marker = path.parent.parent / ".project_root" if path.parent.name == "chats" else None
    try:
        text = marker.read_text(encoding="utf-8").strip() if marker is not None else ""
    except (OSError, UnicodeDecodeError):
        return None
    return text if text and "\n" not in text else None


def first_cwd(path: Path, lines: list[dict[str, Any]]) -> str | None:
    return project_root_file(path)


FORMAT = TranscriptFormat(SOURCE, _Reader, session_id_from_name, sniff=is_gemini_line, cwd=first_cwd)
