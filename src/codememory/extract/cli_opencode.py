"""`opencode run` as the extraction model (`[llm] provider = "opencode"`), checked on OpenCode 1.18.33.

Isolation: a temporary XDG_CONFIG_HOME whose opencode.json holds only the user's providers and models (no `plugin`,
no `mcp`, no plugin folders), a temporary XDG_DATA_HOME (holding only a copy of OpenCode's auth.json, so providers
logged in with `opencode auth login` still work) and state dir, OPENCODE_CONFIG*/OPENCODE_DB removed from the
environment, and `--pure` (no external plugins) on top.

The prompt's shape: the config defines an agent of ours whose prompt is our system prompt and which has no tools at
all (so the model is asked exactly our system prompt, plus OpenCode's short environment block, and our user prompt,
which goes on stdin: no argument length limit). `--title` spares the title request. `--format json` prints OpenCode's
events: the answer's text parts and each step's token counts, which the budget is charged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from codememory.core.paths import xdg_home
from codememory.errors import InvalidInput, LLMError
from codememory.extract.agent_cli import AgentCLI, Answer, int_or_none
from codememory.extract.provider import error_snippet

# Keys of the user's opencode.json that reach the isolated copy: which providers and models exist and
# how to reach them. Everything else (plugin, mcp, agent, instructions, command, ...) stays behind.
_KEPT_KEYS = ("$schema", "provider", "model", "small_model", "enabled_providers", "disabled_providers")
_CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")
# Environment variables that would point the child at the user's own config or database.
_DROPPED_ENV = ("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT", "OPENCODE_DB")
AGENT = "codememory-extract"  # our agent in the isolated config: our system prompt, no tools
TITLE = "codememory extraction"


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (opencode.jsonc) as plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def user_opencode_config() -> dict[str, Any]:
    """The user's global OpenCode config (then `OPENCODE_CONFIG`, merged key by key), {} when none."""
    folder = xdg_home("XDG_CONFIG_HOME", ".config") / "opencode"
    paths = [folder / name for name in _CONFIG_NAMES]
    if os.environ.get("OPENCODE_CONFIG"):
        paths.append(Path(os.environ["OPENCODE_CONFIG"]))
    merged: dict[str, Any] = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            data = json.loads(strip_jsonc(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"cannot read OpenCode's config {path}: {exc}") from None
        if isinstance(data, dict):
            merged.update(data)
    return merged


def isolated_opencode_config(user: dict[str, Any], system: str = "") -> dict[str, Any]:
    """The config the summariser runs with: providers and models only, no plugins, no MCP servers, no tools that
    change anything, no sharing, no auto-update; and our agent, whose prompt is `system` and which has no tools."""
    config = {k: user[k] for k in _KEPT_KEYS if k in user}
    deny = {"edit": "deny", "bash": "deny", "webfetch": "deny"}
    config.update(
        {
            "autoupdate": False,
            "share": "disabled",
            "permission": deny,
            "agent": {
                AGENT: {
                    "description": "codememory's extraction: reads a transcript, answers with JSON",
                    "mode": "primary",
                    "prompt": system,
                    "tools": {"*": False},
                    "permission": deny,
                }
            },
        }
    )
    return config


class OpenCodeCLI(AgentCLI):
    """`opencode run --pure --agent codememory-extract --format json [-m model]` with the user prompt on stdin, in an
    isolated home (see the module docstring). The model: `[llm] model`, else OpenCode's `small_model`, else its
    `model`."""

    name = "opencode"
    display = "opencode run"
    overhead_tokens = 100  # OpenCode's environment block after our system prompt (measured: 85)

    def __init__(self, binary: str = "opencode", model: str = "", *, timeout: float = 120.0) -> None:
        self._user_config = user_opencode_config()
        small = self._user_config.get("small_model")
        super().__init__(binary, model or (small if isinstance(small, str) else ""), timeout=timeout)
        if not self.model_arg:
            self.model = str(self._user_config.get("model") or "opencode-default")

    def command(self) -> list[str]:
        cmd = [self.binary, "run", "--pure", "--format", "json", "--agent", AGENT, "--title", TITLE]
        return cmd + (["-m", self.model_arg] if self.model_arg else [])

    def invoke(self, home: Path, system: str, user: str) -> Answer:
        env = self._environment(home, system)
        run = self.run(self.command(), stdin=user, env=env, cwd=home)
        return parse_events(run.stdout)

    def _environment(self, home: Path, system: str) -> dict[str, str]:
        config_home, data_home, state_home = home / "config", home / "data", home / "state"
        (config_home / "opencode").mkdir(parents=True)
        (data_home / "opencode").mkdir(parents=True)
        state_home.mkdir()
        (config_home / "opencode" / "opencode.json").write_text(
            json.dumps(isolated_opencode_config(self._user_config, system), indent=2), encoding="utf-8"
        )
        auth = xdg_home("XDG_DATA_HOME", ".local/share") / "opencode" / "auth.json"
        if auth.is_file():
            target = data_home / "opencode" / "auth.json"
            shutil.copyfile(auth, target)
            target.chmod(0o600)
        return self.environment(
            _DROPPED_ENV,
            XDG_CONFIG_HOME=str(config_home),
            XDG_DATA_HOME=str(data_home),
            XDG_STATE_HOME=str(state_home),
            OPENCODE_DISABLE_AUTOUPDATE="1",
        )


def parse_events(stdout: str) -> Answer:
    """`opencode run --format json`'s events: the text parts make the answer, the steps' `tokens` the usage. An
    `error` event is an LLMError; output that is not events (an older OpenCode) is taken as the answer's text."""
    texts: list[str] = []
    prompt = completion = 0
    counted = events = False
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            continue  # an answer that is itself JSON (an older OpenCode printing the text alone) is no event
        events = True
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        assert isinstance(part, dict)
        kind = event.get("type")
        if kind == "error":
            detail = json.dumps(event.get("error") or event, ensure_ascii=False)
            raise LLMError(f"opencode run: {error_snippet(detail)}")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "step_finish" and isinstance(part.get("tokens"), dict):
            tokens = part["tokens"]
            if int_or_none(tokens.get("input")) is None:
                continue
            cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
            assert isinstance(cache, dict)
            prompt += sum(int_or_none(v) or 0 for v in (tokens.get("input"), cache.get("read"), cache.get("write")))
            completion += sum(int_or_none(v) or 0 for v in (tokens.get("output"), tokens.get("reasoning")))
            counted = True
    if not events:
        return Answer(stdout)
    return Answer("\n".join(texts), prompt if counted else None, completion if counted else None)
