"""The OpenCode plugin end to end: the real `opencode` binary (with the plugin that `codememory init` copies
into the project) talks to a scripted model, and the plugin to a real codememory daemon (isolated HOME and
XDG folders, port 0) over a real store. The plugin finds the daemon as users' plugins do: daemon.json and the
token in $XDG_STATE_HOME/codememory/ (OpenCode's XDG_STATE_HOME is the daemon's here).

Also checks the daemon's recall endpoints (/memory/search, /memory/get, /memory/store, /memory/recent) against the
MCP tools' shapes. The plugin's build, type check and unit tests: test_bundle.py.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from support.daemon import Daemon, codememory, isolated_env, spawn
from support.opencode import OpenCodeHome, make_git_project, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request, message_text

pytestmark = pytest.mark.slow  # node, tsc and the real OpenCode binary

HTTPX = "The webhook worker must call partner APIs with httpx and a 10 second timeout, never with requests"
DEPLOY = "Deploys happen on Tuesdays after the billing batch finishes"
PROMPT = "Add retries to the webhook worker's partner API calls"
HUD_OPEN, HUD_CLOSE = "<developer_context>", "</developer_context>"
COLD_OPEN = "<project_memory>"
STORED = "Webhook retries use exponential backoff capped at five attempts"
NEXT_PROMPT = "Is the working tree clean?"


class Switch:
    """The scripted model's handler; each test sets `script`."""

    def __init__(self) -> None:
        self.script = Script([])

    def __call__(self, body: dict[str, Any]) -> Reply:
        return self.script(body)


class TracingHome(OpenCodeHome):
    """OpenCode whose codememory plugin appends a JSON line per hook call to `trace`."""

    def __init__(self, home: Path, base_url: str, trace: Path) -> None:
        self.trace = trace
        super().__init__(home, base_url)

    def env(self) -> dict[str, str]:
        return {**super().env(), "CODEMEMORY_PLUGIN_TRACE": str(self.trace)}

    def entries(self, session: str | None = None) -> list[dict[str, Any]]:
        if not self.trace.exists():
            return []
        lines = [json.loads(line) for line in self.trace.read_text().splitlines() if line.strip()]
        return [e for e in lines if session is None or e.get("sessionID") == session]


@dataclass
class World:
    oc: TracingHome
    llm: ScriptedLLM
    model: Switch
    project: Path
    daemon: Daemon
    ids: list[str]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_opencode()
    base = tmp_path_factory.mktemp("plugin")
    model = Switch()
    with ScriptedLLM(model) as llm:
        oc = TracingHome(base / "home", llm.base_url, base / "trace.jsonl")
        env = isolated_env(base / "daemon", XDG_STATE_HOME=str(oc.home / ".local" / "state"))
        project = make_git_project(base / "project")
        out = codememory(env, "--project", project, "init", "--assistants", "opencode", "--json")
        assert any(
            s["file"] == ".opencode/plugin/codememory.js" and s["action"] == "added" for s in json.loads(out)["steps"]
        )
        # standing instructions (conventions marked essential): what the cold-start block shows
        standing = ("--category", "convention", "--importance", "0.95")
        ids = [
            codememory(env, "--project", project, "store", text, *standing, "--quiet").strip()
            for text in (HTTPX, DEPLOY)
        ]
        daemon = spawn(env)
        try:
            yield World(oc, llm, model, project, daemon, ids)
        finally:
            daemon.terminate()


def conversation(llm: ScriptedLLM, start: int) -> list[dict[str, Any]]:
    return [r for r in llm.requests[start:] if not is_title_request(r)]


def hud_of(request: dict[str, Any]) -> str | None:
    """The text of the request's last message when it is our HUD (it must be the tail)."""
    last = request["messages"][-1]
    text = message_text(last)
    return text if last["role"] == "user" and text.startswith(HUD_OPEN) else None


def turn_block(request: dict[str, Any], prompt: str) -> str | None:
    """The turn's block: a `<developer_context>` block after the prompt's user message and before the model's first
    answer to it."""
    messages = request["messages"]
    at = max(i for i, m in enumerate(messages) if m["role"] == "user" and prompt in message_text(m))
    for message in messages[at:]:
        if message["role"] == "assistant":
            break
        text = message_text(message)
        if HUD_OPEN in text:
            return text[text.index(HUD_OPEN) :]
    return None


