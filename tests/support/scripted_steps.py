"""Scripted agent steps served to a real coding-agent CLI through a scripted model server
(support.scripted_llm for OpenCode, support.scripted_anthropic for Claude Code), one step per model call.

A step is a dict: `{"tool_calls": [{"tool": "read", "args": {...}}], ...}` or `{"answer": "text", ...}`
(the format of benchmarks/data/agent_view/steps.json; string arguments may hold `{root}`, the project's path).
Tool names are OpenCode's (read, edit, bash, memory_search, …): `resolve` maps each to the tool the client
really offers (the plugin's `memory_search`, the MCP server's `codememory_memory_search` or
`mcp__codememory__memory_search`), so a script runs whichever tool set an assistant gets; a step none of whose
tools is offered is skipped (`Steps.skipped`).

    steps = Steps(is_title_request, opencode_reply(project))
    with ScriptedLLM(lambda body: steps(body) or Reply("ok")) as llm:
        steps.load(turn["steps"])  # then one `opencode run` for the turn
        steps.calls  # [{"step": step or None, "body": request}], in order
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support import scripted_anthropic as anthropic
from support.scripted_llm import Reply, ToolCallSpec

# Claude Code's tools for the scripts' OpenCode tools, and their argument names.
CLAUDE_TOOLS = {"read": "Read", "edit": "Edit", "bash": "Bash", "write": "Write", "grep": "Grep"}
CLAUDE_ARGS = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string"}


class Steps:
    """Serves one turn's scripted steps, one per model call, and remembers which call was which step.
    `reply` turns a step into the client's reply, or None when the client offers none of its tools (the
    step is then skipped)."""

    def __init__(
        self, is_side: Callable[[dict[str, Any]], bool], reply: Callable[[dict[str, Any], dict[str, Any]], Any]
    ) -> None:
        self.is_side, self.reply = is_side, reply
        self.queue: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []  # {"step": step, or None past the script, "body": request}
        self.skipped: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def load(self, steps: list[dict[str, Any]]) -> None:
        with self._lock:
            self.queue = list(steps)

    def leftover(self) -> list[dict[str, Any]]:
        with self._lock:
            left, self.queue = self.queue, []
            return left

    def __call__(self, body: dict[str, Any]) -> Any:
        if self.is_side(body):
            return None
        with self._lock:
            while self.queue:
                step = self.queue.pop(0)
                answer = self.reply(step, body)
                if answer is not None:
                    self.calls.append({"step": step, "body": body})
                    return answer
                self.skipped.append(step)
            self.calls.append({"step": None, "body": body})  # more calls than the script has steps
            return None


def dump(path: Path, calls: list[dict[str, Any]]) -> None:
    """Every scripted call's request body, for a look at what the model got (not in the results file)."""
    with path.open("w", encoding="utf-8") as out:
        for call in calls:
            at = call["step"]["at"] if call["step"] else None
            out.write(json.dumps({"at": at, "body": call["body"]}, ensure_ascii=False) + "\n")


def resolve(tool: str, offered: set[str]) -> str | None:
    """The offered tool for a scripted tool name: itself, else `<server>_<name>` / `mcp__<server>__<name>`,
    else for a `memory_<op>` one of codememory's tools named `…_<op>` (a renamed tool set)."""
    if tool in offered:
        return tool
    found = sorted((n for n in offered if n.endswith("_" + tool)), key=len)
    if not found and tool.startswith("memory_"):
        op = tool.removeprefix("memory_")
        found = sorted((n for n in offered if "memory" in n and n.endswith("_" + op)), key=len)
    return found[0] if found else None


def fill(args: dict[str, Any], root: Path) -> dict[str, Any]:
    return {k: v.replace("{root}", str(root)) if isinstance(v, str) else v for k, v in args.items()}


def opencode_reply(root: Path) -> Callable[[dict[str, Any], dict[str, Any]], Reply | None]:
    def reply(step: dict[str, Any], body: dict[str, Any]) -> Reply | None:
        if "answer" in step:
            return Reply(step["answer"])
        offered = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}
        calls = [
            ToolCallSpec(name, fill(c["args"], root))
            for c in step["tool_calls"]
            if (name := resolve(c["tool"], offered)) is not None
        ]
        return Reply(tool_calls=calls) if calls else None

    return reply


def claude_reply(root: Path, servers: set[str]) -> Callable[[dict[str, Any], dict[str, Any]], anthropic.Reply | None]:
    def name_for(tool: str, offered: set[str]) -> str | None:
        if tool in CLAUDE_TOOLS:
            return CLAUDE_TOOLS[tool]
        # MCP tools are deferred (not listed in `tools`) but callable by name
        return resolve(tool, offered) or (f"mcp__codememory__{tool}" if "codememory" in servers else None)

    def reply(step: dict[str, Any], body: dict[str, Any]) -> anthropic.Reply | None:
        if "answer" in step:
            return anthropic.Reply(step["answer"])
        offered = {str(t.get("name")) for t in body.get("tools") or []}
        uses = [
            anthropic.ToolUse(name, {CLAUDE_ARGS.get(k, k): v for k, v in fill(c["args"], root).items()})
            for c in step["tool_calls"]
            if (name := name_for(c["tool"], offered)) is not None
        ]
        return anthropic.Reply(tool_uses=uses) if uses else None

    return reply
