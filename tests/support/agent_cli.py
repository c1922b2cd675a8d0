"""Drive a real coding-agent CLI (pinned in tests/clis, or OpenCode in integrations/opencode) for one prompt against a
scripted model server, in a given project and HOME, and hand back what its model was asked.

    agent = cli_codex.Codex(tmp / "home")            # or cli_gemini.Gemini, cli_copilot.Copilot, cli_claude.Claude,
    project = make_git_project(tmp / "app")          #    cli_opencode.OpenCode; or AGENTS["codex"](home)
    agent.cm(project, "init", "--assistants", agent.key)
    run = agent.run(project, "add a rate limiter", [
        Reply("Checking.", tool_calls=[ToolCallSpec(agent.mcp("memory_search"), {"query": "rate limiter"})]),
        Reply("Done."),
    ])
    run.requests        # the conversation requests the scripted model received, in order (the CLI's own wire format)
    run.texts           # each of those requests as the text the model was shown (instructions, messages, results)
    run.transcript      # the session's transcript file, where the CLI keeps one

Every adapter speaks the same scripted replies (support.scripted_llm.Reply with ToolCallSpec tool calls, the tools
named as that CLI's model sees them) and converts them to its server's wire format. Its `mcp(tool)`, `write_file`,
`shell` and `todos` build the calls a script needs in that CLI's own tool names, so one script can run on every CLI.

Each HOME is one user's machine: a second `run` with the same adapter continues in the same HOME (the CLI's own
state, codememory's global registry), as a second session would. Nothing is sent anywhere but the scripted server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from support.scripted_llm import Reply, ToolCallSpec

REPO = Path(__file__).resolve().parents[2]
CLIS_DIR = REPO / "tests" / "clis"
BIN_DIR = CLIS_DIR / "node_modules" / ".bin"
CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
RUN_TIMEOUT = 240.0  # seconds for one prompt: the CLIs start slowly on a busy machine


class CliMissing(RuntimeError):
    pass


def cli_bin(name: str, folder: Path = CLIS_DIR) -> Path:
    """The pinned binary `name`; a clear error (a failure, never a skip) when `npm ci` has not been run."""
    path = folder / "node_modules" / ".bin" / name
    if not path.exists():
        raise CliMissing(
            f"the {name} binary is not installed at {path}: "
            f"run `npm ci --prefix {folder.relative_to(REPO)}` (Node.js 20+) first"
        )
    return path


def require(name: str, folder: Path = CLIS_DIR) -> Path:
    """`cli_bin` for a test: a missing binary fails the test with the command that installs it."""
    try:
        return cli_bin(name, folder)
    except CliMissing as exc:
        pytest.fail(str(exc))


def isolated_env(home: Path) -> dict[str, str]:
    """One user's environment: a throwaway HOME and XDG folders (the CLIs' state, codememory's registry, transcripts
    all in it), this codememory first on PATH (the files init writes name `codememory` and `codememory-hook`), and
    every CLI's telemetry, update checks and error reports off."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        PATH=os.pathsep.join([str(Path(CODEMEMORY).parent), env.get("PATH", "")]),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        CODEX_HOME=str(home / ".codex"),
        NO_COLOR="1",
        # Claude Code
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_BUG_COMMAND="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        # Gemini CLI: no relaunch of itself with a bigger heap, no telemetry
        GEMINI_CLI_NO_RELAUNCH="true",
        GEMINI_TELEMETRY_ENABLED="false",
        # Copilot CLI: offline mode (no GitHub login, telemetry or updates; a BYOK provider is required)
        COPILOT_OFFLINE="true",
        COPILOT_AUTO_UPDATE="false",
        # OpenCode
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
    )
    return env


@dataclass
class CliRun:
    """One prompt run by a real CLI: its exit, output, what its scripted model was asked, and its session."""

    cli: str
    returncode: int
    stdout: str
    stderr: str
    requests: list[dict[str, Any]]  # conversation requests (side requests such as titles left out)
    texts: list[str]  # each request as the text its model was shown
    session_id: str | None = None
    transcript: Path | None = None
    outputs: dict[str, str] = field(default_factory=dict)  # tool call id -> the result the CLI sent back
    other_requests: list[tuple[str, str]] = field(default_factory=list)  # paths the server did not script

    def check(self) -> CliRun:
        if self.returncode != 0:
            raise AssertionError(
                f"{self.cli} failed ({self.returncode})\nstdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"
            )
        return self


class AgentCli:
    """What every adapter shares: its HOME and environment, `codememory` run as that user, the process run."""

    key: ClassVar[str]  # the assistant's key in codememory's registry (`init --assistants KEY`)
    binary: ClassVar[str]

    def __init__(self, home: Path) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = isolated_env(home)

    # ------------------------------------------------------------------ codememory as this user
    def cm(self, project: Path, *args: str) -> dict[str, Any]:
        """`codememory ARGS --json` in `project`, as this user; its JSON answer (a failure fails the test)."""
        done = subprocess.run(
            [CODEMEMORY, *args, "--json"], cwd=project, env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"codememory {' '.join(args)} failed\n{done.stderr}{done.stdout}"
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ tools as its model spells them
    def mcp(self, tool: str) -> str:
        """How this CLI's model calls codememory's MCP tool `tool` (the spelling its registry spec documents)."""
        from codememory import assistants

        spec = assistants.find(self.key)
        assert spec is not None, self.key
        return spec.tool_name(tool)

    def write_file(self, path: Path, content: str) -> ToolCallSpec:
        raise NotImplementedError

    def shell(self, command: str) -> ToolCallSpec:
        raise NotImplementedError

    def todos(self, items: Sequence[tuple[str, str]]) -> list[ToolCallSpec]:
        """The calls that leave the agent's todo list as `items` ((text, status), status: pending, in_progress,
        completed)."""
        raise NotImplementedError

    def offered(self, body: dict[str, Any]) -> set[str]:
        """The tools one request of this CLI offers its model, by the names the model calls them."""
        raise NotImplementedError

    # ------------------------------------------------------------------ running
    def run(
        self,
        project: Path,
        prompt: str,
        replies: Sequence[Reply],
        *,
        resume: str | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> CliRun:
        """Run `prompt` in `project` as a new session (or, with `resume`, in that session of this HOME), the
        scripted model answering its conversation requests with `replies` in order ("OK." after them)."""
        raise NotImplementedError

    def process(
        self, args: list[str], project: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )


AgentFactory = Callable[[Path], AgentCli]


def agents() -> dict[str, AgentFactory]:
    """Every adapter by its registry key (the hand-off benchmark runs each ordered pair)."""
    from support import cli_claude, cli_codex, cli_copilot, cli_gemini, cli_opencode

    return {
        cls.key: cls
        for cls in (cli_claude.Claude, cli_codex.Codex, cli_gemini.Gemini, cli_copilot.Copilot, cli_opencode.OpenCode)
    }