def before_prompt(request: dict[str, Any], prompt: str) -> str:
    """Everything the request shows before the prompt's user message."""
    messages = request["messages"]
    at = max(i for i, m in enumerate(messages) if m["role"] == "user" and prompt in message_text(m))
    return "\n".join(message_text(m) for m in messages[:at])


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(message_text(m) for m in request["messages"] if m["role"] == "system")


def db_texts(db: Path, session: str) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT data FROM message WHERE session_id = ?", (session,)).fetchall()
        rows += conn.execute("SELECT data FROM part WHERE session_id = ?", (session,)).fetchall()
    finally:
        conn.close()
    assert rows
    return "\n".join(r[0] for r in rows)


# ------------------------------------------------------------------------------------------- tests
def test_memories_reach_the_model_each_call_pinned_and_never_the_database(world: World) -> None:
    """One session, four LLM calls (three tool calls: read, then the plugin's memory_search and memory_store), then a
    second request of the same session (git status, then the answer)."""
    start = len(world.llm.requests)
    world.model.script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(world.project / "README.md")})]),
            Reply(tool_calls=[ToolCallSpec("memory_search", {"query": "webhook httpx"})]),
            Reply(tool_calls=[ToolCallSpec("memory_store", {"text": STORED, "category": "decision"})]),
            Reply("Retries added."),
        ]
    )
    result = world.oc.run(world.project, PROMPT, timeout=180)
    session = result.session_id
    assert session
    calls = conversation(world.llm, start)
    assert len(calls) == 4

    # The first call has the cold-start block in the system prompt (with the related memory and the tool names);
    # no later call has it.
    systems = [system_text(r) for r in calls]
    assert COLD_OPEN in systems[0] and HTTPX in systems[0] and "memory_search" in systems[0]
    assert all(COLD_OPEN not in s for s in systems[1:])
    assert systems[1] == systems[2] == systems[3]
    # The request's memories are given once, right after the prompt, and kept for the turn: the first call shows what
    # its cold start does not; the later calls (the cold start was the first call's only) carry the whole block.
    # Never in the system prompt. Once memory_search's result shows the memory (the third and fourth calls), the
    # block leaves it out: a memory is never shown twice in one call.
    assert all(HUD_OPEN not in s for s in systems)
    turns = [turn_block(r, PROMPT) for r in calls]
    assert turns[0] is None or world.ids[0] not in turns[0]
    assert turns[1] is not None and turns[1].endswith(HUD_CLOSE) and world.ids[0] in turns[1] and HTTPX in turns[1]
    for later, request in zip(turns[2:], calls[2:], strict=True):
        assert later is None or world.ids[0] not in later
        assert json.dumps(request["messages"]).count(world.ids[0]) == 1
    # A later call's HUD (the tail) has only what its own step brings that the turn does not carry: reading the
    # README, searching and storing bring nothing new.
    assert [hud_of(r) for r in calls[1:]] == [None, None, None]
    # The title request gets neither.
    titles = [r for r in world.llm.requests[start:] if is_title_request(r)]
    assert all(HUD_OPEN not in json.dumps(t) and COLD_OPEN not in json.dumps(t) for t in titles)

    # The turn's first call asks on the request alone, the cold start's memories included (its block is that call's
    # only); the later calls ask with the step, the turn's block carried and excluded.
    sent = [e for e in world.oc.entries(session) if e["hook"] == "messages" and "request" in e]
    assert len(sent) == 4
    assert sent[0]["request"]["pinned_memory_ids"] == []
    assert "step" not in sent[0]["request"] and "request_carried" not in sent[0]["request"]
    assert world.ids[0] not in sent[0]["request"]["exclude_memory_ids"] and world.ids[0] in sent[0]["kept"]
    for later in sent[1:]:
        assert later["request"]["request_carried"] is True and later["request"]["step"]["tool"]
        assert world.ids[0] in later["request"]["exclude_memory_ids"]
    # the turn keeps the memory until memory_search's result shows it
    assert world.ids[0] in sent[1]["turn"] and all(world.ids[0] not in later["turn"] for later in sent[2:])
    assert sent[0]["request"]["project_root"] == str(world.project)
    assert "webhook" in " ".join(sent[0]["request"]["query_expansion"]).lower()

    # The recall tools answered from the daemon with the MCP shapes.
    tool_results = [m for m in calls[2]["messages"] if m["role"] == "tool"]
    found = json.loads(message_text(tool_results[-1]))
    assert {"results", "degraded", "degraded_reason"} <= set(found)
    assert found["results"][0]["id"] == world.ids[0]
    stored = json.loads(message_text([m for m in calls[3]["messages"] if m["role"] == "tool"][-1]))
    assert stored["created"] is True and stored["memory"]["text"] == STORED
    assert stored["memory"]["entered_by"] == "opencode"
    assert stored["memory"]["provenance"]["label"] == "stored by opencode"  # an agent through the plugin's tool
    with Store.open(world.project) as store:
        assert store.get(stored["memory"]["id"], touch=False).text == STORED

    # OpenCode's own transcript has neither block.
    saved = db_texts(result.db_path, session)
    assert PROMPT in saved
    assert HUD_OPEN not in saved and COLD_OPEN not in saved

    # The next request of the session: its calls do not carry the previous turn's block (nothing of ours before its
    # prompt), and a routine call (git status) gets no HUD.
    start = len(world.llm.requests)
    world.model.script = Script(
        [Reply(tool_calls=[ToolCallSpec("bash", {"command": "git status", "description": "status"})]), Reply("Clean.")]
    )
    world.oc.run(world.project, NEXT_PROMPT, session=session, timeout=180)
    calls = conversation(world.llm, start)
    assert len(calls) == 2
    for request in calls:
        assert HUD_OPEN not in before_prompt(request, NEXT_PROMPT)
    assert turn_block(calls[0], NEXT_PROMPT) == turn_block(calls[1], NEXT_PROMPT)
    assert hud_of(calls[1]) is None
    assert HUD_OPEN not in db_texts(result.db_path, session)


