"""Issue 14's one tool set, with the real `opencode` binary and a scripted model: after `codememory init` and a
daemon, the tools the model receives hold each codememory operation exactly once (the plugin's; no
`codememory_memory_*` MCP twins, no MCP resource tools), the session tools included and working through OpenCode;
and the same after re-running init on an install made the old way (the plugin and the MCP server both registered).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codememory.text.tokens import estimate_tokens
from support.daemon import spawn
from support.opencode import OpenCodeHome, make_git_project
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request

pytestmark = pytest.mark.slow  # the real OpenCode binary

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
OPERATIONS = {
    "memory_search",
    "memory_get",
    "memory_store",
    "memory_transcript",
    "checkpoint",
    "search_sessions",
    "list_sessions",
    "get_session_files",
}
MCP_RESOURCE_TOOLS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
TOOLS_BUDGET = 1100  # estimated tokens of codememory's tool definitions in one call (benchmarks/README.md)


def init(env: dict[str, str], project: Path) -> dict[str, Any]:
    done = subprocess.run(
        [CODEMEMORY, "--project", str(project), "init", "--assistants", "opencode", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def assert_one_tool_set(request: dict[str, Any]) -> None:
    names = tool_names(request)
    for operation in OPERATIONS:
        twins = [n for n in names if n == operation or n.endswith("_" + operation)]
        assert twins == [operation], (operation, twins)
    assert not [n for n in names if n.startswith("codememory_")], names
    assert not MCP_RESOURCE_TOOLS & set(names), names  # OpenCode adds these only for an MCP server
    ours = [t for t in request["tools"] if t["function"]["name"] in OPERATIONS]
    size = estimate_tokens("".join(json.dumps(t, separators=(",", ":")) for t in ours))
    assert size <= TOOLS_BUDGET, size


def conversation(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [r for r in llm.requests if not is_title_request(r)]


def last_tool_result(body: dict[str, Any]) -> Any:
    return json.loads([m for m in body["messages"] if m["role"] == "tool"][-1]["content"])


def test_after_init_each_operation_is_offered_once_and_the_session_tools_work(tmp_path: Path) -> None:
    project = make_git_project(tmp_path / "api")
    saved: dict[str, Any] = {}

    def files(body: dict[str, Any]) -> Reply:
        saved.update(search=last_tool_result(body))
        return Reply(tool_calls=[ToolCallSpec("get_session_files", {"session_id": saved["checkpoint"]["session_id"]})])

    def checkpointed(body: dict[str, Any]) -> Reply:
        saved.update(checkpoint=last_tool_result(body))
        return Reply(tool_calls=[ToolCallSpec("search_sessions", {"query": "rate limiter"})])

    steps = Script(
        [
            lambda _: Reply(tool_calls=[ToolCallSpec("checkpoint", {"slug": "rate-limiter", "goal": "Rate limiter"})]),
            checkpointed,
            files,
            lambda body: (
                saved.update(files=last_tool_result(body)) or Reply(tool_calls=[ToolCallSpec("list_sessions", {})])
            ),
            lambda body: saved.update(listed=last_tool_result(body)) or Reply("Saved and found."),
        ]
    )
    with ScriptedLLM(steps) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        env = oc.env()
        init(env, project)
        daemon = spawn(env)
        try:
            oc.run(project, "Save a checkpoint, then find it", timeout=180)
        finally:
            daemon.terminate()
    calls = conversation(llm)
    assert len(calls) == 5
    for request in calls:
        assert_one_tool_set(request)
    session_id = saved["checkpoint"]["session_id"]
    assert saved["checkpoint"]["created"] is True and "_opencode_rate-limiter" in session_id
    assert saved["search"]["results"][0]["session_id"] == session_id
    assert saved["files"]["session_id"] == session_id
    assert [s["session_id"] for s in saved["listed"]["sessions"]] == [session_id]


def test_rerunning_init_on_an_older_install_leaves_one_tool_set(tmp_path: Path) -> None:
    project = make_git_project(tmp_path / "api")
    with ScriptedLLM(Script([])) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        env = oc.env()
        init(env, project)
        # what an init from before this change left: the MCP server registered next to the plugin
        older = {"mcp": {"codememory": {"type": "local", "command": [CODEMEMORY, "mcp"]}}}
        (project / "opencode.json").write_text(json.dumps(older))
        oc.run(project, "hello", timeout=180)
        before = tool_names(conversation(llm)[-1])
        assert {"memory_search", "codememory_memory_search", "checkpoint", "codememory_checkpoint"} <= set(before)

        steps = {(s["file"], s["action"]) for s in init(env, project)["steps"]}
        assert ("opencode.json", "removed") in steps
        config = json.loads((project / "opencode.json").read_text())  # OpenCode may have added its own keys
        assert "codememory" not in config.get("mcp", {}), config
        oc.run(project, "hello again", timeout=180)
    assert_one_tool_set(conversation(llm)[-1])
