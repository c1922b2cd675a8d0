"""`codememory init`: assistants' MCP server, hooks and rule block; idempotent; exact uninstall; registry; files a
team commits name the commands as every teammate runs them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codememory.assistants import cursor
from codememory.install import files, rule_block
from codememory.install import plan as setup
from conftest import Invoke

USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}],
    },
}
USER_MCP = {"mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": []}}}
USER_CODEX = 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'
PLUGIN_SOURCE = Path(__file__).resolve().parents[2] / "src" / "codememory" / "data" / "opencode" / "codememory.js"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A project, a user home and an empty PATH (nothing detected), all in tmp."""
    project, home, bin_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "bin"
    for d in (project, home, bin_dir):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex"))
    monkeypatch.setenv("PATH", str(bin_dir))
    return {"project": project, "home": home, "bin": bin_dir, "registry": home / "xdg" / "codememory" / "registry.json"}


def run(invoke: Invoke, project: Path, *args: str, code: int = 0) -> Any:
    result = invoke("--project", project, "init", *args)
    assert result.exit_code == code, result.output + result.stderr
    return json.loads(result.stdout) if "--json" in args and code == 0 else result


def snapshot(*roots: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".codememory" not in p.parts
    }


def seed_user_files(project: Path, home: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    (project / ".mcp.json").write_text(json.dumps(USER_MCP, indent=4))
    (project / "CLAUDE.md").write_text("# House rules\n\nUse tabs.")
    (home / "codex").mkdir()
    (home / "codex" / "config.toml").write_text(USER_CODEX)
    (project / "opencode.json").write_text('{"$schema": "https://opencode.ai/config.json", "mcp": {}}\n')


HOOK = "codememory-hook"  # the lean hook (never the full CLI's `hook` command), by name: on every teammate's PATH


def expected_settings() -> dict[str, Any]:
    def cmd(event: str) -> list[dict[str, Any]]:
        return [{"type": "command", "command": f"{HOOK} claude {event}", "timeout": 10}]

    return {
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}, {"hooks": cmd("Stop")}],
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]},
                {"matcher": "Write|Edit|MultiEdit", "hooks": cmd("PostToolUse")},
            ],
            "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": cmd("SessionStart")}],
            "UserPromptSubmit": [{"hooks": cmd("UserPromptSubmit")}],
            "PreCompact": [{"hooks": cmd("PreCompact")}],
            "SessionEnd": [{"hooks": cmd("SessionEnd")}],
        },
    }


