"""Read a Claude Code transcript (`~/.claude/projects/<cwd with / as ->/<session id>.jsonl`, the hooks'
`transcript_path`) into turns. Shapes as recorded from Claude Code 2.1.197 (tests/fixtures/transcripts):

- `{"type": "user", "uuid", "promptId", "timestamp", "cwd", "sessionId", "message": {"content": str |
  [blocks]}}`: a prompt, or (blocks of type `tool_result`, with `is_error`) the results of tool calls;
- `{"type": "assistant", "message": {"id", "content": [text | thinking | tool_use {id, name, input}],
  "stop_reason"}}`: one line per content block, lines of one API response share `message.id`;
- everything else is bookkeeping and is skipped: `attachment` (hook output, including the context our
  own hooks inject, skill and agent listings), `system`, `queue-operation`, `last-prompt`, `mode`,
  `file-history-snapshot`; `summary` / `custom-title` lines name the session.

Also skipped: sub-agent lines (`isSidechain`), meta lines (`isMeta`: slash-command expansions, caveats),
compaction summaries (`isCompactSummary`), local command output, and injected blocks inside a prompt
(`<system-reminder>` and the like). "[Request interrupted by user…]" ends the turn, marked as stopped.

A turn is finished when its last assistant message ended with a stop reason other than `tool_use` and
every tool call has its result, when the next prompt arrives, or when a Stop hook names its prompt.
"""

from __future__ import annotations

import re
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
from codememory.core.lazy_pattern import lazy_pattern

SOURCE = "claude-code"
# tools whose input names a file they write
WRITING_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
INTERRUPTED = "[Request interrupted by user"
_SKIP_FLAGS = ("isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")
_LOCAL_OUTPUT = (
    "<local-command-stdout",
    "<local-command-stderr",
    "<local-command-caveat",
    "<bash-stdout",
    "<bash-stderr",
)
_COMMAND_RE = lazy_pattern(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_ARGS_RE = lazy_pattern(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_EXIT_RE = lazy_pattern(r"(?:Error: )?Exit code (-?\d+)")
_BASH_INPUT_RE = lazy_pattern(r"<bash-input>\s*(.*?)\s*</bash-input>", re.DOTALL)


def prompt_text(content: Any) -> str:
    """The words the user typed in a prompt line's content ("" for injected or meta content)."""
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n\n".join(p for p in parts if isinstance(p, str))
    if not isinstance(content, str):
        return ""
    text = content.strip()
    if text.startswith(_LOCAL_OUTPUT):
        return ""
    command = _COMMAND_RE.search(text)
    if command:  # a slash command: what the user typed is the command and its arguments
        args = _ARGS_RE.search(text)
        return " ".join(p for p in (command.group(1), args.group(1) if args else "") if p)
    bash = _BASH_INPUT_RE.search(text)
    if bash:
        return "! " + bash.group(1)
    return strip_injected(text)


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
        when = iso(d.get("timestamp"))
        if when:
            self.state.updated_at = when
            self.state.created_at = self.state.created_at or when
        if isinstance(d.get("sessionId"), str) and not self.state.session_id:
            self.state.session_id = d["sessionId"]
        if isinstance(d.get("cwd"), str) and d["cwd"]:
            self.state.cwd = d["cwd"]
        kind = d.get("type")
        if kind in ("summary", "custom-title", "ai-title"):
            title = d.get("summary") or d.get("customTitle") or d.get("title")
            if isinstance(title, str) and title.strip():
                self.state.title = title.strip()[:200]
            return
        if kind not in ("user", "assistant") or any(d.get(flag) for flag in _SKIP_FLAGS):
            return
        message = d.get("message")
        if not isinstance(message, dict):
            return
        if kind == "user":
            self.user(line, message.get("content"), when)
        else:
            self.assistant(d, message, when)

    def user(self, line: Line, content: Any, when: str | None) -> None:
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        turn = self.current
        if results:
            for block in results:
                self.result(block, when)
            return
        text = prompt_text(content)
        if text.startswith(INTERRUPTED):
            if turn is not None:
                turn.error, turn.done = "interrupted by the user", True
                for call in turn.calls.values():
                    if call.status == "pending":
                        call.status, call.error = "error", "interrupted by the user"
                turn.touch(when)
            return
        if not text:
            return
        d = line.data
        turn_id = d.get("uuid") or d.get("promptId") or f"offset-{line.offset}"
        prompt_id = d.get("promptId") if isinstance(d.get("promptId"), str) else None
        builder = TurnBuilder(str(turn_id), line.offset, when, prompt_id=prompt_id)
        builder.user_texts.append(text)
        builder.touch(when)
        self.builders.append(builder)

    def result(self, block: dict[str, Any], when: str | None) -> None:
        turn = self.current
        if turn is None:
            return  # the result of a call in a turn already captured
        call = turn.calls.get(str(block.get("tool_use_id") or ""))
        if call is None:
            return
        text = output_text(block.get("content"))
        call.output = text
        if block.get("is_error"):
            call.status = "error"
            lines = text.strip().splitlines()
            m = _EXIT_RE.fullmatch(lines[0].strip()) if lines else None
            if m:  # Bash: "Exit code 3" then the command's output (kept as the call's output)
                call.exit_code = int(m.group(1))
            else:
                call.error = lines[0][:300] if lines else "error"
        else:
            call.status = "completed"
            key = WRITING_TOOLS.get(call.tool)
            path = call.input.get(key) if key else None
            if isinstance(path, str):
                turn.add_file(path, self.state.cwd, self.root)
        turn.touch(when)

    def assistant(self, d: dict[str, Any], message: dict[str, Any], when: str | None) -> None:
        turn = self.current
        if turn is None:
            return  # the answer to a prompt already captured
        if isinstance(message.get("id"), str):
            turn.steps.add(message["id"])
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                text = strip_injected(block["text"])
                if text:
                    turn.add_text(text)
            elif block.get("type") == "tool_use":
                raw = block.get("input")
                args = raw if isinstance(raw, dict) else {}
                call_id = str(block.get("id") or f"call-{len(turn.calls)}")
                title = args.get("description") if isinstance(args.get("description"), str) else None
                turn.calls[call_id] = Call(str(block.get("name") or "?"), call_id, args, title=title, started_at=when)
        stop = message.get("stop_reason")
        if d.get("isApiErrorMessage"):
            turn.error = turn.texts[-1] if turn.texts else "API error"
            turn.done = True
        elif isinstance(stop, str):
            turn.done = stop != "tool_use"
        turn.touch(when)


def is_claude_line(line: dict[str, Any]) -> bool:
    return "sessionId" in line or (line.get("type") in ("user", "assistant") and isinstance(line.get("message"), dict))


def first_cwd(path: Path, lines: list[dict[str, Any]]) -> str | None:
    """The working directory its first lines name (every prompt line carries `cwd`)."""
    return next((cwd for line in lines if isinstance(cwd := line.get("cwd"), str) and cwd), None)


FORMAT = TranscriptFormat(SOURCE, _Reader, lambda path: path.stem, sniff=is_claude_line, cwd=first_cwd)
