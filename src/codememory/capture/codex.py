"""Read a Codex CLI rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ISO>-<uuid>.jsonl`, the hooks'
`transcript_path`) into turns. Lines are `{"timestamp", "type", "payload"}`; as recorded from Codex
0.169.0 and 0.171.0 (tests/fixtures/transcripts):

- `session_meta`: `payload.id` (the session id) and `payload.cwd`;
- `event_msg` `task_started` / `task_complete` / `turn_aborted` (with `turn_id`) open and close a turn;
  `item_completed` with a `FileChange` item (`changes`: absolute path -> change) or a
  `CommandExecution` item (`status`, `exit_code`) says what a tool call did;
- `response_item` `message` (role `user` / `assistant`; `developer` carries instructions and the
  context our hooks inject, and is skipped), `function_call` / `custom_tool_call` /
  `local_shell_call` and their `*_output` (0.171 puts an MCP tool's server in `namespace`:
  `"namespace": "mcp__codememory", "name": "memory_search"`, read as `mcp__codememory__memory_search`);
- everything else (`turn_context`, `world_state`, `token_usage_record`, reasoning) is skipped.

User messages that Codex writes itself (`<environment_context>`, AGENTS.md instructions, …) are not
prompts. A turn is finished at its `task_complete` (or `turn_aborted`), when the next prompt arrives,
or when a Stop hook names its turn id: Codex runs the Stop hook before it writes `task_complete`.
Rollouts without task events (older Codex) end turns only by the next prompt, the Stop hook or the end
of the session.
"""

from __future__ import annotations

import json
import re
import shlex
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
from codememory.capture.turns import exit_status
from codememory.core.lazy_pattern import lazy_pattern