def test_recall_endpoints_need_the_token_and_match_the_mcp_shapes(world: World) -> None:
    client = world.daemon.client()
    root = str(world.project)
    resp = world.daemon.client(token="").request("POST", "/memory/search", {"project_root": root, "query": "x"})
    assert resp.status == 401
    hits = client.request("POST", "/memory/search", {"project_root": root, "query": "Tuesdays billing"}).data
    assert [h["id"] for h in hits["results"]] == [world.ids[1]]
    assert set(hits["results"][0]) == {
        "id", "text", "category", "importance", "tags", "created_at", "source", "match", "score", "why", "origin",
        "provenance",
    }  # fmt: skip
    assert hits["results"][0]["provenance"] == "by the user"
    got = client.request("POST", "/memory/get", {"project_root": root, "ids": [world.ids[0], "mem_00000000"]}).data
    assert got["missing"] == ["mem_00000000"] and got["memories"][0]["id"] == world.ids[0]
    assert {"links", "entities", "entered_by"} <= set(got["memories"][0])
    bad = client.request("POST", "/memory/get", {"project_root": root, "ids": ["nope"]})
    assert bad.status == 422
    recent = client.request("POST", "/memory/recent", {"project_root": root, "limit": 2, "token_budget": 400}).data
    assert len(recent["memories"]) == 2 and recent["total"] >= 2 and 0 < recent["tokens"] <= 400
    tiny = client.request("POST", "/memory/recent", {"project_root": root, "token_budget": 5}).data
    assert tiny["memories"] == [] and tiny["tokens"] == 0
    missing = client.request("POST", "/memory/search", {"project_root": "/", "query": "x"})
    assert missing.status == 403  # not a registered project


def test_daemon_down_the_session_completes_without_memory(world: World) -> None:
    """Runs last: the daemon is killed (daemon.json stays behind, the port refuses connections)."""
    world.daemon.proc.kill()
    world.daemon.proc.wait(timeout=10)
    start = len(world.llm.requests)
    world.model.script = Script(
        [Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(world.project / "README.md")})]), Reply("Done.")]
    )
    result = world.oc.run(world.project, PROMPT, timeout=180)
    assert result.returncode == 0 and result.session_id
    calls = conversation(world.llm, start)
    assert len(calls) == 2
    for request in calls:
        assert HUD_OPEN not in json.dumps(request)
        assert COLD_OPEN not in system_text(request)
    entries = world.oc.entries(result.session_id)
    messages = [e for e in entries if e["hook"] == "messages"]
    assert messages and all("surfaced" not in e for e in messages)
    assert any("error" in e or e.get("skipped") == "daemon down" for e in messages)
    # The flag is raised loudly: a warning in OpenCode's log.
    logs = "".join(p.read_text() for p in (world.oc.data_dir / "log").glob("*.log"))
    assert "codememory daemon unavailable, memory injection paused" in logs
    # Once flagged, a call skips the daemon (no I/O; how fast that is: benchmarks/bench_plugin.py).
    assert any(e.get("skipped") == "daemon down" for e in messages), messages
