"""Model providers for extraction: one interface, two ways to reach a model.

- `OpenAICompatible`: `POST {base_url}/chat/completions` (non-streaming) on any OpenAI-compatible server:
  Ollama (`http://127.0.0.1:11434/v1`), llama.cpp, vLLM, LM Studio, OpenAI itself. Standard library only.
- `OpenCodeCLI`: the user's own agent CLI, `opencode run [-m model] <prompt>`, with an isolated config so
  our own plugin (and MCP server) cannot load inside it and capture the summariser's session.

Callers pass only scrubbed text (codememory.text.privacy.scrub); errors never carry the prompt.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from codememory.core.config import LLMConfig
from codememory.core.paths import xdg_home
from codememory.errors import InvalidInput, LLMError
from codememory.text.privacy import scrub
from codememory.text.tokens import estimate_tokens

PROVIDERS = ("none", "openai", "opencode")
_ERROR_SNIPPET = 300
_MAX_ARG_BYTES = 100_000  # Linux caps one argv string at 128 KiB; longer prompts go through stdin


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


class Provider(Protocol):
    """What extraction needs of a model. `name` and `model` label the spend records."""

    name: str
    model: str

    def complete(
        self,
        system: str,
        user: str,
        *,
        purpose: str,
        max_tokens: int,
        json_output: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> Completion: ...


def _snippet(text: str) -> str:
    return " ".join(scrub(text).split())[:_ERROR_SNIPPET]


# --------------------------------------------------------------------------------- OpenAI-compatible
class OpenAICompatible:
    """Any OpenAI-compatible chat completions endpoint. `api_key` None: no Authorization header (Ollama)."""

    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key or None
        self.timeout = timeout
        # The strongest response format the server accepts: "json_schema" (the answer's schema), then
        # "json_object", then none (JSON asked for in the prompt only); lowered for a server that rejects one.
        self._format = "json_schema"

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatible(base_url={self.base_url!r}, model={self.model!r})"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def complete(
        self,
        system: str,
        user: str,
        *,
        purpose: str,
        max_tokens: int,
        json_output: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": False,
        }
        while True:
            fmt = self._response_format(json_output, schema)
            if fmt is None:
                body.pop("response_format", None)
            else:
                body["response_format"] = fmt
            try:
                data = self._post(body)
                break
            except _Rejected as exc:
                detail = exc.detail.lower()
                if fmt is not None and ("response_format" in detail or "json_schema" in detail):
                    # an older server: a weaker format next, down to JSON asked for in the prompt only
                    self._format = "json_object" if fmt["type"] == "json_schema" else "none"
                    continue
                raise LLMError(f"{self.url}: HTTP {exc.status}: {exc.detail}") from None
        return self._completion(data, system, user)

    def _response_format(self, json_output: bool, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if not json_output or self._format == "none":
            return None
        if schema is not None and self._format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": False}}
        return {"type": "json_object"}

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"), headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _http_detail(exc)
            if exc.code == 400:
                raise _Rejected(exc.code, detail) from None
            hint = " (check llm.api_key_env)" if exc.code in (401, 403) else ""
            raise LLMError(f"{self.url}: HTTP {exc.code}{hint}: {detail}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise LLMError(f"{self.url}: no answer within {self.timeout:g} s (llm.timeout)") from None
            raise LLMError(f"cannot reach {self.url}: {reason}") from None
        except TimeoutError:
            raise LLMError(f"{self.url}: no answer within {self.timeout:g} s (llm.timeout)") from None
        except OSError as exc:
            raise LLMError(f"{self.url}: {exc}") from None
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise LLMError(f"{self.url}: the answer is not JSON: {_snippet(raw.decode('utf-8', 'replace'))}") from None
        if not isinstance(data, dict):
            raise LLMError(f"{self.url}: the answer is not a chat completion object")
        return data

    def _completion(self, data: dict[str, Any], system: str, user: str) -> Completion:
        if "error" in data and not data.get("choices"):
            raise LLMError(f"{self.url}: {_snippet(json.dumps(data['error'], ensure_ascii=False))}")
        try:
            message = data["choices"][0]["message"]
            text = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"{self.url}: the answer has no choices[0].message (not a chat completion)") from None
        if isinstance(text, list):  # content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        if not isinstance(text, str):
            text = ""
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        prompt_tokens = _int(usage.get("prompt_tokens"), estimate_tokens(system) + estimate_tokens(user))
        completion_tokens = _int(usage.get("completion_tokens"), estimate_tokens(text))
        model = data.get("model") if isinstance(data.get("model"), str) and data.get("model") else self.model
        return Completion(text, prompt_tokens, completion_tokens, str(model))


class _Rejected(Exception):
    """Control flow inside this module (an HTTP 400, retried or turned into LLMError); never reaches a
    caller."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(status, detail)
        self.status = status
        self.detail = detail


