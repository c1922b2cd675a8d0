"""`codememory init --extract-with opencode|claude|codex|none`: the extraction model path, written to `[llm]` of the
user's own config (comments and other settings kept, never the project's committed config), with a daily token
budget, said back with its cost; asked on a terminal only, and only until the user has chosen."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import Invoke

USER_CONFIG = """# my own settings
[embedding]
provider = "none"  # keep it light

[llm]
timeout = 90  # my slow machine
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A project, a user home whose config has comments, and a PATH with stand-in agent CLIs (claude and opencode)."""
    project, home, bin_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "bin"
    for d in (project, home, bin_dir):
        d.mkdir()
    for name in ("claude", "opencode"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex"))
    monkeypatch.setenv("PATH", str(bin_dir))
    config = home / "xdg" / "codememory" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(USER_CONFIG)
    return {"project": project, "home": home, "bin": bin_dir, "config": config}


def init(invoke: Invoke, env: dict[str, Path], *args: str, code: int = 0) -> Any:
    result = invoke("--project", env["project"], "init", "--assistants", "none", "--no-global", *args)
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout) if "--json" in args and code == 0 else result


def llm_section(env: dict[str, Path]) -> dict[str, Any]:
    return dict(tomllib.loads(env["config"].read_text())["llm"])


def test_extract_with_claude_writes_the_users_own_config_and_says_the_cost(
    invoke: Invoke, env: dict[str, Path]
) -> None:
    result = init(invoke, env, "--extract-with", "claude")
    lines = result.stdout.splitlines()[-2:]
    assert lines[0].startswith("Extraction: `claude -p` (its own model setting) reads each finished session: about ")
    assert "tokens a session (at most 60,000), at most 200,000 a day in each project" in lines[0]
    assert lines[0].endswith("billed to your Claude plan or Anthropic API key.")
    assert lines[1].startswith("Turn it off: codememory init --extract-with none") and str(env["config"]) in lines[1]

    text = env["config"].read_text()
    assert text.startswith(USER_CONFIG)  # the user's comments and settings stay as they were
    assert llm_section(env) == {"timeout": 90, "provider": "claude", "daily_token_budget": 200_000}
    project_config = env["project"] / ".codememory" / "config.toml"
    assert not project_config.exists() or "[llm]" not in project_config.read_text()  # never the committed config

    again = init(invoke, env, "--extract-with", "claude", "--json")
    extraction = again["extraction"]
    assert extraction == {
        "provider": "claude",
        "command": "claude -p",
        "model": "",
        "tokens_per_session": extraction["tokens_per_session"],
        "session_token_budget": 60_000,
        "daily_token_budget": 200_000,
        "billed_to": "your Claude plan or Anthropic API key",
        "config": str(env["config"]),
        "changed": False,  # the same choice twice changes no byte
    }
    assert 2_000 < extraction["tokens_per_session"] < 60_000
    assert env["config"].read_text() == text


def test_model_budget_and_switching(invoke: Invoke, env: dict[str, Path]) -> None:
    init(invoke, env, "--extract-with", "claude", "--extract-model", "haiku", "--daily-tokens", "50000")
    assert llm_section(env) == {"timeout": 90, "provider": "claude", "model": "haiku", "daily_token_budget": 50_000}
    # the same CLI again keeps the user's model and budget; another one drops a model that means nothing to it
    assert init(invoke, env, "--extract-with", "claude", "--json")["extraction"]["model"] == "haiku"
    assert llm_section(env)["daily_token_budget"] == 50_000
    report = init(invoke, env, "--extract-with", "opencode", "--json")["extraction"]
    assert (report["provider"], report["model"], report["daily_token_budget"]) == ("opencode", "", 200_000)
    assert "model" not in llm_section(env)
    off = init(invoke, env, "--extract-with", "none", "--json")["extraction"]
    assert off["provider"] == "none" and off["tokens_per_session"] is None and off["changed"] is True
    assert llm_section(env) == {"timeout": 90, "provider": "none", "daily_token_budget": 200_000}
    text = init(invoke, env, "--extract-with", "none").stdout
    assert "Extraction: rules only, no model (free)." in text


def test_a_missing_cli_or_a_broken_config_stops_init_before_anything_is_written(
    invoke: Invoke, env: dict[str, Path]
) -> None:
    result = init(invoke, env, "--extract-with", "codex", code=2)
    assert result.stderr == (
        "codememory: error: config llm.codex_bin: 'codex' is not an executable on PATH "
        "(install Codex: npm i -g @openai/codex)\n"
    )
    assert not (env["project"] / ".codememory").exists() and env["config"].read_text() == USER_CONFIG

    env["config"].write_text("[llm\nprovider = 'x'\n")
    result = init(invoke, env, "--extract-with", "claude", code=2)
    assert (
        result.stderr.startswith(f"codememory: error: cannot read {env['config']}") and "Traceback" not in result.output
    )
    assert not (env["project"] / ".codememory").exists()

    for args in (("--extract-model", "haiku"), ("--uninstall", "--extract-with", "none")):
        result = init(invoke, env, *args, code=2)
        assert "Traceback" not in result.output
    result = init(invoke, env, "--extract-with", "claude", "--daily-tokens", "0", code=2)
    assert "--daily-tokens must be positive" in result.stderr


def test_a_linked_user_config_is_edited_where_the_link_points(invoke: Invoke, env: dict[str, Path]) -> None:
    dotfiles = env["home"] / "dotfiles" / "codememory.toml"
    dotfiles.parent.mkdir()
    env["config"].rename(dotfiles)
    env["config"].symlink_to(dotfiles)
    init(invoke, env, "--extract-with", "claude")
    assert env["config"].is_symlink() and 'provider = "claude"' in dotfiles.read_text()


# ------------------------------------------------------------------------------------------ on a terminal
CODEMEMORY = str(Path(sys.executable).with_name("codememory"))


def on_terminal(env: dict[str, Path], answer: str | None) -> str:
    """`codememory init` in a pseudo-terminal (as a person runs it), answering its question with `answer`; what it
    printed."""
    environ = {**os.environ, "HOME": str(env["home"]), "XDG_CONFIG_HOME": str(env["home"] / "xdg"),
               "PATH": f"{env['bin']}{os.pathsep}/usr/bin{os.pathsep}/bin"}  # fmt: skip
    leader, follower = pty.openpty()
    args = [CODEMEMORY, "--project", str(env["project"]), "init", "--assistants", "none", "--no-global"]
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=environ, close_fds=True)
    os.close(follower)
    seen = b""
    answered = answer is None
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output within 60 s: {seen!r}")
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"Extract with" in seen:
            os.write(leader, (answer or "").encode() + b"\n")
            answered = True
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, seen
    return seen.decode().replace("\r\n", "\n")


@pytest.mark.slow  # two codememory processes in a pseudo-terminal
def test_on_a_terminal_init_asks_once_offering_the_installed_clis(env: dict[str, Path]) -> None:
    shown = on_terminal(env, "claude")
    assert "by rules (free), or better by your own agent CLI, which costs tokens of your plan" in shown
    assert "Extract with (none, opencode, claude) [none]:" in shown  # the CLIs on PATH; codex is not installed
    assert "Extraction: `claude -p`" in shown
    assert llm_section(env)["provider"] == "claude"
    again = on_terminal(env, None)  # chosen: not asked again
    assert "Extract with" not in again and "Extraction:" not in again