def test_init_twice_then_uninstall_restores_everything(invoke: Invoke, env: dict[str, Path]) -> None:
    project, home = env["project"], env["home"]
    seed_user_files(project, home)
    before = snapshot(project, home)
    exe = setup.codememory_command()
    assert os.path.isabs(exe)

    first = run(invoke, project, "--assistants", "all", "--json")
    actions = {(s["assistant"], s["file"]): s["action"] for s in first["steps"]}
    assert actions[("claude", ".claude/settings.json")] == "added"
    assert actions[("claude", ".mcp.json")] == "added"
    assert actions[("claude", "CLAUDE.md")] == "added"
    assert actions[("codex", ".codex/hooks.json")] == "added"
    assert actions[("cursor", ".cursor/mcp.json")] == "added"
    assert actions[("opencode", "opencode.json")] == "unchanged"  # one tool set: the plugin's, no MCP server
    assert actions[("opencode", "AGENTS.md")] == "unchanged"  # codex already added the block
    assert actions[("opencode", ".opencode/plugin/codememory.js")] == "added"
    assert (project / ".opencode" / "plugin" / "codememory.js").read_text() == PLUGIN_SOURCE.read_text()
    assert actions[("codememory", str(env["registry"]))] == "added"

    # exact contents
    settings = (project / ".claude" / "settings.json").read_text()
    assert settings == json.dumps(expected_settings(), indent=2) + "\n"
    assert (project / ".mcp.json").read_text() == json.dumps(
        {
            "mcpServers": {
                **USER_MCP["mcpServers"],
                "codememory": {"type": "stdio", "command": "codememory", "args": ["mcp"]},
            }
        },
        indent=2,
    ) + "\n"
    assert actions[("copilot", ".mcp.json")] == "unchanged"  # Copilot CLI reads Claude Code's .mcp.json: one entry
    assert json.loads((project / ".cursor" / "mcp.json").read_text()) == {
        "mcpServers": {"codememory": {"command": "codememory", "args": ["mcp"]}}
    }
    assert json.loads((project / ".cursor" / "hooks.json").read_text()) == {
        "version": 1,
        "hooks": {e.name: [{"command": f"{HOOK} cursor {e.name}"}] for e in cursor.ASSISTANT.events},
    }
    codex_hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(codex_hooks) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    stop = {"type": "command", "command": f"{HOOK} codex Stop", "timeout": 10}
    assert codex_hooks["Stop"] == [{"hooks": [stop]}]
    assert (project / "opencode.json").read_bytes() == before[str(project / "opencode.json")]
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# House rules\n\nUse tabs.\n\n<!-- codememory:start -->\n## codememory\n")
    assert claude_md.endswith("<!-- codememory:end -->\n") and "`mcp__codememory__memory_retrieve`" in claude_md
    assert "`memory_retrieve`" in (project / ".cursorrules").read_text()
    assert "retrieve" not in (project / "AGENTS.md").read_text()  # OpenCode reads it too: it has no such tool
    assert (project / "AGENTS.md").read_text().count("codememory:start") == 1
    toml = (home / "codex" / "config.toml").read_text()
    # the user's own file
    table = f'[mcp_servers.codememory]\ncommand = {json.dumps(exe)}\nargs = ["mcp"]\nrequired = true\n'
    assert toml == f"{USER_CODEX}\n{files.TOML_START}\n{table}{files.TOML_END}\n"
    # backups of pre-existing files, byte-identical to the originals
    for name in (".claude/settings.json", ".mcp.json", "CLAUDE.md"):
        assert (project / (name + ".codememory-backup")).read_bytes() == before[str(project / name)]
    assert not (project / "opencode.json.codememory-backup").exists()
    assert (home / "codex" / "config.toml.codememory-backup").read_text() == USER_CODEX

    # second run: nothing changes
    after_first = snapshot(project, home)
    second = run(invoke, project, "--assistants", "all", "--json")
    assert {s["action"] for s in second["steps"]} <= {"unchanged", "skipped"}
    assert snapshot(project, home) == after_first
    listing = invoke("projects", "--json")
    assert [p["root"] for p in json.loads(listing.stdout)["projects"]] == [str(project.resolve())]

    # uninstall: the user's files are back byte for byte, ours are gone, the store is kept
    gone = run(invoke, project, "--uninstall", "--json")
    assert {s["action"] for s in gone["steps"]} <= {"removed", "unchanged", "skipped"}
    assert snapshot(project, home) == before
    assert not (project / ".cursor").exists() and not (project / ".codex").exists()
    assert not env["registry"].exists()
    assert (project / ".codememory" / "memory.db").is_file()
    again = run(invoke, project, "--uninstall", "--json")
    assert {s["action"] for s in again["steps"]} <= {"unchanged", "skipped"}


def test_uninstall_keeps_changes_made_after_init(invoke: Invoke, env: dict[str, Path]) -> None:
    project, home = env["project"], env["home"]
    seed_user_files(project, home)
    run(invoke, project, "--assistants", "claude,codex")
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    data["model"] = "opus"
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify"}]})
    path.write_text(json.dumps(data))
    claude_md = project / "CLAUDE.md"
    claude_md.write_text(claude_md.read_text() + "\nMore rules.\n")
    toml = home / "codex" / "config.toml"
    toml.write_text(toml.read_text() + '\n[profiles.fast]\nmodel = "mini"\n')

    run(invoke, project, "--uninstall", "--assistants", "claude,codex")
    expected = json.loads(json.dumps(USER_SETTINGS))
    expected["model"] = "opus"
    expected["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify"}]})
    assert json.loads(path.read_text()) == expected
    assert "codememory" not in claude_md.read_text() and claude_md.read_text().startswith("# House rules")
    assert "More rules." in claude_md.read_text()
    assert "codememory" not in toml.read_text() and "[profiles.fast]" in toml.read_text()
    assert 'model = "o3"' in toml.read_text()
    assert json.loads((project / ".mcp.json").read_text()) == USER_MCP
    assert not list(project.rglob("*.codememory-backup")) and not list(home.rglob("*.codememory-backup"))


