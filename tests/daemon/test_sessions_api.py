"""The daemon's session endpoints (`/sessions/checkpoint`, `/search`, `/list`, `/files`: the OpenCode plugin's
session tools): a real daemon over a real project, answering what the MCP tools of the same names answer from the
same store (the official MCP client against a real `codememory mcp`), with the same validation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from support.daemon import Daemon, isolated_env, make_project, spawn
from support.mcp import call, call_error, session_with
from support.opencode import make_git_project

pytestmark = pytest.mark.slow  # a daemon subprocess and an MCP server

CHECKPOINT = {
    "slug": "rate-limiter",
    "goal": "Add a rate limiter to the public API",
    "decisions": ["**Redis:** atomic INCR with expiry"],
    "work_completed": ["Chose the storage"],
    "work_pending": ["Wire the limiter into the gateway"],
    "plan_files": [{"path": "PLAN.md", "header": "# Plan"}],
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    base = tmp_path_factory.mktemp("sessions-api")
    env = isolated_env(base)
    project = make_git_project(base / "project")
    make_project(env, project)
    (project / "PLAN.md").write_text("# Plan\n")
    daemon = spawn(env)
    try:
        yield daemon, project.resolve()
    finally:
        daemon.terminate()


def post(daemon: Daemon, path: str, body: dict[str, Any], project: Path) -> tuple[int, Any]:
    resp = daemon.client().request("POST", path, {"project_root": str(project), **body})
    return resp.status, resp.data


def test_a_checkpoint_is_listed_searched_and_its_files_given_like_the_mcp_tools(
    world: tuple[Daemon, Path], console_script: Path
) -> None:
    daemon, project = world
    status, saved = post(daemon, "/sessions/checkpoint", CHECKPOINT, project)
    assert status == 200, saved
    assert set(saved) == {"session_id", "markdown_path", "status", "created", "files_touched"}
    assert saved["created"] is True and "_opencode_rate-limiter" in saved["session_id"]  # the plugin's tool name
    markdown = Path(saved["markdown_path"])
    assert markdown.is_file() and "Add a rate limiter" in markdown.read_text() and "PLAN.md" in markdown.read_text()
    again = post(daemon, "/sessions/checkpoint", {"slug": "rate-limiter", "work_completed": ["Wired it"]}, project)
    assert again[0] == 200 and again[1]["session_id"] == saved["session_id"] and again[1]["created"] is False

    listed = post(daemon, "/sessions/list", {}, project)[1]
    found = post(daemon, "/sessions/search", {"query": "rate limiter"}, project)[1]
    files = post(daemon, "/sessions/files", {"session_id": saved["session_id"]}, project)[1]
    assert [s["session_id"] for s in listed["sessions"]] == [saved["session_id"]]
    assert found["results"][0]["session_id"] == saved["session_id"]
    assert files["session_id"] == saved["session_id"]

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "list": await call(session, "list_sessions", {}),
            "search": await call(session, "search_sessions", {"query": "rate limiter"}),
            "files": await call(session, "get_session_files", {"session_id": saved["session_id"]}),
        }

    mcp = session_with(console_script, ["--project", project, "mcp"], body)
    assert mcp == {"list": listed, "search": found, "files": files}


REFUSED: list[tuple[str, str, dict[str, Any]]] = [
    ("/sessions/files", "get_session_files", {"session_id": "not-a-session"}),
    ("/sessions/list", "list_sessions", {"limit": 0}),
    ("/sessions/list", "list_sessions", {"status": "done"}),
    ("/sessions/search", "search_sessions", {"query": "x", "limit": 6}),
    ("/sessions/checkpoint", "checkpoint", {"trigger": "whim"}),
    ("/sessions/checkpoint", "checkpoint", {"plan_files": [{"file": "x"}]}),
    ("/sessions/checkpoint", "checkpoint", {"work_pending": ["x"] * 101}),
    ("/sessions/checkpoint", "checkpoint", {"slug": "x", "colour": "red"}),
]


def test_what_the_mcp_tool_refuses_the_endpoint_refuses(world: tuple[Daemon, Path], console_script: Path) -> None:
    daemon, project = world
    for path, _, arguments in REFUSED:
        status, answer = post(daemon, path, arguments, project)
        assert status == 422, (path, arguments, answer)

    async def refuse(session: ClientSession) -> list[str]:
        return [await call_error(session, tool, arguments) for _, tool, arguments in REFUSED]

    assert all(session_with(console_script, ["--project", project, "mcp"], refuse))


def test_the_first_checkpoint_needs_a_slug_and_the_project_must_be_registered(world: tuple[Daemon, Path]) -> None:
    daemon, project = world
    status, answer = post(daemon, "/sessions/checkpoint", {"goal": "no slug"}, project)
    assert status == 400 and "slug" in answer["error"]
    assert daemon.client(token="").request("POST", "/sessions/list", {"project_root": str(project)}).status == 401
    assert post(daemon, "/sessions/list", {}, Path("/"))[0] == 403
