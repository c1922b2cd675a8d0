"""Gemini CLI (npm `@google/gemini-cli`, pinned in tests/clis) against a scripted Gemini API (support.scripted_gemini).

Gemini CLI reaches its model through `@google/genai`; with `gemini-api-key` authentication (GEMINI_API_KEY, and
`security.auth.selectedType` in the user's settings) GOOGLE_GEMINI_BASE_URL replaces the API's address, and plain
http is allowed for localhost (its configuration reference). The project's `.gemini/settings.json` (hooks, MCP
servers) loads only in a trusted folder: GEMINI_CLI_TRUST_WORKSPACE=true trusts it for one headless run. `--yolo`
approves every tool call; `-m` names a model, so no router asks the model which one to use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.agent_cli import RUN_TIMEOUT, AgentCli, CliRun, require
from support.scripted_gemini import Script, ScriptedGemini, contents_text, function_responses
from support.scripted_llm import Reply, ToolCallSpec

MODEL = "gemini-2.5-flash"


class Gemini(AgentCli):
    key = "gemini"
    binary = "gemini"

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        if not settings.exists():
            user = {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                "privacy": {"usageStatisticsEnabled": False},
            }
            settings.write_text(json.dumps(user, indent=2), encoding="utf-8")

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        return ToolCallSpec("write_file", {"file_path": str(path), "content": content})

    def shell(self, command: str) -> ToolCallSpec:
        return ToolCallSpec("run_shell_command", {"command": command})

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        return [ToolCallSpec("write_todos", {"todos": [{"description": t, "status": s} for t, s in items]})]

    def offered(self, body: dict[str, Any]) -> set[str]:
        return {str(d.get("name")) for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []}

    def transcripts(self) -> list[Path]:
        return sorted(self.home.glob(".gemini/tmp/*/chats/session-*.jsonl"), key=lambda p: p.stat().st_mtime)

    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        gemini = require(self.binary)
        before = set(self.transcripts())
        with ScriptedGemini(Script(replies)) as api:
            env = {
                **self.env,
                "GEMINI_API_KEY": "scripted",
                "GOOGLE_GEMINI_BASE_URL": api.base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
            args = [str(gemini), "-p", prompt, "--yolo", "-m", MODEL, *(["--resume", resume] if resume else [])]
            done = self.process(args, project, env, timeout)
            requests = api.conversation_requests()
            other = list(api.other_requests)
        new = [p for p in self.transcripts() if p not in before] or (self.transcripts()[-1:] if resume else [])
        transcript = new[-1] if new else None
        session = None
        if transcript is not None:
            first = transcript.read_text(encoding="utf-8").split("\n", 1)[0]
            session = json.loads(first).get("sessionId") if first.startswith("{") else None
        return CliRun(
            self.key,
            done.returncode,
            done.stdout,
            done.stderr,
            requests,
            [contents_text(r) for r in requests],
            session,
            transcript,
            {k: json.dumps(v.get("response"), ensure_ascii=False) for k, v in function_responses(requests).items()},
            other,
        )