def _http_detail(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read().decode("utf-8", "replace")
    except Exception:
        return str(exc.reason)
    try:
        data = json.loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message", error) if isinstance(error, dict) else error
        return _snippet(str(message))
    except (json.JSONDecodeError, AttributeError):
        return _snippet(raw) or str(exc.reason)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


# ------------------------------------------------------------------------------------- OpenCode CLI
# Keys of the user's opencode.json that reach the isolated copy: which providers and models exist and
# how to reach them. Everything else (plugin, mcp, agent, instructions, command, ...) stays behind.
_KEPT_KEYS = ("$schema", "provider", "model", "small_model", "enabled_providers", "disabled_providers")
_CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")
# Environment variables that would point the child at the user's own config or database.
_DROPPED_ENV = ("OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT", "OPENCODE_DB")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


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


def isolated_opencode_config(user: dict[str, Any]) -> dict[str, Any]:
    """The config the summariser runs with: providers and models only, no plugins, no MCP servers, no
    tools that change anything, no sharing, no auto-update."""
    config = {k: user[k] for k in _KEPT_KEYS if k in user}
    config.update(
        {
            "autoupdate": False,
            "share": "disabled",
            "permission": {"edit": "deny", "bash": "deny", "webfetch": "deny"},
        }
    )
    return config


class OpenCodeCLI:
    """`opencode run` in an isolated home: a temporary XDG_CONFIG_HOME with a copy of the user's provider
    and model settings (no `plugin` key, no plugin folders), a temporary XDG_DATA_HOME (holding only a
    copy of OpenCode's auth.json, so providers logged in with `opencode auth login` still work) and state
    dir, the temporary folder as working directory (a project's .opencode/ plugins are not found from
    there), `CODEMEMORY_NO_CAPTURE=1` as a second guard, and OPENCODE_CONFIG*/OPENCODE_DB removed from the
    environment. The temporary folder is deleted after each call. Token counts are estimates."""

    name = "opencode"

    def __init__(self, binary: str = "opencode", model: str = "", *, timeout: float = 120.0) -> None:
        self.binary = binary
        self.timeout = timeout
        self._user_config = user_opencode_config()
        small = self._user_config.get("small_model")
        self._model_arg = model or (small if isinstance(small, str) else "")
        self.model = self._model_arg or str(self._user_config.get("model") or "opencode-default")

    def __repr__(self) -> str:
        return f"OpenCodeCLI(binary={self.binary!r}, model={self.model!r})"

    def command(self, prompt_arg: str) -> list[str]:
        cmd = [self.binary, "run"]
        if self._model_arg:
            cmd += ["-m", self._model_arg]
        return [*cmd, prompt_arg]

    def complete(
        self,
        system: str,
        user: str,
        *,
        purpose: str,
        max_tokens: int,
        json_output: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> Completion:
        prompt = f"{system.strip()}\n\n{user.strip()}\n"  # no response format: the prompt asks for JSON
        with tempfile.TemporaryDirectory(prefix="codememory-llm-") as tmp:
            home = Path(tmp)
            env = self._environment(home)
            if len(prompt.encode("utf-8")) <= _MAX_ARG_BYTES:
                argv, stdin = self.command(prompt), ""
            else:  # `opencode run` appends piped stdin to the message
                argv, stdin = self.command(system.strip()), user.strip() + "\n"
            stdout, stderr, code = self._run(argv, stdin, env, home)
        text = _ANSI_RE.sub("", stdout).strip()
        if code != 0:
            raise LLMError(f"{self.binary} run exited with status {code}: {_snippet(stderr or stdout)}")
        if not text:
            raise LLMError(f"{self.binary} run printed no answer: {_snippet(stderr)}")
        return Completion(text, estimate_tokens(prompt), estimate_tokens(text), self.model)

    def _environment(self, home: Path) -> dict[str, str]:
        config_home, data_home, state_home = home / "config", home / "data", home / "state"
        (config_home / "opencode").mkdir(parents=True)
        (data_home / "opencode").mkdir(parents=True)
        state_home.mkdir()
        (config_home / "opencode" / "opencode.json").write_text(
            json.dumps(isolated_opencode_config(self._user_config), indent=2), encoding="utf-8"
        )
        auth = xdg_home("XDG_DATA_HOME", ".local/share") / "opencode" / "auth.json"
        if auth.is_file():
            target = data_home / "opencode" / "auth.json"
            shutil.copyfile(auth, target)
            target.chmod(0o600)
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env.update(
            {
                "XDG_CONFIG_HOME": str(config_home),
                "XDG_DATA_HOME": str(data_home),
                "XDG_STATE_HOME": str(state_home),
                "CODEMEMORY_NO_CAPTURE": "1",
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "NO_COLOR": "1",
            }
        )
        return env

    def _run(self, argv: list[str], stdin: str, env: dict[str, str], cwd: Path) -> tuple[str, str, int]:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # a timeout kills opencode and whatever it started
            )
        except OSError as exc:
            raise LLMError(f"cannot run {self.binary}: {exc}") from None
        try:
            stdout, stderr = proc.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise LLMError(f"{self.binary} run gave no answer within {self.timeout:g} s (llm.timeout)") from None
        return stdout, stderr, proc.returncode


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


# ------------------------------------------------------------------------------------------ config
def compression_provider_from_config(cfg: LLMConfig) -> Provider | None:
    """The separate tool-compression model (`[llm] compress_model`, on `compress_base_url` or else
    `base_url`), None when none is set. Bad settings raise InvalidInput."""
    model = cfg.compress_model.strip()
    if not model:
        return None
    own_url = cfg.compress_base_url.strip()
    base = own_url or cfg.base_url.strip()
    if not base:
        raise InvalidInput(
            "config llm.compress_model needs llm.compress_base_url (e.g. http://127.0.0.1:11434/v1 for Ollama)"
        )
    if not re.match(r"^https?://[^/\s]+", base):
        raise InvalidInput(f"config llm.compress_base_url must be an http:// or https:// URL, got {base!r}")
    key_env = (cfg.compress_api_key_env if own_url else cfg.api_key_env).strip()
    key = None
    if key_env:
        key = os.environ.get(key_env, "").strip()
        if not key:
            raise InvalidInput(f"config names the environment variable {key_env} for a key, which is not set or empty")
    return OpenAICompatible(base, model, api_key=key, timeout=cfg.timeout)


def provider_from_config(cfg: LLMConfig) -> Provider | None:
    """The provider `[llm]` describes; None for provider "none". Bad settings raise InvalidInput."""
    kind = (cfg.provider or "none").strip().lower()
    if kind not in PROVIDERS:
        raise InvalidInput(
            f"config llm.provider: unknown provider {cfg.provider!r}; choose one of: {', '.join(PROVIDERS)}"
        )
    if kind == "none":
        return None
    if cfg.timeout <= 0:
        raise InvalidInput(f"config llm.timeout must be positive, got {cfg.timeout}")
    if kind == "openai":
        base = cfg.base_url.strip()
        if not base:
            raise InvalidInput(
                'config llm.base_url is required with provider = "openai" (e.g. http://127.0.0.1:11434/v1 for '
                "Ollama, https://api.openai.com/v1)"
            )
        if not re.match(r"^https?://[^/\s]+", base):
            raise InvalidInput(f"config llm.base_url must be an http:// or https:// URL, got {base!r}")
        if not cfg.model.strip():
            raise InvalidInput('config llm.model is required with provider = "openai" (e.g. "qwen2.5:7b")')
        key = None
        if cfg.api_key_env.strip():
            key = os.environ.get(cfg.api_key_env.strip(), "").strip()
            if not key:
                raise InvalidInput(
                    f"config llm.api_key_env names the environment variable {cfg.api_key_env.strip()}, which is "
                    "not set or empty"
                )
        return OpenAICompatible(base, cfg.model.strip(), api_key=key, timeout=cfg.timeout)
    binary = cfg.opencode_bin.strip() or "opencode"
    found = shutil.which(binary)
    if found is None:
        raise InvalidInput(
            f"config llm.opencode_bin: {binary!r} is not an executable on PATH (install OpenCode: npm i -g opencode-ai)"
        )
    return OpenCodeCLI(found, cfg.model.strip(), timeout=cfg.timeout)
