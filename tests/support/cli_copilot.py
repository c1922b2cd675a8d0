"""GitHub Copilot CLI (npm `@github/copilot`, pinned in tests/clis) against a scripted OpenAI chat API
(support.scripted_llm).

Copilot CLI takes a model of the user's own (BYOK) from COPILOT_PROVIDER_BASE_URL (`COPILOT_PROVIDER_TYPE` "openai" by
default, `COPILOT_PROVIDER_WIRE_API` "completions" by default), COPILOT_PROVIDER_API_KEY and COPILOT_MODEL, with no
GitHub login; COPILOT_OFFLINE=true turns off everything else it would reach (authentication, telemetry, web tools,
the GitHub MCP server, updates) and requires such a provider (`copilot help environment`). `--trust-folder` trusts
the project for the run (its hooks and MCP servers load only in a trusted folder), `--allow-all` approves every tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.agent_cli import RUN_TIMEOUT, AgentCli, CliRun, require
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, request_text, tool_outputs

MODEL = "gpt-4.1"  # a model Copilot knows: its token limits and tool set come from its catalog
_SESSION_RE = re.compile(r"--resume=([0-9a-f-]{36})")


class Copilot(AgentCli):
    key = "copilot"
    binary = "copilot"

    @property
    def copilot_home(self) -> Path:
        return self.home / ".copilot"

    def offered(self, body: dict[str, Any]) -> set[str]:
        return {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        return ToolCallSpec("create", {"path": str(path), "file_text": content})

    def shell(self, command: str) -> ToolCallSpec:
        return ToolCallSpec("bash", {"command": command, "description": command[:60]})

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        """Copilot keeps its todo list in its session database's `todos` table, written with its `sql` tool."""
        status = {"completed": "done"}

        def quote(text: str) -> str:
            return "'" + text.replace("'", "''") + "'"

        rows = ", ".join(
            f"({quote(f'todo-{i}')}, {quote(text)}, {quote(status.get(s, s))})" for i, (text, s) in enumerate(items)
        )
        query = f"INSERT OR REPLACE INTO todos (id, title, status) VALUES {rows}"
        return [ToolCallSpec("sql", {"description": "Record todos", "query": query})]

    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        copilot = require(self.binary)
        before = set(self.copilot_home.glob("session-state/*/events.jsonl"))
        with ScriptedLLM(Script(replies)) as llm:
            env = {
                **self.env,
                "COPILOT_PROVIDER_BASE_URL": llm.base_url,
                "COPILOT_PROVIDER_API_KEY": "scripted",
                "COPILOT_MODEL": MODEL,
            }
            args = [str(copilot), "-p", prompt, "--allow-all", "--no-auto-update"]
            # --trust-folder is refused with --resume; COPILOT_ALLOW_ALL=true (exactly "true") trusts the folder too
            args += [f"--resume={resume}"] if resume else ["--trust-folder"]
            env |= {"COPILOT_ALLOW_ALL": "true"} if resume else {}
            done = self.process(args, project, env, timeout)
            requests = llm.conversation_requests()
        found = _SESSION_RE.search(done.stdout + done.stderr)
        new = [p for p in self.copilot_home.glob("session-state/*/events.jsonl") if p not in before]
        session = found.group(1) if found else (new[0].parent.name if len(new) == 1 else resume)
        transcript = self.copilot_home / "session-state" / session / "events.jsonl" if session else None
        return CliRun(
            self.key,
            done.returncode,
            done.stdout,
            done.stderr,
            requests,
            [request_text(r) for r in requests],
            session,
            transcript if transcript is not None and transcript.exists() else None,
            tool_outputs(requests),
        )