SOURCE = "codex"
_CODEX_CONTEXT = (
    "<environment_context",
    "<user_instructions",
    "<user_shell_command",
    "<turn_aborted",
    "<instructions",
    "# agents.md instructions",
    "<permissions instructions",
)
_UUID_RE = lazy_pattern(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
PATCH_FILE_RE = lazy_pattern(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_EXIT_RE = lazy_pattern(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
_SHELL_WRITERS = frozenset({"tee", "touch"})


def session_id_from_name(path: Path) -> str:
    """The session uuid at the end of a rollout's file name (the whole stem when there is none)."""
    m = _UUID_RE.search(path.stem)
    return m.group(1) if m else path.stem


def shell_written(command: str) -> list[str]:
    """Files a shell command obviously writes: an apply_patch heredoc's files, `> file` / `>> file`
    redirections, `tee file`, `touch file`. Anything subtler is left to the PostToolUse journal."""
    if "*** Begin Patch" in command:
        return [p.strip() for p in PATCH_FILE_RE.findall(command)]
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return []
    out: list[str] = []
    command_start, writer = True, False
    for i, word in enumerate(words):
        target = words[i + 1] if i + 1 < len(words) else ""
        if word in (">", ">>", "&>", "&>>"):
            if not (i > 0 and words[i - 1] == "2" and word in (">", ">>")):  # stderr goes elsewhere
                out.append(target)
        elif word in ("|", "&&", "||", ";", "&"):
            command_start, writer = True, False
            continue
        elif command_start:
            writer = word in _SHELL_WRITERS
        elif writer and not word.startswith("-") and words[i - 1] not in (">", ">>", "&>", "&>>"):
            out.append(word)
        command_start = False
    return [p for p in dict.fromkeys(out) if p and p != "/dev/null"]


def _message_text(payload: dict[str, Any]) -> str:
    content = payload.get("content")
    if isinstance(content, str):
        return content
    parts = [
        b.get("text")
        for b in content or []
        if isinstance(b, dict) and b.get("type") in ("input_text", "output_text", "text")
    ]
    return "\n\n".join(p for p in parts if isinstance(p, str))


def _prompt(payload: dict[str, Any]) -> str:
    text = _message_text(payload).strip()
    if text.lower().startswith(_CODEX_CONTEXT):
        return ""
    return strip_injected(text)


def _passthrough_turn(payload: dict[str, Any]) -> str | None:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    turn = meta.get("turn_id") if isinstance(meta, dict) else None
    return turn if isinstance(turn, str) and turn else None


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"arguments": raw}
        return value if isinstance(value, dict) else {"arguments": raw}
    return {}


def _command(args: dict[str, Any]) -> str:
    """The shell command of a call's arguments (`cmd`, `command` as text or argv)."""
    value = args.get("cmd", args.get("command"))
    if isinstance(value, list):
        words = [str(w) for w in value]
        if len(words) >= 3 and words[0].endswith("sh") and words[1] in ("-c", "-lc"):
            return words[2]
        return shlex.join(words)
    return value if isinstance(value, str) else ""


class _Reader:
    def __init__(self, state: ReadState, root: str | None) -> None:
        self.state = state
        self.root = root
        self.builders: list[TurnBuilder] = []
        self.open_task: str | None = None  # the turn id of a task_started not yet closed

    @property
    def current(self) -> TurnBuilder | None:
        return self.builders[-1] if self.builders else None

    def line(self, line: Line) -> None:
        d = line.data
        when = iso(d.get("timestamp"))
        if when:
            self.state.updated_at = when
            self.state.created_at = self.state.created_at or when
        payload = d.get("payload")
        if not isinstance(payload, dict):
            return
        kind, sub = d.get("type"), payload.get("type")
        if kind == "session_meta":
            self.meta(payload)
        elif kind == "event_msg":
            self.event(line, sub, payload, when)
        elif kind == "response_item":
            self.item(line, sub, payload, when)

    def meta(self, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("id"), str) and not self.state.session_id:
            self.state.session_id = payload["id"]
        if isinstance(payload.get("cwd"), str):
            self.state.cwd = payload["cwd"]
        created = iso(payload.get("timestamp"))
        if created and not self.state.created_at:
            self.state.created_at = created

    def event(self, line: Line, sub: Any, payload: dict[str, Any], when: str | None) -> None:
        turn_id = payload.get("turn_id") if isinstance(payload.get("turn_id"), str) else None
        if sub == "task_started":
            builder = TurnBuilder(turn_id or f"offset-{line.offset}", line.offset, when, prompt_id=turn_id)
            self.builders.append(builder)
            self.open_task = builder.turn_id
            return
        turn = self.current
        if turn is None or (turn_id and turn.turn_id != turn_id and turn.prompt_id != turn_id):
            return  # an event of a turn already captured
        if sub == "task_complete":
            turn.done = True
            turn.touch(when)
        elif sub == "turn_aborted":
            turn.done = True
            turn.error = f"aborted: {payload.get('reason') or 'interrupted'}"
            turn.touch(when)
        elif sub == "item_completed" and isinstance(payload.get("item"), dict):
            self.completed_item(turn, payload["item"], when)

    def completed_item(self, turn: TurnBuilder, item: dict[str, Any], when: str | None) -> None:
        call = turn.calls.get(str(item.get("id") or ""))
        kind = item.get("type")
        code = exit_status(item.get("exit_code"))
        failed = item.get("status") == "failed" or code not in (None, 0)
        if kind == "FileChange" and not failed:
            changes = item.get("changes")
            for path in changes if isinstance(changes, dict) else {}:
                turn.add_file(str(path), self.state.cwd, self.root)
        if call is not None and kind in ("FileChange", "CommandExecution"):
            if failed:
                call.status, call.exit_code = "error", code if code is not None else call.exit_code
                if call.exit_code is None:
                    call.error = call.error or "failed"
            elif call.status == "pending":
                call.status = "completed"
        turn.touch(when)

    def item(self, line: Line, sub: Any, payload: dict[str, Any], when: str | None) -> None:
        if sub == "message":
            role = payload.get("role")
            if role == "user":
                self.user(line, payload, when)
            elif role == "assistant" and self.current is not None:
                text = strip_injected(_message_text(payload))
                if text:
                    self.current.texts.append(text)
                    self.current.steps.add(str(payload.get("id") or line.offset))
                self.current.touch(when)
            return
        turn = self.current
        if turn is None:
            return
        if sub in ("function_call", "custom_tool_call", "local_shell_call"):
            self.call(turn, sub, payload, line, when)
        elif sub in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self.output(turn, payload)
        turn.touch(when)

    def user(self, line: Line, payload: dict[str, Any], when: str | None) -> None:
        text = _prompt(payload)
        if not text:
            return
        turn = self.current
        task = _passthrough_turn(payload)
        same_task = turn is not None and self.open_task == turn.turn_id and (task is None or task == turn.turn_id)
        if turn is not None and same_task:
            turn.user_texts.append(text)  # the task's prompt, or input the user added while it ran
            turn.started_at = turn.started_at or when
            return
        turn_id = task or str(payload.get("id") or f"offset-{line.offset}")
        builder = TurnBuilder(turn_id, line.offset, when, prompt_id=task)
        builder.user_texts.append(text)
        self.builders.append(builder)
        self.open_task = None

    def call(self, turn: TurnBuilder, sub: Any, payload: dict[str, Any], line: Line, when: str | None) -> None:
        if sub == "custom_tool_call":
            raw = payload.get("input")
            args: dict[str, Any] = {"input": raw} if isinstance(raw, str) else _arguments(raw)
        elif sub == "local_shell_call":
            action = payload.get("action")
            args = {"command": _command(action if isinstance(action, dict) else {})}
        else:
            args = _arguments(payload.get("arguments"))
        name = str(payload.get("name") or ("shell" if sub == "local_shell_call" else "?"))
        namespace = payload.get("namespace")
        if isinstance(namespace, str) and namespace:  # an MCP tool (0.171: "mcp__codememory" + "memory_search")
            name = f"{namespace}__{name}" if not namespace.endswith("_") else namespace + name
        call_id = str(payload.get("call_id") or payload.get("id") or f"call-{line.offset}")
        command = _command(args)
        title = command.splitlines()[0][:200] if command else None
        turn.calls[call_id] = Call(name, call_id, args, title=title, started_at=when)
        turn.steps.add(str(payload.get("id") or call_id))

    def output(self, turn: TurnBuilder, payload: dict[str, Any]) -> None:
        call = turn.calls.get(str(payload.get("call_id") or ""))
        if call is None:
            return
        raw = payload.get("output")
        code: int | None = None
        if isinstance(raw, dict):  # older Codex: {"output": ..., "metadata": {"exit_code": n}}
            meta = raw.get("metadata")
            code = exit_status(meta.get("exit_code")) if isinstance(meta, dict) else None
            raw = raw.get("output", raw)
        text = output_text(raw)
        if code is None:
            parsed = _arguments(text) if text.startswith("{") else {}
            meta = parsed.get("metadata")
            code = exit_status(meta.get("exit_code")) if isinstance(meta, dict) else None
            if code is not None:
                text = output_text(parsed.get("output", text))
        if code is None:
            m = _EXIT_RE.findall(text)
            code = int(m[-1]) if m else None
        call.output = text
        if code is not None:
            call.exit_code = code
        if call.status == "pending":
            call.status = "error" if code not in (None, 0) else "completed"
        if call.status == "completed":
            patch = call.input.get("input") if call.tool == "apply_patch" else _command(call.input)
            for path in shell_written(patch) if isinstance(patch, str) else []:
                turn.add_file(path, self.state.cwd, self.root)


def is_codex_line(line: dict[str, Any]) -> bool:
    kinds = ("session_meta", "response_item", "event_msg", "turn_context")
    return isinstance(line.get("payload"), dict) and line.get("type") in kinds


def first_cwd(path: Path, lines: list[dict[str, Any]]) -> str | None:
    """The working directory of its `session_meta` line (the first)."""
    for line in lines:
        payload = line.get("payload")
        if isinstance(payload, dict) and isinstance(cwd := payload.get("cwd"), str) and cwd:
            return cwd
    return None


FORMAT = TranscriptFormat(SOURCE, _Reader, session_id_from_name, sniff=is_codex_line, cwd=first_cwd)
