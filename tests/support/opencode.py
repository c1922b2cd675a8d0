"""Run the real `opencode` binary (npm `opencode-ai`, pinned in integrations/opencode/package.json)
against a scripted model, in a throwaway HOME, and hand back the database it wrote.

    with ScriptedLLM(Script([Reply("hello")])) as llm:
        oc = OpenCodeHome(tmp / "home", llm.base_url)
        project = make_git_project(tmp / "project")
        result = oc.run(project, "say hello")
        result.db_path  # OpenCode's SQLite database

Everything OpenCode reads or writes (config, data, cache, state) lives under that HOME; models are
not fetched and nothing updates itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OPENCODE_DIR = REPO / "integrations" / "opencode"
OPENCODE_BIN = OPENCODE_DIR / "node_modules" / ".bin" / "opencode"
PROVIDER = "scripted"
MODEL = "scripted-model"
_SESSION_RE = re.compile(r"\bses_[A-Za-z0-9]+\b")


class OpenCodeMissing(RuntimeError):
    pass


def opencode_bin() -> Path:
    """The pinned binary; a clear error when `npm ci` has not been run."""
    if not OPENCODE_BIN.exists():
        raise OpenCodeMissing(
            f"the opencode binary is not installed at {OPENCODE_BIN}: "
            f"run `npm ci --prefix {OPENCODE_DIR.relative_to(REPO)}` (Node.js 20+) first"
        )
    return OPENCODE_BIN


def require_opencode() -> Path:
    """`opencode_bin()` for a test fixture: a missing binary fails the test (it is never skipped)."""
    try:
        return opencode_bin()
    except OpenCodeMissing as exc:
        pytest.fail(str(exc))


def make_git_project(path: Path) -> Path:
    """A folder with an initialised git repository and one commit (OpenCode keys projects on the
    repository's first commit; without a commit every folder is the "global" project)."""
    path.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    (path / "README.md").write_text(f"# {path.name}\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return path.resolve()


@dataclass
class RunResult:
    returncode: int
    stdout: str
    stderr: str
    db_path: Path
    session_id: str | None  # from `--format json` output, when OpenCode printed one

    def check(self) -> RunResult:
        if self.returncode != 0:
            raise AssertionError(
                f"opencode run failed ({self.returncode})\n"
                f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"
            )
        return self


class OpenCodeHome:
    """A temporary HOME whose OpenCode talks to the scripted model at `base_url`."""

    def __init__(self, home: Path, base_url: str, *, model: str = MODEL) -> None:
        self.home = home
        self.base_url = base_url
        self.model = model
        self.bin = opencode_bin()
        home.mkdir(parents=True, exist_ok=True)
        config = self.config_dir / "opencode.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps(self.config(), indent=2), encoding="utf-8")

    @property
    def config_dir(self) -> Path:
        return self.home / ".config" / "opencode"

    @property
    def data_dir(self) -> Path:
        return self.home / ".local" / "share" / "opencode"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "opencode.db"

    def config(self) -> dict[str, object]:
        return {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                PROVIDER: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Scripted",
                    "options": {"baseURL": self.base_url, "apiKey": "x"},
                    "models": {self.model: {"name": "Scripted model", "tool_call": True}},
                }
            },
            "model": f"{PROVIDER}/{self.model}",
            "small_model": f"{PROVIDER}/{self.model}",
            "autoupdate": False,
            "share": "disabled",
        }

    def env(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            OPENCODE_DISABLE_AUTOUPDATE="1",
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_LSP_DOWNLOAD="1",
            OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
            NO_COLOR="1",
        )
        return env

    def args(
        self, message: str, *, session: str | None = None, continue_last: bool = False, files: tuple[str, ...] = ()
    ) -> list[str]:
        args = [str(self.bin), "run", "--format", "json", "--model", f"{PROVIDER}/{self.model}"]
        if session:
            args += ["--session", session]
        if continue_last:
            args.append("--continue")
        for f in files:
            args += ["--file", f]
        return [*args, "--", message]

    def run(
        self,
        project: Path,
        message: str,
        *,
        session: str | None = None,
        continue_last: bool = False,
        files: tuple[str, ...] = (),
        timeout: float = 60.0,
        check: bool = True,
    ) -> RunResult:
        """`opencode run MESSAGE` in `project` (`--session ID` / `--continue` resume a session; `files`
        are attached with `--file`). OpenCode stores a message with spaces wrapped in double quotes."""
        proc = subprocess.run(
            self.args(message, session=session, continue_last=continue_last, files=files),
            cwd=project,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        found = _SESSION_RE.search(proc.stdout)
        result = RunResult(proc.returncode, proc.stdout, proc.stderr, self.db_path, found.group(0) if found else None)
        return result.check() if check else result

    def start(self, project: Path, message: str, *, session: str | None = None) -> subprocess.Popen[str]:
        """`opencode run MESSAGE` in the background (the caller waits for it or kills it)."""
        return subprocess.Popen(
            self.args(message, session=session),
            cwd=project,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def reported_db_path(self, timeout: float = 30.0) -> Path:
        """What `opencode db path` prints in this HOME."""
        proc = subprocess.run(
            [str(self.bin), "db", "path"], env=self.env(), capture_output=True, text=True, timeout=timeout, check=True
        )
        return Path(proc.stdout.strip().splitlines()[-1])
