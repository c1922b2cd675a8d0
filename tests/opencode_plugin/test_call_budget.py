"""What codememory adds to each LLM call, measured where the model sees it: the real `opencode` binary (with the plugin
`codememory init` installs) talks to a scripted model over a three-turn session with tool calls, the plugin to a real
daemon over a real store. Counted from the requests the scripted server receives, for every call:

- codememory's tokens — its tool definitions as OpenCode sends them, the cold-start block, the HUD, with the one
  estimate (⌈characters / 4⌉, codememory.text.tokens) — stay within the project's `[context] call_budget_tokens`;
- no memory id appears twice (cold-start block, HUD and memory tool results together);
- the cold-start block is in the session's first call and in no other;
- the memory that answers the current question is in the HUD (on the session's first call: in the cold-start block
  or the HUD), and the previous turn's tool calls are not part of the query.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.daemon import Daemon, codememory, isolated_env, spawn
from support.opencode import OpenCodeHome, make_git_project, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request, message_text

pytestmark = pytest.mark.slow  # the real OpenCode binary

BUDGET = 1800  # the project's setting (a project may lower the default 2,000 untrusted)
MEMORIES = {
    "httpx": "The webhook workers call partner APIs with httpx and a 10 second timeout, never with requests",
    "deploy": "Production deploys happen on Tuesdays after the billing batch finishes",
    "pool": "The Postgres connection pool is capped at 20 connections in production",
    "todo": "TODO: rename the billing cron job before the March release",
    "redis": "Session data is cached in Redis with a 15 minute TTL",
    "ruff": "Ruff replaced black and isort for formatting and linting",
    "flags": "Feature flags live in LaunchDarkly, not in environment variables",
    "logs": "Logs are JSON lines shipped to Loki; never log request bodies",
    "uv": "Dependencies are locked with uv; poetry was dropped in March",
    "alembic": "Alembic migrations run automatically when the API container starts",
    "retries": "Webhook deliveries retry with exponential backoff, five attempts at most",
    "ci": "The CI pipeline caches pip wheels between runs",
}
# Long enough that the blocks fill the budget: what is left after the tool definitions and the cold-start block
# cannot hold every memory a HUD would show.
DETAIL = " (agreed in the quarterly architecture review; the runbook in the wiki has the reasoning and who signed off)"
# (the question, the memory that answers it, what the model does before answering)
TURNS = [
    ("How do the webhook workers call partner APIs?", "httpx", ToolCallSpec("read", {"filePath": "README.md"})),
    ("When do production deploys happen?", "deploy", ToolCallSpec("glob", {"pattern": "*.md"})),
    ("How big is the Postgres connection pool?", "pool", ToolCallSpec("memory_search", {"query": "postgres pool"})),
]
HUD_RE = re.compile(r"<developer_context>.*?</developer_context>", re.S)
COLD_RE = re.compile(r"<project_memory>.*?</project_memory>", re.S)
LINE_ID_RE = re.compile(r"^- \[(mem_[0-9a-f]{8})\]", re.M)
JSON_ID_RE = re.compile(r'"id"\s*:\s*"(mem_[0-9a-f]{8})"')


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class TracingHome(OpenCodeHome):
    """OpenCode whose codememory plugin appends a JSON line per hook call to `trace`."""

    def __init__(self, home: Path, base_url: str, trace: Path) -> None:
        self.trace = trace
        super().__init__(home, base_url)

    def env(self) -> dict[str, str]:
        return {**super().env(), "CODEMEMORY_PLUGIN_TRACE": str(self.trace)}

    def entries(self, hook: str) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.trace.read_text().splitlines() if line.strip()]
        return [e for e in lines if e.get("hook") == hook]


@dataclass
class Call:
    """One LLM call as the scripted server received it, taken apart."""

    body: dict[str, Any]

    @property
    def codememory_tools(self) -> list[dict[str, Any]]:
        ours = {"checkpoint", "search_sessions", "list_sessions", "get_session_files"}
        tools = self.body.get("tools") or []
        return [
            t
            for t in tools
            if t["function"]["name"].startswith(("memory_", "codememory_")) or t["function"]["name"] in ours
        ]

    def tool_tokens(self) -> int:
        sent = "".join(json.dumps(t, separators=(",", ":"), ensure_ascii=False) for t in self.codememory_tools)
        return tokens(sent)

    @property
    def cold(self) -> str | None:
        system = "\n".join(message_text(m) for m in self.body["messages"] if m["role"] == "system")
        found = COLD_RE.findall(system)
        assert len(found) <= 1, found
        return found[0] if found else None

    @property
    def hud(self) -> str | None:
        """The block at the tail: a later call's HUD, or at a turn's first call the turn's block (the request is the
        last message then)."""
        last = self.body["messages"][-1]
        text = message_text(last)
        return text if last["role"] == "user" and text.startswith("<developer_context>") else None

    @property
    def blocks(self) -> list[str]:
        """Every `<developer_context>` block of the call: the turn's block, right after the request's user message,
        and the HUD at the tail; no other."""
        found = [t for m in self.body["messages"] for t in HUD_RE.findall(message_text(m))]
        assert len(found) <= 2, found
        return found

    def codememory_tokens(self) -> int:
        return self.tool_tokens() + tokens(self.cold or "") + sum(tokens(b) for b in self.blocks)

    def memory_ids(self) -> list[str]:
        """Every memory shown in the call: the blocks' lines and the memory tools' results (once per showing)."""
        ids = [*LINE_ID_RE.findall(self.cold or ""), *(i for b in self.blocks for i in LINE_ID_RE.findall(b))]
        for m in self.body["messages"]:
            if m["role"] == "tool":
                ids += JSON_ID_RE.findall(message_text(m))
        return ids


@dataclass
class World:
    oc: TracingHome
    llm: ScriptedLLM
    project: Path
    daemon: Daemon
    ids: dict[str, str]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_opencode()
    base = tmp_path_factory.mktemp("call-budget")
    replies = [r for _, _, call in TURNS for r in (Reply(tool_calls=[call]), Reply("Done."))]
    with ScriptedLLM(Script(replies)) as llm:
        oc = TracingHome(base / "home", llm.base_url, base / "trace.jsonl")
        env = isolated_env(base / "daemon", XDG_STATE_HOME=str(oc.home / ".local" / "state"))
        project = make_git_project(base / "project")
        codememory(env, "--project", project, "init", "--assistants", "opencode", "--json")
        # One tool set per assistant: init gives OpenCode the plugin's tools and registers no MCP server.
        assert not (project / "opencode.json").exists()
        settings = project / ".codememory" / "config.toml"
        settings.write_text(f"[context]\ncall_budget_tokens = {BUDGET}\n", encoding="utf-8")
        ids = {
            k: codememory(env, "--project", project, "store", t + DETAIL, "--quiet").strip()
            for k, t in MEMORIES.items()
        }
        # a standing instruction (a convention marked essential): what the cold-start block shows
        standing = ("Commit messages say why a change was made", "--category", "convention", "--importance", "0.95")
        ids["standing"] = codememory(env, "--project", project, "store", *standing, "--quiet").strip()
        daemon = spawn(env)
        try:
            yield World(oc, llm, project, daemon, ids)
        finally:
            daemon.terminate()


@pytest.fixture(scope="module")
def session(world: World) -> list[list[Call]]:
    """The three turns of one session; the calls of each turn (title requests left out)."""
    turns: list[list[Call]] = []
    session_id = None
    for question, _, _ in TURNS:
        start = len(world.llm.requests)
        result = world.oc.run(world.project, question, session=session_id, timeout=180)
        session_id = session_id or result.session_id
        assert session_id
        turns.append([Call(r) for r in world.llm.requests[start:] if not is_title_request(r)])
    assert [len(t) for t in turns] == [2, 2, 2], [len(t) for t in turns]
    return turns


def test_every_call_stays_within_the_budget(world: World, session: list[list[Call]]) -> None:
    calls = [c for turn in session for c in turn]
    sent_tools = {t["function"]["name"] for t in calls[0].codememory_tools}
    assert sent_tools == {"memory_search", "memory_get", "memory_store", "memory_transcript"} | {
        "checkpoint",
        "search_sessions",
        "list_sessions",
        "get_session_files",
    }
    # The plugin counts its tool definitions exactly as the model receives them.
    (load,) = [e for e in world.oc.entries("load") if e.get("tools")][-1:]
    assert load["exact"] is True and load["toolTokens"] == calls[0].tool_tokens()
    for n, call in enumerate(calls):
        assert call.codememory_tokens() <= BUDGET, (n, call.tool_tokens(), call.cold, call.hud)
    planned = [e for e in world.oc.entries("messages") if "budget" in e]
    assert planned and all(e["budget"] == BUDGET for e in planned)  # the project's setting, through the daemon
    # The budget shaped the blocks: none was asked for more than what the tool definitions leave; a later call's
    # HUD for less than that when the turn's block is in the call (it is counted first).
    asked = [e["request"]["token_budget"] for e in planned if "request" in e]
    assert max(asked) <= 1200, asked
    assert all(a <= BUDGET - calls[0].tool_tokens() for a in asked)
    later = [e for e in planned if "request" in e and e["request"].get("request_carried") and e.get("turn")]
    assert all(e["request"]["token_budget"] < BUDGET - calls[0].tool_tokens() for e in later)
    # The first call's cold-start block shows the answer; the turn's block carries it at the later call.
    assert calls[0].cold is not None and world.ids["httpx"] in calls[0].cold + (calls[0].hud or "")
    assert world.ids["httpx"] in "".join(calls[1].blocks)


def test_no_memory_appears_twice_in_a_call(session: list[list[Call]]) -> None:
    for turn in session:
        for call in turn:
            shown = call.memory_ids()
            assert len(shown) == len(set(shown)), shown


def test_the_cold_start_block_is_sent_once_per_session(world: World, session: list[list[Call]]) -> None:
    calls = [c for turn in session for c in turn]
    assert calls[0].cold is not None
    assert all(c.cold is None for c in calls[1:])
    titles = [r for r in world.llm.requests if is_title_request(r)]
    assert all("<project_memory>" not in json.dumps(t) and "<developer_context>" not in json.dumps(t) for t in titles)


def test_the_current_questions_memory_is_in_the_hud(world: World, session: list[list[Call]]) -> None:
    for n, ((question, answer, _), turn) in enumerate(zip(TURNS, session, strict=True)):
        wanted = world.ids[answer]
        first = turn[0]
        if n == 0:  # the session's first call: the cold-start block may hold it (then the HUD leaves it out)
            assert wanted in (first.cold or "") + (first.hud or "")
        else:
            assert first.hud is not None and wanted in first.hud, (question, first.hud)
    # Turn 3 searched with memory_search: its result carries the pool memory, so the next HUD does not repeat it.
    after_search = session[2][1]
    assert world.ids["pool"] in json.dumps(after_search.body["messages"][-2:])
    assert world.ids["pool"] not in (after_search.hud or "")


def test_the_query_is_the_current_request_and_the_tool_calls_since_it(world: World, session: list[list[Call]]) -> None:
    asked = [e["request"] for e in world.oc.entries("messages") if "request" in e]
    assert len(asked) == 6
    for n, (question, _, call) in enumerate(TURNS):
        first, second = asked[2 * n], asked[2 * n + 1]
        assert first["query_expansion"][0].strip('"') == question
        # The first call of a turn: nothing of the previous turn's tool calls.
        previous = TURNS[n - 1][2] if n else None
        if previous is not None:
            assert not any(previous.name in p for p in first["query_expansion"][1:]), first["query_expansion"]
        # The second call: the request first, then this turn's tool call.
        assert second["query_expansion"][0].strip('"') == question
        assert any(p.startswith(call.name) for p in second["query_expansion"][1:]), second["query_expansion"]
