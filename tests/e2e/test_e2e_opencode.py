"""Issue 5's "done when", for OpenCode: in a fresh project, `codememory init` and `codememory daemon start`, then an
OpenCode session (the real binary, a scripted model) leave a checkpointed session file (the model called the
plugin's `checkpoint` tool, which the daemon answers), the captured turns, and memories that a search finds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codememory.core.project import store_dir
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables
from support.daemon import spawn
from support.opencode import OpenCodeHome, make_git_project
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec

pytestmark = pytest.mark.slow  # the real OpenCode binary

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
CHECKPOINT = {
    "slug": "rate-limiter",
    "goal": "Add a rate limiter to the public API",
    "decisions": ["Counters live in Redis, not Memcached: we need atomic INCR with expiry"],
    "work_completed": ["Chose the storage for the counters"],
    "work_pending": ["Wire the limiter into the API gateway"],
}


def run(env: dict[str, str], cwd: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([CODEMEMORY, *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_init_then_an_opencode_session_leaves_session_file_turns_and_memories(tmp_path: Path) -> None:
    project = make_git_project(tmp_path / "api")
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("checkpoint", CHECKPOINT)]),
            Reply("Checkpoint saved. We decided to use Redis instead of Memcached for the counters."),
            Reply("Yes: INCR with EXPIRE in one MULTI block."),
        ]
    )
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        env = oc.env()  # a fresh install: the default embedding model, no configuration
        init = run(env, project, "init", "--assistants", "opencode")
        assert init["created"] is True and Path(init["store"]).parent.resolve() == store_dir(project).resolve()
        assert (project / ".opencode" / "plugin" / "codememory.js").is_file()
        assert not (project / "opencode.json").exists()  # one tool set: the plugin's, no MCP server
        daemon = spawn(env)  # the plugin finds it as users' plugins do: daemon.json in OpenCode's XDG_STATE_HOME
        try:
            result = oc.run(project, "We decided to use Redis instead of Memcached for the rate limiter counters.")
            oc.run(project, "and the counters expire on their own?", session=result.session_id)
        finally:
            daemon.terminate()
        called = [
            t["function"]["name"]
            for r in llm.requests
            for m in r.get("messages", [])
            for t in m.get("tool_calls") or []
        ]
    assert "checkpoint" in called
    tool_results = [m for r in llm.requests for m in r.get("messages", []) if m.get("role") == "tool"]
    assert tool_results and json.loads(tool_results[0]["content"])["created"] is True, tool_results

    # the checkpoint: a markdown session file and a searchable session
    files = sorted((store_dir(project) / "sessions").glob("*_opencode_rate-limiter.md"))
    assert len(files) == 1, sorted(p.name for p in (store_dir(project) / "sessions").glob("*"))
    markdown = files[0].read_text()
    assert "Add a rate limiter to the public API" in markdown and "Redis, not Memcached" in markdown
    found = run(env, project, "sessions", "search", "rate limiter redis")
    assert found["results"] and found["results"][0]["goal"] == CHECKPOINT["goal"]

    # capture (the plugin streamed the turns to the daemon live; this pass finds any left) and extraction (what the
    # daemon does every poll), then the memories are found
    run(env, project, "capture", "--idle-after", "0")
    with Store.open(project) as store:
        assert len(CaptureTables(store.db).turns("opencode", result.session_id)) == 2
    logs = list((store_dir(project) / "memory").glob("*.md"))
    assert len(logs) == 1 and f"session:{result.session_id}" in logs[0].read_text()
    with Store.open(project) as store:
        texts = [m.text for m in store.list(limit=100)]
    assert any("Redis instead of Memcached" in t for t in texts), texts
    hits = run(env, project, "search", "memcached")
    assert any("Redis" in h["text"] for h in hits["results"])