def test_rule_block_is_replaced_not_duplicated(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    run(invoke, project, "--assistants", "cursor")
    rules = project / ".cursorrules"
    current = rules.read_text()
    rules.write_text("mine first\n" + current.replace("## codememory", "## codememory (old version)"))
    out = run(invoke, project, "--assistants", "cursor", "--json")
    step = next(s for s in out["steps"] if s["file"] == ".cursorrules")
    assert (step["assistant"], step["action"]) == ("cursor", "updated")
    assert rules.read_text() == "mine first\n" + current
    assert rules.read_text().count(rule_block.RULE_START) == 1


def test_assistants_none_only_creates_store_and_registers(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    (project / ".claude").mkdir()  # detected, but not chosen
    out = run(invoke, project, "--assistants", "none", "--json")
    assert out["assistants"] == []
    assert [s["action"] for s in out["steps"]] == ["added", "added"]
    assert sorted(p.name for p in project.iterdir()) == [".claude", ".codememory"]
    assert not any((project / ".claude").iterdir())
    assert json.loads(env["registry"].read_text())["projects"][0]["root"] == str(project.resolve())


def test_no_global_skips_the_registry(invoke: Invoke, env: dict[str, Path]) -> None:
    out = run(invoke, env["project"], "--assistants", "none", "--no-global", "--json")
    assert out["steps"][-1]["action"] == "skipped"
    assert not env["registry"].exists()
    assert "No projects registered" in invoke("projects").stdout


def test_malformed_json_aborts_without_writing_anything(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text('{"version": 1, "hooks": {')
    before = snapshot(project)
    result = run(invoke, project, "--assistants", "claude,cursor", code=1)
    assert "hooks.json" in result.stderr and "invalid JSON" in result.stderr and "Nothing was changed" in result.stderr
    assert snapshot(project) == before
    assert not (project / ".codememory").exists() and not env["registry"].exists()


def test_unexpected_shape_and_malformed_toml_abort(invoke: Invoke, env: dict[str, Path]) -> None:
    project, home = env["project"], env["home"]
    (project / ".mcp.json").write_text('{"mcpServers": []}')
    assert "unexpected shape" in run(invoke, project, "--assistants", "claude", code=1).stderr
    (project / ".mcp.json").unlink()
    (home / "codex").mkdir()
    (home / "codex" / "config.toml").write_text("model = \n")
    assert "invalid TOML" in run(invoke, project, "--assistants", "codex", code=1).stderr
    assert not (project / ".codex").exists() and not (project / "AGENTS.md").exists()


def test_foreign_servers_named_codememory_are_left_alone(invoke: Invoke, env: dict[str, Path]) -> None:
    project, home = env["project"], env["home"]
    (home / "codex").mkdir()
    own = '[mcp_servers.codememory]\ncommand = "/opt/cm/codememory"\nargs = ["mcp"]\n'
    (home / "codex" / "config.toml").write_text(own)
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text('{"mcpServers": {"codememory": {"command": "something-else"}}}')
    out = run(invoke, project, "--assistants", "codex,cursor", "--json")
    skipped = {s["file"] for s in out["steps"] if s["action"] == "skipped"}
    assert {str(home / "codex" / "config.toml"), ".cursor/mcp.json"} <= skipped
    assert (home / "codex" / "config.toml").read_text() == own
    run(invoke, project, "--uninstall")
    assert (home / "codex" / "config.toml").read_text() == own
    assert "something-else" in (project / ".cursor" / "mcp.json").read_text()


def test_detection_uses_path_and_project_folders(invoke: Invoke, env: dict[str, Path]) -> None:
    fake = env["bin"] / "codex"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (env["project"] / ".cursor").mkdir()
    out = run(invoke, env["project"], "--json")
    assert out["assistants"] == ["codex", "cursor"]
    assert not (env["project"] / "CLAUDE.md").exists() and (env["project"] / ".cursorrules").exists()


def test_bad_assistants_value(invoke: Invoke, env: dict[str, Path]) -> None:
    result = run(invoke, env["project"], "--assistants", "claude,vim", code=2)
    assert "vim" in result.stderr


def test_installed_script_writes_commands_by_name_and_warns_when_path_lacks_them(
    console_script: Path, env: dict[str, Path]
) -> None:
    """The project's files name `codememory-hook` and `codememory` (a teammate's checkout must run them too); a
    codememory whose folder is not on PATH is then not found by the assistants: init says so, and how to fix it."""
    project, home = env["project"], env["home"]
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg"), "CODEX_HOME": str(home / "c")}
    environ["PATH"] = str(env["bin"])
    args = [str(console_script), "--project", str(project), "init", "--assistants", "claude,codex"]
    done = subprocess.run([*args, "--json"], env=environ, check=True, capture_output=True, text=True)
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "codememory-hook claude Stop"
    [warning] = json.loads(done.stdout)["warnings"]
    assert "not found on PATH" in warning and f"add {console_script.parent} to PATH" in warning
    # the user's own Codex config names this install's absolute path: it works whatever the PATH
    assert json.dumps(str(console_script.absolute())) in (home / "c" / "config.toml").read_text()
    text = subprocess.run(args, env=environ, check=True, capture_output=True, text=True)
    assert "warning: codememory and codememory-hook not found on PATH" in text.stderr
    # with this install's folder on PATH, nothing to warn about
    environ["PATH"] = f"{console_script.parent}{os.pathsep}{env['bin']}"
    done = subprocess.run([*args, "--json"], env=environ, check=True, capture_output=True, text=True)
    assert json.loads(done.stdout)["warnings"] == []
    # another codememory first on PATH: the assistants would run that one
    other = env["bin"] / "codememory"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    (env["bin"] / "codememory-hook").write_bytes(other.read_bytes())
    (env["bin"] / "codememory-hook").chmod(0o755)
    environ["PATH"] = f"{env['bin']}{os.pathsep}{console_script.parent}"
    done = subprocess.run([*args, "--json"], env=environ, check=True, capture_output=True, text=True)
    [warning] = json.loads(done.stdout)["warnings"]
    assert f"the codememory on PATH is {other}" in warning
    listed = subprocess.run([str(console_script), "projects"], env=environ, check=True, capture_output=True, text=True)
    assert str(project.resolve()) in listed.stdout


def test_user_level_codex_server_is_kept_while_other_projects_use_it(invoke: Invoke, env: dict[str, Path]) -> None:
    first, second = env["project"], env["project"].parent / "second"
    second.mkdir()
    run(invoke, first, "--assistants", "codex")
    run(invoke, second, "--assistants", "codex")
    config = env["home"] / "codex" / "config.toml"
    out = run(invoke, first, "--uninstall", "--json")
    step = next(s for s in out["steps"] if s["file"] == str(config))
    assert step["action"] == "skipped" and "1 other" in step["reason"]
    assert "mcp_servers.codememory" in config.read_text()
    assert not (first / ".codex").exists()
    run(invoke, second, "--uninstall")
    assert not config.exists() and not env["registry"].exists()


def test_opencode_plugin_is_copied_updated_and_removed(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    plugin = project / ".opencode" / "plugin" / "codememory.js"
    first = run(invoke, project, "--assistants", "opencode", "--json")
    step = next(s for s in first["steps"] if s["file"] == ".opencode/plugin/codememory.js")
    assert (step["action"], step["reason"]) == ("added", "plugin")
    assert plugin.read_text() == PLUGIN_SOURCE.read_text()
    # idempotent
    again = run(invoke, project, "--assistants", "opencode", "--json")
    assert next(s for s in again["steps"] if s["file"] == ".opencode/plugin/codememory.js")["action"] == "unchanged"
    # an older copy of ours is replaced, without a backup (uninstall must never bring an old plugin back)
    older = PLUGIN_SOURCE.read_text().replace("MAX_PHRASES = 8", "MAX_PHRASES = 4")
    assert older != PLUGIN_SOURCE.read_text()
    plugin.write_text(older)
    updated = run(invoke, project, "--assistants", "opencode", "--json")
    assert next(s for s in updated["steps"] if s["file"] == ".opencode/plugin/codememory.js")["action"] == "updated"
    assert plugin.read_text() == PLUGIN_SOURCE.read_text()
    assert not list(project.rglob("*.codememory-backup"))
    # OpenCode writes its own files next to the plugin folder: uninstall removes only ours
    (project / ".opencode" / "package.json").write_text('{"dependencies": {}}\n')
    (project / ".opencode" / "plugin" / "mine.ts").write_text("export const Mine = async () => ({})\n")
    gone = run(invoke, project, "--uninstall", "--assistants", "opencode", "--json")
    assert next(s for s in gone["steps"] if s["file"] == ".opencode/plugin/codememory.js")["action"] == "removed"
    assert not plugin.exists() and (project / ".opencode" / "plugin" / "mine.ts").exists()
    (project / ".opencode" / "plugin" / "mine.ts").unlink()
    (project / ".opencode" / "package.json").unlink()
    run(invoke, project, "--assistants", "opencode")
    run(invoke, project, "--uninstall", "--assistants", "opencode")
    assert not (project / ".opencode").exists()  # created by init, empty again: pruned


def test_a_foreign_plugin_file_of_the_same_name_is_left_alone(invoke: Invoke, env: dict[str, Path]) -> None:
    project = env["project"]
    plugin = project / ".opencode" / "plugin" / "codememory.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Other = async () => ({})\n")
    out = run(invoke, project, "--assistants", "opencode", "--json")
    step = next(s for s in out["steps"] if s["file"] == ".opencode/plugin/codememory.js")
    assert step["action"] == "skipped" and "left alone" in step["reason"]
    run(invoke, project, "--uninstall", "--assistants", "opencode")
    assert plugin.read_text() == "export const Other = async () => ({})\n"


def test_rerun_replaces_the_full_cli_hook_of_an_older_install(invoke: Invoke, env: dict[str, Path]) -> None:
    """Installs made before the lean hook ran `codememory hook …` (a full CLI start on every prompt)."""
    project = env["project"]
    exe = setup.codememory_command()
    (project / ".claude").mkdir()
    old = {"type": "command", "command": f"{exe} hook claude UserPromptSubmit", "timeout": 10}
    lean = {"type": "command", "command": f"{Path(exe).with_name(HOOK)} claude Stop", "timeout": 10}  # by path
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [old]}], "Stop": [{"hooks": [lean]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    run(invoke, project, "--assistants", "claude")
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    commands = [h["command"] for event in ("UserPromptSubmit", "Stop") for g in hooks[event] for h in g["hooks"]]
    assert commands == [f"{HOOK} claude UserPromptSubmit", f"{HOOK} claude Stop"]


def test_uninstall_counts_the_files_of_assistants_never_set_up_instead_of_listing_them(
    invoke: Invoke, env: dict[str, Path]
) -> None:
    """A user trial: `init --uninstall` printed 18 "unchanged ... (not present)" lines around the 3 it removed."""
    project = env["project"]
    run(invoke, project, "--assistants", "claude", "--json")
    done = invoke("--project", project, "init", "--uninstall", "--no-global")
    assert done.exit_code == 0, done.output
    assert "not present" not in done.stdout
    assert [line.split()[1] for line in done.stdout.splitlines() if line.split()[0] == "claude"] == ["removed"] * 3
    assert done.stdout.splitlines()[-1].startswith("  nothing of codememory's in ")
    steps = run(invoke, project, "--uninstall", "--no-global", "--json")["steps"]
    assert any(s["reason"] == "not present" for s in steps)  # --json still has every step
