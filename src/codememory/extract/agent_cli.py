"""What the agent-CLI providers share (`opencode run`, `claude -p`, `codex exec`): one call is one run of the user's
own coding agent in a throwaway folder, isolated so that nothing of codememory runs inside it.

Recursion isolation: the summariser's run is itself a session of a coding agent. If codememory's plugin, hooks or
MCP server ran inside it, that session would be captured and extracted in turn, its prompt (a transcript) stored
as memories, and the daemon would summarise its own summaries. Each provider keeps them out in its CLI's own way
(an isolated config, a safe mode, a temporary home: see each module); on top of that every run gets
`CODEMEMORY_NO_CAPTURE` (a daemon it might start neither captures nor extracts) and `CODEMEMORY_NO_HOOKS` (a
`codememory-hook` it might still run does nothing), and works in a temporary folder, so a project's own agent
files (`.claude/`, `.codex/`, `.opencode/`, `.mcp.json`) are never found. The folder is deleted after each call.

Token accounting: each CLI's JSON output reports what its model used, which is what the budget is charged; where
it reports nothing, the prompt and the answer are estimated (codememory.text.tokens). `overhead_tokens` is what the
CLI adds to our prompt (its own preamble, environment block and tool list), measured against scripted servers
(benchmarks/bench_cli_extraction.py; benchmarks/README.md, "Extraction with an agent CLI") and rounded up: the
budget's check before a call counts it too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core.env_switches import NO_CAPTURE, NO_HOOKS
from codememory.errors import LLMError
from codememory.extract.provider import Completion, error_snippet
from codememory.text.tokens import estimate_tokens


@dataclass(frozen=True)
class Run:
    """One finished run of the CLI."""

    stdout: str
    stderr: str
    returncode: int


@dataclass(frozen=True)
class Answer:
    """What a run printed, read: the model's text and the usage the CLI reported (None: not reported)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = None


class AgentCLI:
    """A provider that runs the user's own coding agent once per call. Subclasses say how: `invoke` builds the run
    in the temporary folder and reads its output."""

    name = ""
    display = ""  # the CLI as its users call it: "claude -p"
    overhead_tokens = 0  # what the CLI adds to each request beyond our prompt

    def __init__(self, binary: str, model: str = "", *, timeout: float = 120.0) -> None:
        self.binary = binary
        self.timeout = timeout
        self.model_arg = model
        self.model = model or f"{self.name}-default"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(binary={self.binary!r}, model={self.model!r})"

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
        """The answer to our system prompt and user prompt. No response format: the prompt asks for JSON, and the
        extractor validates the answer either way."""
        with tempfile.TemporaryDirectory(prefix="codememory-llm-") as tmp:
            answer = self.invoke(Path(tmp), system.strip() + "\n", user.strip() + "\n")
        if not answer.text.strip():
            raise LLMError(f"{self.display} printed no answer")
        prompt_tokens = answer.prompt_tokens
        if not prompt_tokens:  # not reported (a model always reads a prompt: 0 is no count either)
            prompt_tokens = estimate_tokens(system) + estimate_tokens(user) + self.overhead_tokens
        completion_tokens = answer.completion_tokens
        if completion_tokens is None:
            completion_tokens = estimate_tokens(answer.text)
        return Completion(answer.text.strip(), prompt_tokens, completion_tokens, answer.model or self.model)

    def invoke(self, home: Path, system: str, user: str) -> Answer:
        raise NotImplementedError

    # ------------------------------------------------------------------------------------------ running
    def environment(self, drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
        """The user's environment (their keys and logins reach their own CLI), without `drop`, with the switches that
        keep codememory out of the run, and `extra`."""
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env.update({NO_CAPTURE: "1", NO_HOOKS: "1", "NO_COLOR": "1"})
        env.update(extra)
        return env

    def run(self, argv: list[str], *, stdin: str, env: dict[str, str], cwd: Path) -> Run:
        """Run the CLI in its own process group (a timeout kills it and whatever it started); a failed start, a
        timeout or a non-zero exit is an LLMError with the CLI's own words (scrubbed, cut short)."""
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
                start_new_session=True,
            )
        except OSError as exc:
            raise LLMError(f"cannot run {self.binary}: {exc}") from None
        try:
            stdout, stderr = proc.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise LLMError(f"{self.display} gave no answer within {self.timeout:g} s (llm.timeout)") from None
        finally:
            _kill_group(proc)  # a helper it left running in the background (a server, a sandbox) goes with it
        if proc.returncode != 0:
            raise LLMError(f"{self.display} exited with status {proc.returncode}: {error_snippet(stderr or stdout)}")
        return Run(stdout, stderr, proc.returncode)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        if proc.poll() is None:
            proc.kill()


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
