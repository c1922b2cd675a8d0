"""`codex exec` as the extraction model (`[llm] provider = "codex"`), checked on Codex CLI 0.171.0.

Isolation: a temporary CODEX_HOME whose config.toml keeps only how the user reaches a model (the model, its
provider and the providers' tables, reasoning settings, profiles of those, how they log in) and a copy of their
auth.json: none of their MCP servers (codememory's included), hooks, trusted projects, plugins or notifications.
On top: hooks, plugins, apps, memories and the agent's tools switched off in that config (`[features]`), a
read-only sandbox with no approvals, `--ephemeral` (no session file that capture could later import; Codex's own
state stays in the temporary home), a temporary working folder that is no project.

The prompt's shape: our system prompt replaces Codex's instructions (`model_instructions_file`); Codex adds its
permissions and environment blocks and a short tool list. Our user prompt goes on stdin. `--json` prints Codex's
events: the agent's message is the answer and `turn.completed` carries the usage, which the budget is charged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from codememory.assistants.codex import HOME as CODEX_HOME
from codememory.errors import InvalidInput, LLMError
from codememory.extract.agent_cli import AgentCLI, Answer, int_or_none
from codememory.extract.provider import error_snippet

# The keys of the user's config.toml (and of each of its profiles) that say which model answers and how it is
# reached; everything else stays behind.
_KEPT_KEYS = frozenset(
    {
        "model",
        "model_provider",
        "model_providers",
        "model_reasoning_effort",
        "model_reasoning_summary",
        "model_verbosity",
        "model_context_window",
        "model_supports_reasoning_summaries",
        "service_tier",
        "profile",
        "profiles",
        "oss_provider",
        "openai_base_url",
        "chatgpt_base_url",
        "forced_login_method",
        "forced_chatgpt_workspace_id",
        "preferred_auth_method",
        "cli_auth_credentials_store",
    }
)
# Codex features that would run or offer anything beyond one answer (unknown ones are ignored by Codex, with a
# warning event, so a later version that drops one still runs).
_FEATURES_OFF = (
    "hooks",
    "plugins",
    "apps",
    "memories",
    "multi_agent",
    "goals",
    "shell_tool",
    "image_generation",
    "skill_search",
    "tool_suggest",
    "sleep_tool",
    "browser_use",
    "computer_use",
)
_DROPPED_ENV = ("CODEX_HOME", "CODEX_SANDBOX", "CODEX_THREAD_ID")


def user_codex_config() -> dict[str, Any]:
    """The user's Codex config ($CODEX_HOME/config.toml), {} when there is none."""
    path = CODEX_HOME.path() / "config.toml"
    if not path.is_file():
        return {}
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"cannot read Codex's config {path}: {exc}") from None


def isolated_codex_config(user: dict[str, Any], instructions: Path) -> dict[str, Any]:
    """The config the summariser runs with (see the module docstring)."""
    config: dict[str, Any] = {k: v for k, v in user.items() if k in _KEPT_KEYS and k != "profiles"}
    profiles = user.get("profiles")
    if isinstance(profiles, dict):
        config["profiles"] = {
            name: {k: v for k, v in body.items() if k in _KEPT_KEYS and k not in ("profile", "profiles")}
            for name, body in profiles.items()
            if isinstance(body, dict)
        }
    config.update(
        {
            "model_instructions_file": str(instructions),
            "approval_policy": "never",
            "sandbox_mode": "read-only",
            "check_for_update_on_startup": False,
            "web_search": "disabled",
            "skills": {"include_instructions": False},
            "features": dict.fromkeys(_FEATURES_OFF, False),
        }
    )
    return config


class CodexCLI(AgentCLI):
    """`codex exec --json --ephemeral --skip-git-repo-check [-m M] -` in a temporary CODEX_HOME (see the module
    docstring). The model: `[llm] model`, else the user's Codex config's."""

    name = "codex"
    display = "codex exec"
    overhead_tokens = 700  # Codex's permissions and environment blocks and its tools' definitions (measured: 653)

    def __init__(self, binary: str = "codex", model: str = "", *, timeout: float = 120.0) -> None:
        self._user_config = user_codex_config()
        super().__init__(binary, model, timeout=timeout)
        if not model and isinstance(self._user_config.get("model"), str):
            self.model = self._user_config["model"]

    def command(self) -> list[str]:
        cmd = [self.binary, "exec", "--json", "--ephemeral", "--skip-git-repo-check"]
        return [*cmd, *(["-m", self.model_arg] if self.model_arg else []), "-"]

    def invoke(self, home: Path, system: str, user: str) -> Answer:
        import tomlkit

        codex_home, work = home / "codex-home", home / "work"
        codex_home.mkdir(mode=0o700)
        work.mkdir()
        instructions = home / "model-instructions.txt"
        instructions.write_text(system, encoding="utf-8")
        config = isolated_codex_config(self._user_config, instructions)
        (codex_home / "config.toml").write_text(tomlkit.dumps(config), encoding="utf-8")
        auth = CODEX_HOME.path() / "auth.json"
        if auth.is_file():
            shutil.copyfile(auth, codex_home / "auth.json")
            (codex_home / "auth.json").chmod(0o600)
        env = self.environment(_DROPPED_ENV, CODEX_HOME=str(codex_home))
        return parse_events(self.run(self.command(), stdin=user, env=env, cwd=work).stdout)


def parse_events(stdout: str) -> Answer:
    """`codex exec --json`'s events: the last `agent_message` item is the answer, `turn.completed` the usage. An
    `error` event or a failed turn is an LLMError (an `error` item is a warning, such as an ignored setting)."""
    text: str | None = None
    prompt = completion = 0
    counted = False
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        assert isinstance(item, dict)
        if kind == "error" or kind == "turn.failed":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            assert isinstance(error, dict)
            message = str(error.get("message") or event.get("message") or "the turn failed")
            raise LLMError(f"codex exec: {error_snippet(message)}")
        if kind == "item.completed" and item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            text = item["text"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            prompt += int_or_none(usage.get("input_tokens")) or 0
            completion += int_or_none(usage.get("output_tokens")) or 0
            counted = True
    return Answer(text or "", prompt if counted else None, completion if counted else None)
