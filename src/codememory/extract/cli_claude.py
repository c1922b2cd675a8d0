"""`claude -p` (Claude Code's print mode) as the extraction model (`[llm] provider = "claude"`), checked on Claude
Code 2.1.330.

Isolation, with the user's own login and settings otherwise (their plan or API key pays, their model setting
applies): `--safe-mode` (no hooks, MCP servers, plugins, skills or CLAUDE.md, neither the user's nor a project's),
`--strict-mcp-config` with no `--mcp-config` (no MCP server at all), `--tools ""` (no tools: the model only reads
and answers), `--no-session-persistence` (no transcript in ~/.claude/projects that capture could later import), a
temporary working folder, and the variables Claude Code sets in its own sessions removed (a daemon started from
inside one must still be able to run it).

The prompt's shape: our system prompt replaces Claude Code's (`--system-prompt-file`; it keeps one line of its own
and an environment block), our user prompt goes on stdin. `--output-format json` prints the result with the usage
per model, which the budget is charged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codememory.errors import LLMError
from codememory.extract.agent_cli import AgentCLI, Answer, int_or_none
from codememory.extract.provider import error_snippet

# Set by Claude Code inside its own sessions (and passed to hooks and the processes they start): a nested
# `claude` must not take itself for part of that session.
_DROPPED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID", "CLAUDE_PROJECT_DIR")
_MODEL_INPUT_KEYS = ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
FLAGS = ("--safe-mode", "--strict-mcp-config", "--tools", "", "--no-session-persistence")


class ClaudeCLI(AgentCLI):
    """`claude -p --output-format json --safe-mode ... [--model M]` with our system prompt in a file and the user
    prompt on stdin. The model: `[llm] model` (e.g. "haiku"), else Claude Code's own setting."""

    name = "claude"
    display = "claude -p"
    overhead_tokens = 300  # Claude Code's line of its own and its environment block (measured: 267)

    def command(self, system_file: Path) -> list[str]:
        cmd = [self.binary, "-p", "--output-format", "json", *FLAGS, "--system-prompt-file", str(system_file)]
        return cmd + (["--model", self.model_arg] if self.model_arg else [])

    def invoke(self, home: Path, system: str, user: str) -> Answer:
        system_file = home / "system-prompt.txt"
        system_file.write_text(system, encoding="utf-8")
        work = home / "work"
        work.mkdir()
        try:
            run = self.run(self.command(system_file), stdin=user, env=self.environment(_DROPPED_ENV), cwd=work)
        except LLMError as exc:
            if "unknown option" in str(exc):
                raise LLMError(f"{exc} (the claude provider needs Claude Code 2.1.330 or newer)") from None
            raise
        return parse_result(run.stdout)


def parse_result(stdout: str) -> Answer:
    """The single result `--output-format json` prints: its `result` text and its usage (all models' together: a
    side request to a small model is spent too). `is_error` is an LLMError with Claude Code's words."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        raise LLMError(f"claude -p printed no JSON result: {error_snippet(stdout)}") from None
    if not isinstance(data, dict):
        raise LLMError("claude -p printed no JSON result")
    text = data.get("result") if isinstance(data.get("result"), str) else ""
    assert isinstance(text, str)
    if data.get("is_error"):
        raise LLMError(f"claude -p: {error_snippet(text or str(data.get('subtype') or 'error'))}")
    prompt, completion, model = _model_usage(data.get("modelUsage"))
    if prompt is None:
        prompt, completion = _usage(data.get("usage"))
    return Answer(text, prompt, completion, model)


def _model_usage(value: Any) -> tuple[int | None, int | None, str | None]:
    if not isinstance(value, dict) or not value:
        return None, None, None
    prompt = completion = 0
    biggest: tuple[int, str] | None = None
    for model, usage in value.items():
        if not isinstance(usage, dict):
            continue
        p = sum(int_or_none(usage.get(k)) or 0 for k in _MODEL_INPUT_KEYS)
        c = int_or_none(usage.get("outputTokens")) or 0
        prompt, completion = prompt + p, completion + c
        if biggest is None or p + c > biggest[0]:
            biggest = (p + c, str(model))
    return prompt, completion, biggest[1] if biggest else None


def _usage(value: Any) -> tuple[int | None, int | None]:
    if not isinstance(value, dict):
        return None, None
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    if int_or_none(value.get("input_tokens")) is None:
        return None, None
    return sum(int_or_none(value.get(k)) or 0 for k in keys), int_or_none(value.get("output_tokens"))
