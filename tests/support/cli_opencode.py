"""OpenCode (npm `opencode-ai`, pinned in integrations/opencode) against a scripted OpenAI chat API
(support.scripted_llm), through support.opencode's provider config. codememory reaches it through its plugin, whose
tools the model sees under their own names; the plugin talks to the codememory daemon, so run OpenCode inside
`with agent.daemon():` (without one its tools answer that the daemon is not running and nothing is injected)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.agent_cli import REPO, RUN_TIMEOUT, AgentCli, CliRun, require
from support.opencode import OpenCodeHome
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, request_text, tool_outputs


class OpenCode(AgentCli):
    key = "opencode"
    binary = "opencode"

    @contextmanager
    def daemon(self) -> Iterator[None]:
        """A codememory daemon for this HOME while the block runs (the plugin finds it through its daemon.json)."""
        from support.daemon import spawn

        running = spawn(self.env)
        try:
            yield
        finally:
            running.terminate()

    def offered(self, body: dict[str, Any]) -> set[str]:
        return {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        return ToolCallSpec("write", {"filePath": str(path), "content": content})

    def shell(self, command: str) -> ToolCallSpec:
        return ToolCallSpec("bash", {"command": command, "description": command[:60]})

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        todos = [{"id": str(i), "content": t, "status": s, "priority": "medium"} for i, (t, s) in enumerate(items)]
        return [ToolCallSpec("todowrite", {"todos": todos})]

    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        require(self.binary, REPO / "integrations" / "opencode")
        with ScriptedLLM(Script(replies)) as llm:
            oc = OpenCodeHome(self.home, llm.base_url)
            env = {**oc.env(), "PATH": self.env["PATH"]}
            done = self.process(oc.args(prompt, session=resume), project, env, timeout)
            requests = llm.conversation_requests()
        found = re.search(r"\bses_[A-Za-z0-9]+\b", done.stdout)
        return CliRun(
            self.key,
            done.returncode,
            done.stdout,
            done.stderr,
            requests,
            [request_text(r) for r in requests],
            found.group(0) if found else None,
            None,  # OpenCode keeps its sessions in its database (oc.db_path), not in a transcript file
            tool_outputs(requests),
        )
