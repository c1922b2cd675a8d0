"""Model providers for extraction: one interface (codememory.extract.provider), two ways to reach a model.

- `OpenAICompatible`: `POST {base_url}/chat/completions` (non-streaming) on any OpenAI-compatible server:
  Ollama (`http://127.0.0.1:11434/v1`), llama.cpp, vLLM, LM Studio, OpenAI itself. Standard library only.
- The user's own coding agent, run once per call and isolated so that codememory's plugin, hooks and MCP server
  cannot run inside it (codememory.extract.agent_cli): `opencode run` (cli_opencode), `claude -p` (cli_claude),
  `codex exec` (cli_codex).

Callers pass only scrubbed text (codememory.text.privacy.scrub); errors never carry the prompt.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from codememory.core.config import LLMConfig
from codememory.errors import InvalidInput, LLMError
from codememory.extract.provider import Completion, Provider, error_snippet
from codememory.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from codememory.extract.agent_cli import AgentCLI

__all__ = [
    "AGENT_CLIS",
    "PROVIDERS",
    "Completion",
    "OpenAICompatible",
    "Provider",
    "compression_provider_from_config",
    "provider_from_config",
]

AGENT_CLIS = ("opencode", "claude", "codex")  # providers that run the user's own coding agent
PROVIDERS = ("none", "openai", *AGENT_CLIS)


# --------------------------------------------------------------------------------- OpenAI-compatible
class OpenAICompatible:
    """Any OpenAI-compatible chat completions endpoint. `api_key` None: no Authorization header (Ollama)."""

    name = "openai"
    overhead_tokens = 0  # the request is exactly the prompt

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
            detail = error_snippet(raw.decode("utf-8", "replace"))
            raise LLMError(f"{self.url}: the answer is not JSON: {detail}") from None
        if not isinstance(data, dict):
            raise LLMError(f"{self.url}: the answer is not a chat completion object")
        return data

    def _completion(self, data: dict[str, Any], system: str, user: str) -> Completion:
        if "error" in data and not data.get("choices"):
            raise LLMError(f"{self.url}: {error_snippet(json.dumps(data['error'], ensure_ascii=False))}")
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
        return error_snippet(str(message))
    except (json.JSONDecodeError, AttributeError):
        return error_snippet(raw) or str(exc.reason)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


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
    return agent_cli_provider(kind, cfg)


# The agent CLIs: the `[llm]` key naming each one's command, and how to install it.
_CLI_SETTINGS = {
    "opencode": ("opencode_bin", "install OpenCode: npm i -g opencode-ai"),
    "claude": ("claude_bin", "install Claude Code: npm i -g @anthropic-ai/claude-code"),
    "codex": ("codex_bin", "install Codex: npm i -g @openai/codex"),
}


def agent_cli_provider(kind: str, cfg: LLMConfig) -> AgentCLI:
    """The provider that runs the agent CLI `kind` (one of AGENT_CLIS) as `[llm]` configures it; InvalidInput when
    its command is not found."""
    key, install = _CLI_SETTINGS[kind]
    binary = str(getattr(cfg, key)).strip() or kind
    found = shutil.which(binary)
    if found is None:
        raise InvalidInput(f"config llm.{key}: {binary!r} is not an executable on PATH ({install})")
    if kind == "opencode":
        from codememory.extract.cli_opencode import OpenCodeCLI

        return OpenCodeCLI(found, cfg.model.strip(), timeout=cfg.timeout)
    if kind == "claude":
        from codememory.extract.cli_claude import ClaudeCLI

        return ClaudeCLI(found, cfg.model.strip(), timeout=cfg.timeout)
    from codememory.extract.cli_codex import CodexCLI

    return CodexCLI(found, cfg.model.strip(), timeout=cfg.timeout)
