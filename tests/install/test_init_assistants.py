"""`codememory init` for Gemini CLI and Copilot CLI, the names `--assistants` takes, and what a team commits: after
`init --assistants all` in a fresh git project, nothing `git add -A` would commit names this machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codememory import assistants
from conftest import Invoke

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    project, home, bin_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "bin"
    for d in (project, home, bin_dir):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("PATH", str(bin_dir))
    return {"project": project, "home": home, "bin": bin_dir}


def init(invoke: Invoke, project: Path, *args: str) -> dict[str, Any]:
    result = invoke("--project", project, "init", *args, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def steps(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(s["assistant"], s["file"]): s["action"] for s in report["steps"]}


def test_gemini_and_copilot(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text('{"theme": "GitHub"}\n')
    report = init(invoke, project, "--assistants", "gemini,copilot")
    assert report["assistants"] == ["gemini", "copilot"]
    assert steps(report) == {
        ("codememory", ".codememory/"): "added",
        ("gemini", ".gemini/settings.json"): "added",
        ("gemini", "GEMINI.md"): "added",
        ("copilot", ".mcp.json"): "added",
        ("copilot", ".github/hooks/codememory.json"): "added",
        ("copilot", "AGENTS.md"): "added",
    } | {k: v for k, v in steps(report).items() if k[1].endswith("registry.json")}
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    assert settings["theme"] == "GitHub"
    assert settings["mcpServers"] == {"codememory": {"command": "codememory", "args": ["mcp"]}}
    assert set(settings["hooks"]) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"}
    assert settings["hooks"]["AfterTool"] == [
        {
            "matcher": "write_file|replace",
            "hooks": [{"type": "command", "command": "codememory-hook gemini AfterTool", "timeout": 10_000}],
        }
    ]
    assert "`mcp_codememory_memory_search`" in (project / "GEMINI.md").read_text()
    copilot = json.loads((project / ".github" / "hooks" / "codememory.json").read_text())
    assert copilot["version"] == 1 and set(copilot["hooks"]) == {e.name for e in assistants.find("copilot").events}
    assert copilot["hooks"]["UserPromptSubmit"] == [
        {
            "type": "command",
            "bash": "codememory-hook copilot UserPromptSubmit",
            "powershell": "codememory-hook copilot UserPromptSubmit",
            "timeoutSec": 10,
        }
    ]
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["codememory"]["command"] == "codememory"
    # idempotent, and uninstall gives back the user's settings and removes what init created
    assert set(steps(init(invoke, project, "--assistants", "gemini,copilot")).values()) <= {"unchanged", "added"}
    init(invoke, project, "--uninstall", "--assistants", "copilot-cli,gemini-cli")  # aliases work too
    assert (project / ".gemini" / "settings.json").read_text() == '{"theme": "GitHub"}\n'
    assert not (project / ".github").exists() and not (project / ".mcp.json").exists()
    assert not (project / "GEMINI.md").exists() and not (project / "AGENTS.md").exists()


def test_copilot_uses_a_github_mcp_json_when_it_is_the_only_one(invoke: Invoke, env: dict[str, Path]) -> None:
    """Copilot CLI reads `.github/mcp.json` only when there is no `.mcp.json`: creating one would hide its servers."""
    project = env["project"]
    (project / ".github").mkdir()
    (project / ".github" / "mcp.json").write_text('{"mcpServers": {"db": {"command": "db-mcp"}}}\n')
    report = init(invoke, project, "--assistants", "copilot")
    assert steps(report)[("copilot", ".github/mcp.json")] == "added"
    assert not (project / ".mcp.json").exists()
    servers = json.loads((project / ".github" / "mcp.json").read_text())["mcpServers"]
    ours = {"type": "stdio", "command": "codememory", "args": ["mcp"]}
    assert servers == {"db": {"command": "db-mcp"}, "codememory": ours}
    # once the project has a .mcp.json, that is where Copilot looks: ours moves there
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    report = init(invoke, project, "--assistants", "copilot")
    assert steps(report)[("copilot", ".mcp.json")] == "added"
    assert steps(report)[("copilot", ".github/mcp.json")] == "removed"
    assert json.loads((project / ".github" / "mcp.json").read_text()) == {"mcpServers": {"db": {"command": "db-mcp"}}}
    init(invoke, project, "--uninstall", "--assistants", "copilot")
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}


def test_detection_and_names(invoke: Invoke, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    for cli in ("gemini", "copilot"):
        (env["bin"] / cli).write_text("#!/bin/sh\n")
        (env["bin"] / cli).chmod(0o755)
    assert init(invoke, env["project"])["assistants"] == ["gemini", "copilot"]
    other = env["project"].parent / "other"
    other.mkdir()
    (other / "GEMINI.md").write_text("# rules\n")
    monkeypatch.setenv("PATH", str(other))  # nothing on PATH: the project's own files say what it uses
    assert init(invoke, other)["assistants"] == ["gemini"]
    assert init(invoke, other, "--assistants", "Claude-Code,claude")["assistants"] == ["claude"]
    bad = invoke("--project", other, "init", "--assistants", "gemini,vscode")
    assert bad.exit_code == 2 and "vscode" in bad.stderr and "copilot" in bad.stderr


def git(root: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args]
    return subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.mark.slow  # the installed script and git
def test_what_a_team_commits_names_nothing_of_this_machine(console_script: Path, tmp_path: Path) -> None:
    """A teammate's checkout must run what init wrote: no path of this install (its virtualenv), no home folder, no
    binary; this machine's own paths only in the user's files (Codex's config.toml, outside the project)."""
    home = tmp_path / "home"
    project = home / "work" / "api"  # a project inside the home folder, as most are
    project.mkdir(parents=True)
    git(project, "init", "-q")
    environ = {
        **{k: v for k, v in os.environ.items() if k in ("LANG", "TMPDIR")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "CODEX_HOME": str(home / ".codex"),
        "PATH": f"{console_script.parent}{os.pathsep}{os.environ['PATH']}",
    }
    subprocess.run(
        [str(console_script), "init", "--assistants", "all"], cwd=project, env=environ, check=True, capture_output=True
    )
    added = git(project, "add", "-A", "--dry-run").split("\n")
    files = [line.removeprefix("add '").removesuffix("'") for line in added if line.startswith("add '")]
    per_assistant = {f for f in files if not f.startswith(".codememory/")}
    assert {".claude/settings.json", ".gemini/settings.json", ".github/hooks/codememory.json"} <= set(files)
    machine = [str(console_script.parent), str(console_script.parent.resolve()), str(home), str(Path.home())]
    for name in files:
        if name == ".codememory/memory.db":
            continue  # the store itself: git-ignored until the project shares its memory (sharing's rules)
        data = (project / name).read_bytes()
        assert b"\0" not in data, f"{name} is binary"
        text = data.decode("utf-8")
        assert not [m for m in machine if m in text], f"{name} names this machine: {text[:400]}"
    assert per_assistant  # the assistants' files were checked above
    codex = (home / ".codex" / "config.toml").read_text()
    assert str(console_script.parent) in codex  # the user's own file: this install, whatever the PATH
