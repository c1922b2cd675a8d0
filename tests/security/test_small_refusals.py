"""The small holes, each driven through the real entry points, each answered with our own one-line error or a
refusal, never a traceback:

- a checkpoint slug of 200+ characters or a tool name of 300+ (MCP with the official client, the daemon);
- the daemon's log is created 0600 (and an older 0644 one, with its backups, made 0600);
- an unknown section or key in a committed config.toml is ignored with one warning line: memory stays on (hook, CLI);
- a store whose schema is newer than the code is refused, also when a newer codememory migrates it under a running
  daemon or MCP server;
- no `markdown_path` is handed out for a session file that is a link, or in a sessions folder that is one."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory import Store
from codememory.store.migrations import LATEST
from conftest import invoke_cli
from support.daemon import isolated_env, make_project, spawn, state_of
from support.mcp import CODEMEMORY, session_with

HOOK = Path(sys.executable).with_name("codememory-hook")


async def tool(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await session.call_tool(name, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    return bool(result.isError), text


def mcp(project: Path, body: Any, errlog: Path) -> Any:
    with errlog.open("w") as err:
        return session_with(CODEMEMORY, ["--project", project, "mcp"], body, errlog=err)


def hook(
    project: Path, event: str, env: dict[str, str] | None = None, **extra: Any
) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": f"s-{event}", "cwd": str(project), "hook_event_name": event, **extra}
    done = subprocess.run(
        [str(HOOK), "claude", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        env={**(env or os.environ), "CODEMEMORY_HOOK_NO_DAEMON": "1"},
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


# ------------------------------------------------------------------------------------ slugs and tool names
@pytest.mark.slow  # the MCP server and a daemon
def test_a_long_slug_or_tool_name_is_our_error(project: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "mcp-stderr.txt"

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [
            await tool(session, "checkpoint", {"slug": "x" * 250, "goal": "g"}),
            await tool(session, "checkpoint", {"slug": "deploy", "goal": "g", "tool": "t" * 310}),
            await tool(session, "checkpoint", {"slug": "a" * 80, "goal": "g", "tool": "c" * 40}),
        ]

    long_slug, long_tool, at_the_limits = mcp(project, body, errlog)
    assert long_slug[0] and "is longer than 80 characters" in long_slug[1] and "\n" not in long_slug[1]
    assert long_tool[0] and "is longer than 40 characters" in long_tool[1]
    assert not at_the_limits[0], at_the_limits[1]
    assert "Traceback" not in errlog.read_text() and "AssertionError" not in errlog.read_text()

    env = isolated_env(tmp_path / "daemon")
    root = tmp_path / "daemon-project"
    make_project(env, root)
    d = spawn(env)
    try:
        answer = d.client().request(
            "POST", "/sessions/checkpoint", {"project_root": str(root), "slug": "y" * 250, "goal": "g"}
        )
        assert answer.status == 400 and "longer than 80 characters" in answer.data["error"], answer.data
    finally:
        d.terminate()


# -------------------------------------------------------------------------------------------- daemon.log
@pytest.mark.slow  # a daemon
def test_the_daemon_log_is_the_owners_only(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    state = state_of(env)
    state.mkdir(parents=True, exist_ok=True)
    (state / "daemon.log.1").write_text("an older rotation\n")
    os.chmod(state / "daemon.log.1", 0o644)
    d = spawn(env)
    try:
        assert stat.S_IMODE((state / "daemon.log").stat().st_mode) == 0o600
        assert stat.S_IMODE((state / "daemon.log.1").stat().st_mode) == 0o600
    finally:
        d.terminate()
    os.chmod(state / "daemon.log", 0o644)  # an older codememory's
    d = spawn(env)
    try:
        assert stat.S_IMODE((state / "daemon.log").stat().st_mode) == 0o600
    finally:
        d.terminate()


# ------------------------------------------------------------------------------------------- config.toml
def test_an_unknown_section_in_a_committed_config_leaves_memory_on(project: Path) -> None:
    with Store.open(project) as store:
        # a standing instruction: what the session-start block shows
        store.add("Deploys go through make deploy-staging", category="convention", importance=0.9)
    (project / ".codememory" / "config.toml").write_text("[futurefeature]\nx = 1\n\n[search]\nfoo = 2\n")
    done = hook(project, "SessionStart", source="startup")
    assert "make deploy-staging" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    warnings = [line for line in done.stderr.splitlines() if "ignoring unknown or invalid settings" in line]
    assert len(warnings) == 1 and "futurefeature, search.foo" in warnings[0]
    listed = invoke_cli("--project", project, "list", "--json")
    assert listed.exit_code == 0 and "make deploy-staging" in listed.stdout
    assert listed.stderr.count("ignoring unknown or invalid settings") == 1
    # the user's own file is theirs: a typo there is still a clear error
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    user.write_text(user.read_text() + "\n[futurefeature]\nx = 1\n")
    refused = invoke_cli("--project", project, "list")
    assert refused.exit_code == 2 and "unknown section(s) futurefeature" in refused.stderr


# ------------------------------------------------------------------------------------------ newer schema
def migrated_by_a_newer_codememory(project: Path) -> None:
    with closing(sqlite3.connect(project / ".codememory" / "memory.db")) as conn:
        conn.execute(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'future', '2027-01-01')", (LATEST + 1,)
        )
        conn.execute(f"PRAGMA user_version = {LATEST + 1}")
        conn.commit()


NEWER = f"newer than this codememory knows ({LATEST}); upgrade codememory"


@pytest.mark.slow  # the MCP server and a daemon
def test_a_store_newer_than_the_code_is_refused_everywhere(project: Path, tmp_path: Path) -> None:
    with Store.open(project) as store:
        store.add("Deploys go through make deploy-staging")
    errlog = tmp_path / "mcp-stderr.txt"

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        before = await tool(session, "memory_search", {"query": "deploys"})
        migrated_by_a_newer_codememory(project)  # while this server holds the store open
        return [before, await tool(session, "memory_search", {"query": "deploys"})]

    before, after = mcp(project, body, errlog)
    assert not before[0] and after[0] and NEWER in after[1]
    listed = invoke_cli("--project", project, "list")
    assert listed.exit_code != 0 and NEWER in listed.stderr and "Traceback" not in listed.output
    assert hook(project, "SessionStart", source="startup").stdout == ""  # fails open: nothing injected
    log = (project / ".codememory" / "logs" / "hooks.log").read_text()
    assert NEWER in log.splitlines()[-1]
    # a store whose recorded migrations run past this code's, whatever its user_version says
    with closing(sqlite3.connect(project / ".codememory" / "memory.db")) as conn:
        conn.execute(f"PRAGMA user_version = {LATEST}")
        conn.commit()
    assert NEWER in invoke_cli("--project", project, "list").stderr

    env = isolated_env(tmp_path / "daemon")
    root = tmp_path / "daemon-project"
    make_project(env, root, "Deploys go through make deploy-staging")
    d = spawn(env)
    try:
        search = {"project_root": str(root), "query": "deploys"}
        assert d.client().request("POST", "/memory/search", search).status == 200
        migrated_by_a_newer_codememory(root)  # a newer codememory migrates it in place while the daemon has it open
        answer = d.client().request("POST", "/memory/search", search)
        assert answer.status == 503 and NEWER in answer.data["error"], answer.data
    finally:
        d.terminate()


# ----------------------------------------------------------------------------------------- markdown_path
@pytest.mark.slow  # the MCP server
def test_no_markdown_path_for_a_session_file_that_is_a_link(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# not a session: the user's notes\n")
    with Store.open(project) as store:
        linked = store.checkpoint(tool="cursor", slug="linked", goal="Harden the deploy").session_id
        plain = store.checkpoint(tool="codex", slug="plain", goal="Harden the build").session_id
    sessions = project / ".codememory" / "sessions"
    (sessions / f"{linked}.md").unlink()
    os.symlink(outside, sessions / f"{linked}.md")  # committed as a link out of the project
    errlog = tmp_path / "mcp-stderr.txt"

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [
            await tool(session, "search_sessions", {"query": "harden"}),
            await tool(session, "list_sessions", {}),
        ]

    found, listed = mcp(project, body, errlog)
    for is_error, text in (found, listed):
        assert not is_error, text
        data = json.loads(text)
        paths = {r["session_id"]: r["markdown_path"] for r in data.get("results", data.get("sessions", []))}
        assert paths[linked] is None and paths[plain] == str(sessions / f"{plain}.md")
        assert str(outside) not in text
    cli = json.loads(invoke_cli("--project", project, "sessions", "list", "--json").stdout)
    assert {s["session_id"]: s["markdown_path"] for s in cli["sessions"]}[linked] is None
    shown = invoke_cli("--project", project, "sessions", "list")
    assert "not shown" in shown.stdout and str(outside) not in shown.stdout
