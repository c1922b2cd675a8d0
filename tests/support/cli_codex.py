"""Codex CLI (npm `@openai/codex`, pinned in tests/clis) against a scripted Responses API (support.scripted_responses).

Codex reaches a custom model through a `[model_providers.<id>]` table in `$CODEX_HOME/config.toml` with `base_url`
and `wire_api = "responses"` (the one value 0.171 accepts; "chat" stops it at startup), selected by `model_provider`
and keyed by the variable `env_key` names. This adapter keeps its own block at the top of that file (root keys
come before tables), below which `codememory init` writes its MCP server: the provider, the model, no update
check, `update_plan` turned on (0.171 offers its plan tool only when `[tools.update_plan] enabled = true`), and
each project it ran in marked trusted, as the TUI does when the user trusts a folder (Codex loads a project's
`.codex/hooks.json` only then). `codex exec --dangerously-bypass-hook-trust` runs those hooks without the TUI's
review of each one. The model name is one Codex has no metadata for, so it says so and uses its defaults (no
`apply_patch` tool: patches go through its shell tool, which it intercepts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.agent_cli import RUN_TIMEOUT, AgentCli, CliRun, require
from support.scripted_llm import Reply, ToolCallSpec
from support.scripted_responses import Script, ScriptedResponses, function_outputs, input_text

START, END = "# >>> scripted model (tests)", "# <<< scripted model (tests)"
MODEL = "scripted-model"
_SESSION_RE = re.compile(r"^session id: (\S+)$", re.MULTILINE)


class Codex(AgentCli):
    key = "codex"
    binary = "codex"

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.trusted: list[Path] = []

    @property
    def codex_home(self) -> Path:
        return Path(self.env["CODEX_HOME"])

    def mcp(self, tool: str) -> str:
        """Codex offers an MCP server's tools in a namespace, `mcp__codememory`, under their own names; the scripted
        server sends a call named so as that namespace and name."""
        super().mcp(tool)  # offered at all
        return f"mcp__codememory__{tool}"

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        body = "".join(f"+{line}\n" for line in content.splitlines())
        patch = f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\nEOF\n"
        return ToolCallSpec("exec_command", {"cmd": patch})

    def shell(self, command: str) -> ToolCallSpec:
        return ToolCallSpec("exec_command", {"cmd": command})

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        return [ToolCallSpec("update_plan", {"plan": [{"step": text, "status": status} for text, status in items]})]

    def offered(self, body: dict[str, Any]) -> set[str]:
        names: set[str] = set()
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace":
                names |= {f"{tool.get('name')}__{inner.get('name')}" for inner in tool.get("tools") or []}
            elif tool.get("name"):
                names.add(str(tool["name"]))
        return names

    def configure(self, base_url: str, project: Path) -> None:
        if project not in self.trusted:
            self.trusted.append(project)
        trust = "".join(f'[projects.{json.dumps(str(p))}]\ntrust_level = "trusted"\n' for p in self.trusted)
        block = (
            f"{START}\n"
            f'model = "{MODEL}"\nmodel_provider = "scripted"\ncheck_for_update_on_startup = false\n'
            f'[model_providers.scripted]\nname = "Scripted"\nbase_url = {json.dumps(base_url)}\n'
            f'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
            f"[tools.update_plan]\nenabled = true\n{trust}{END}\n"
        )
        config = self.codex_home / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        text = config.read_text(encoding="utf-8") if config.exists() else ""
        if START in text:
            text = text[: text.index(START)] + text[text.index(END) + len(END) + 1 :]
        config.write_text(block + text, encoding="utf-8")

    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        codex = require(self.binary)
        with ScriptedResponses(Script(replies)) as api:
            self.configure(api.base_url, project)
            args = [str(codex), "exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"]
            args += ["resume", resume, prompt] if resume else [prompt]
            done = self.process(args, project, {**self.env, "SCRIPTED_API_KEY": "scripted"}, timeout)
            requests = api.conversation_requests()
            other = list(api.other_requests)
        found = _SESSION_RE.search(done.stderr)
        session = found.group(1) if found else None
        rollouts = sorted(self.codex_home.glob(f"sessions/*/*/*/rollout-*-{session}.jsonl")) if session else []
        return CliRun(
            self.key,
            done.returncode,
            done.stdout,
            done.stderr,
            requests,
            [input_text(r) for r in requests],
            session,
            rollouts[-1] if rollouts else None,
            function_outputs(requests),
            other,
        )
