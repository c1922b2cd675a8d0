"""`codememory init` gives OpenCode one tool set: the plugin's. The MCP server is not registered for OpenCode, an
older install's `mcp.codememory` (and only ours) is taken out on re-run, exactly as uninstall takes it; when the plugin
cannot be installed the MCP server is registered instead, and init says why. `--uninstall` still cleans both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codememory.install import plan as setup
from conftest import Invoke

PLUGIN = ".opencode/plugin/codememory.js"
PLUGIN_SOURCE = Path(__file__).resolve().parents[2] / "src" / "codememory" / "data" / "opencode" / "codememory.js"
USER_CONFIG = {"$schema": "https://opencode.ai/config.json", "mcp": {"github": {"type": "remote", "url": "https://x"}}}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    return root


def init(invoke: Invoke, project: Path, *args: str) -> dict[tuple[str, str], dict[str, str]]:
    result = invoke("--project", project, "init", "--assistants", "opencode", *args, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    return {(s["assistant"], s["file"]): s for s in json.loads(result.stdout)["steps"]}


def ours(exe: str) -> dict[str, Any]:
    return {"type": "local", "command": [exe, "mcp"]}


def older_install(project: Path, config: dict[str, Any] | None, *, backup: bytes | None = None) -> None:
    """What an init from before the one-tool-set change left: the plugin and our MCP server in opencode.json (by
    this machine's absolute path, as inits did then)."""
    (project / ".opencode" / "plugin").mkdir(parents=True, exist_ok=True)
    (project / PLUGIN).write_text(PLUGIN_SOURCE.read_text())
    mcp = {**((config or {}).get("mcp") or {}), "codememory": ours(setup.codememory_command())}
    (project / "opencode.json").write_text(json.dumps({**(config or {}), "mcp": mcp}, indent=2) + "\n")
    if backup is not None:
        (project / "opencode.json.codememory-backup").write_bytes(backup)


def test_a_fresh_init_installs_the_plugin_and_no_mcp_server(invoke: Invoke, project: Path) -> None:
    steps = init(invoke, project)
    assert steps[("opencode", PLUGIN)]["action"] == "added"
    assert ("opencode", "opencode.json") not in steps  # nothing to take out, nothing written
    assert not (project / "opencode.json").exists()
    (project / "opencode.json").write_text(json.dumps(USER_CONFIG))
    again = init(invoke, project)
    assert again[("opencode", "opencode.json")] == {
        "assistant": "opencode",
        "file": "opencode.json",
        "action": "unchanged",
        "reason": "no MCP server: the plugin's tools replace it",
    }
    assert json.loads((project / "opencode.json").read_text()) == USER_CONFIG


def test_rerun_on_an_older_install_takes_out_the_mcp_server_it_created(invoke: Invoke, project: Path) -> None:
    older_install(project, None)  # opencode.json was created by that init
    steps = init(invoke, project)
    assert steps[("opencode", "opencode.json")]["action"] == "removed"
    assert steps[("opencode", "opencode.json")]["reason"] == "MCP server: the plugin's tools replace it"
    assert not (project / "opencode.json").exists()
    assert steps[("opencode", PLUGIN)]["action"] == "unchanged"
    assert {s["action"] for s in init(invoke, project).values()} <= {"unchanged"}  # then idempotent


def test_rerun_restores_the_users_file_or_keeps_what_they_added_since(invoke: Invoke, project: Path) -> None:
    original = (json.dumps(USER_CONFIG, indent=4) + "\n").encode()
    older_install(project, USER_CONFIG, backup=original)
    init(invoke, project)
    assert (project / "opencode.json").read_bytes() == original  # the backup's bytes, backup gone
    assert not (project / "opencode.json.codememory-backup").exists()

    (project / PLUGIN).unlink()
    (project / "opencode.json").unlink()
    edited = {**USER_CONFIG, "model": "anthropic/claude"}  # changed after that init
    older_install(project, edited, backup=original)
    init(invoke, project)
    assert json.loads((project / "opencode.json").read_text()) == edited
    assert not (project / "opencode.json.codememory-backup").exists()


def test_a_codememory_server_that_is_not_ours_is_left_alone(invoke: Invoke, project: Path) -> None:
    config = {"mcp": {"codememory": {"type": "remote", "url": "https://memory.example"}}}
    (project / "opencode.json").write_text(json.dumps(config))
    steps = init(invoke, project)
    assert steps[("opencode", "opencode.json")]["action"] == "unchanged"
    assert json.loads((project / "opencode.json").read_text()) == config


def test_without_the_plugin_the_mcp_server_is_registered_and_init_says_why(invoke: Invoke, project: Path) -> None:
    (project / ".opencode" / "plugin").mkdir(parents=True)
    (project / PLUGIN).write_text("export const Other = async () => ({})\n")
    steps = init(invoke, project)
    assert steps[("opencode", PLUGIN)]["action"] == "skipped"
    server = steps[("opencode", "opencode.json")]
    assert server["action"] == "added"
    assert "instead of the plugin's tools" in server["reason"] and "in the way" in server["reason"]
    assert json.loads((project / "opencode.json").read_text()) == {"mcp": {"codememory": ours("codememory")}}
    shown = invoke("--project", project, "init", "--assistants", "opencode")
    assert "instead of the plugin's tools" in shown.stdout  # the plain output says it too
    # the foreign file goes: the next init installs the plugin and takes the server out again
    (project / PLUGIN).unlink()
    steps = init(invoke, project)
    assert (steps[("opencode", PLUGIN)]["action"], steps[("opencode", "opencode.json")]["action"]) == (
        "added",
        "removed",
    )
    assert not (project / "opencode.json").exists()


def test_uninstall_cleans_the_plugin_and_an_older_installs_server(invoke: Invoke, project: Path) -> None:
    older_install(project, USER_CONFIG)
    steps = init(invoke, project, "--uninstall")
    assert steps[("opencode", PLUGIN)]["action"] == "removed"
    assert steps[("opencode", "opencode.json")]["action"] == "removed"
    assert json.loads((project / "opencode.json").read_text()) == USER_CONFIG
    assert not (project / ".opencode").exists()


def test_an_opencode_jsonc_naming_codememory_gets_a_note(invoke: Invoke, project: Path) -> None:
    (project / "opencode.jsonc").write_text('{\n  // mine\n  "mcp": {"codememory": {"type": "local"}}\n}\n')
    steps = init(invoke, project)
    assert steps[("opencode", "opencode.jsonc")]["action"] == "skipped"
    assert "remove that by hand" in steps[("opencode", "opencode.jsonc")]["reason"]
    assert "// mine" in (project / "opencode.jsonc").read_text()
