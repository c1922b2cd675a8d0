"""Claude Code (npm `@anthropic-ai/claude-code`, pinned in tests/clis) against a scripted Anthropic Messages API
(support.scripted_anthropic), at ANTHROPIC_BASE_URL with any ANTHROPIC_API_KEY. In `-p` mode a tool runs only when
`--allowedTools` names it, the MCP server's as `mcp__codememory__<tool>` (FACTS.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support import scripted_anthropic as anthropic
from support.agent_cli import RUN_TIMEOUT, AgentCli, CliRun, require
from support.scripted_llm import Reply, ToolCallSpec

ALLOWED = ("Bash", "Read", "Write", "Edit", "TaskCreate", "TaskUpdate")


def anthropic_reply(reply: Reply) -> anthropic.Reply:
    uses = [anthropic.ToolUse(call.name, call.arguments) for call in reply.tool_calls]
    return anthropic.Reply(reply.text, tool_uses=uses, usage=reply.usage and _usage(reply.usage), status=reply.status)


def _usage(usage: dict[str, int]) -> dict[str, int]:
    return {"input_tokens": usage.get("prompt_tokens", 1), "output_tokens": usage.get("completion_tokens", 1)}


def tool_results(requests: list[dict[str, object]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for body in requests:
        for message in body.get("messages") or []:  # type: ignore[union-attr]
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[str(block.get("tool_use_id"))] = anthropic.block_text(block.get("content"))
    return out


def request_text(body: dict[str, object]) -> str:
    parts = [anthropic.block_text(body.get("system"))]
    parts += [anthropic.block_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict)]  # type: ignore[union-attr]
    return "\n".join(parts)


class Claude(AgentCli):
    key = "claude"
    binary = "claude"

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        # text -> (task id, status) of the TaskCreate calls scripted so far: one session's (clear it for a new one)
        self.tasks: dict[str, tuple[str, str]] = {}

    def offered(self, body: dict[str, Any]) -> set[str]:
        return {str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)}

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        return ToolCallSpec("Write", {"file_path": str(path), "content": content})

    def shell(self, command: str) -> ToolCallSpec:
        return ToolCallSpec("Bash", {"command": command, "description": command[:60]})

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        """Claude Code 2.1.330 keeps its todo list with TaskCreate / TaskUpdate (tasks numbered 1, 2, … per session)."""
        calls: list[ToolCallSpec] = []
        for text, status in items:
            if text not in self.tasks:
                self.tasks[text] = (str(len(self.tasks) + 1), "pending")
                calls.append(ToolCallSpec("TaskCreate", {"subject": text, "description": text, "activeForm": text}))
            task, now = self.tasks[text]
            if status != now:
                calls.append(ToolCallSpec("TaskUpdate", {"taskId": task, "status": status}))
                self.tasks[text] = (task, status)
        return calls

    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        claude = require(self.binary)
        allowed = [*ALLOWED, *(self.mcp(t) for t in sorted(self.tools()))]
        script = anthropic.Script([anthropic_reply(r) for r in replies])
        with anthropic.ScriptedAnthropic(script) as api:
            env = {**self.env, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "scripted"}
            args = [str(claude), "-p", prompt, "--allowedTools", " ".join(allowed), "--output-format", "json"]
            args += ["--resume", resume] if resume else []
            done = self.process(args, project, env, timeout)
            requests = api.conversation_requests()
            other = list(api.other_requests)
        try:
            session = str(json.loads(done.stdout).get("session_id") or "") or None
        except ValueError:
            session = None
        found = sorted(self.home.glob(f".claude/projects/*/{session}.jsonl")) if session else []
        return CliRun(
            self.key,
            done.returncode,
            done.stdout,
            done.stderr,
            requests,
            [request_text(r) for r in requests],
            session,
            found[0] if found else None,
            tool_results(requests),  # type: ignore[arg-type]
            other,
        )

    def tools(self) -> frozenset[str]:
        from codememory import assistants

        spec = assistants.find(self.key)
        assert spec is not None
        return spec.tools
