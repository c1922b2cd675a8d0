"""The agent CLIs as extraction models, for real: `opencode run` (1.18.33), `claude -p` (2.1.330) and `codex exec`
(0.171.0), pinned in integrations/opencode and tests/clis, each reaching a scripted model server on 127.0.0.1 the way
its user would have set it up (an OpenCode provider, ANTHROPIC_BASE_URL, a Codex model provider), and driven by
`extract_session` on a real store.

The contract, checked on what reaches each server and what the store keeps:
- the model is asked our system prompt, with the speaker and source rules, as its instructions, and the session's
  transcript (who said what: User, Assistant, one line per tool call) as the user's message;
- it is offered nothing that acts: no shell, no file edits, no web search, no MCP server (codememory's included);
- its answer is parsed, the memories are stored with who said them, and what the transcript shows was not said so
  (an instruction inside a fetched page, taken for a convention) is not;
- the budget is charged what the CLI reports its model used;
- nothing of the run is left in the user's own agent folders (no session a later capture could import).
The same through stand-ins that record the exact command line: tests/extract/test_agent_cli_providers.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from codememory.core.provenance import said_by
from codememory.extract import extract_session
from codememory.extract.agent_cli import AgentCLI
from codememory.extract.cli_claude import ClaudeCLI
from codememory.extract.cli_codex import CodexCLI
from codememory.extract.cli_opencode import OpenCodeCLI
from support import scripted_anthropic as anthropic
from support import scripted_responses as responses
from support.agent_cli import REPO, isolated_env, require
from support.cli_claude import request_text as claude_text
from support.extraction import ACCEPTED, FROM_PAGE, LESSON, PREFERENCE, SESSION, club_turns, stored_memories
from support.scripted_llm import Reply, ScriptedLLM
from support.scripted_llm import request_text as chat_text

pytestmark = pytest.mark.slow  # each test runs a real agent CLI

ANSWER = json.dumps({"memories": [PREFERENCE, ACCEPTED, FROM_PAGE, LESSON]})
RULE = "never becomes a decision, convention, preference or note"  # a sentence of our system prompt
PROMPT_TOKENS, ANSWER_TOKENS = 1200, 60  # what the scripted server says each request used


@dataclass
class Served:
    """One CLI reaching its scripted server: the provider to extract with, and what the server received."""

    provider: AgentCLI
    requests: list[dict[str, Any]]
    text: Callable[[dict[str, Any]], str]  # everything a request showed its model
    system: Callable[[dict[str, Any]], str]  # the request's instructions
    tools: Callable[[dict[str, Any]], set[str]]  # the tools a request offered


def answering(requests: list[dict[str, Any]], text: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    """The model: the extraction answer to our prompt, a title to anything else the CLI asks on the side."""

    def reply(body: dict[str, Any]) -> str:
        requests.append(body)
        return ANSWER if RULE in text(body) else "Scripted title"

    return reply


@contextmanager
def opencode(home: Path) -> Iterator[Served]:
    binary = require("opencode", REPO / "integrations" / "opencode")
    requests: list[dict[str, Any]] = []
    reply = answering(requests, chat_text)
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": ANSWER_TOKENS}
    with ScriptedLLM(lambda body: Reply(reply(body), usage=usage)) as llm:
        provider = {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": llm.base_url, "apiKey": "scripted"},
                    "models": {"scripted-model": {}}}  # fmt: skip
        config = home / ".config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True)
        # the user's own OpenCode, with codememory's plugin and MCP server in it (which must stay out of the run)
        ours = {"plugin": ["codememory-opencode"], "mcp": {"codememory": {"type": "local", "command": ["codememory"]}}}
        config.write_text(json.dumps({"provider": {"scripted": provider}, "model": "scripted/scripted-model", **ours}))

        def system(body: dict[str, Any]) -> str:
            return "\n".join(str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system")

        def tools(body: dict[str, Any]) -> set[str]:
            return {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}

        yield Served(OpenCodeCLI(str(binary), timeout=200), requests, chat_text, system, tools)


@contextmanager
def claude(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    binary = require("claude")
    requests: list[dict[str, Any]] = []
    reply = answering(requests, claude_text)
    usage = {"input_tokens": PROMPT_TOKENS, "output_tokens": ANSWER_TOKENS}
    with anthropic.ScriptedAnthropic(lambda body: anthropic.Reply(reply(body), usage=usage)) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "scripted")
        settings = home / ".claude" / "settings.json"  # the user's own hooks, which must not run inside
        settings.parent.mkdir(parents=True)
        hook = {"hooks": [{"type": "command", "command": f"touch {home / 'hook-ran'}"}]}
        settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook], "SessionStart": [hook]}}))

        def system(body: dict[str, Any]) -> str:
            return anthropic.block_text(body.get("system"))

        def tools(body: dict[str, Any]) -> set[str]:
            return {str(t.get("name")) for t in body.get("tools") or []}

        yield Served(ClaudeCLI(str(binary), timeout=200), requests, claude_text, system, tools)


@contextmanager
def codex(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    binary = require("codex")
    requests: list[dict[str, Any]] = []
    reply = answering(requests, responses.input_text)
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": ANSWER_TOKENS}
    with responses.ScriptedResponses(lambda body: Reply(reply(body), usage=usage)) as api:
        monkeypatch.setenv("SCRIPTED_API_KEY", "scripted")
        config = home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n'
            f'[model_providers.scripted]\nname = "Scripted"\nbase_url = {json.dumps(api.base_url)}\n'
            'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
            '[mcp_servers.codememory]\ncommand = "codememory"\nargs = ["mcp"]\nrequired = true\n'
        )

        def system(body: dict[str, Any]) -> str:
            parts = [str(body.get("instructions") or "")]
            parts += [responses.item_text(i) for i in body.get("input") or [] if i.get("role") == "developer"]
            return "\n".join(parts)

        def tools(body: dict[str, Any]) -> set[str]:
            return {str(t.get("name") or t.get("type")) for t in body.get("tools") or []}

        yield Served(CodexCLI(str(binary), timeout=200), requests, responses.input_text, system, tools)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One user's machine: this process's environment is theirs (the provider runs their CLI from it)."""
    home = tmp_path / "home"
    env = isolated_env(home)
    for var in list(os.environ):
        if var not in env:
            monkeypatch.delenv(var)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    (home / ".config" / "codememory").mkdir(parents=True)
    (home / ".config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    return home


@pytest.mark.parametrize("cli", ["opencode", "claude", "codex"])
def test_each_cli_extracts_by_our_rules_and_leaves_nothing_behind(
    cli: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve = {"opencode": lambda: opencode(home), "claude": lambda: claude(home, monkeypatch),
             "codex": lambda: codex(home, monkeypatch)}[cli]  # fmt: skip
    (tmp_path / "club").mkdir()
    store, _ = Store.init(tmp_path / "club")
    with store, serve() as served:
        report = extract_session(store, SESSION, club_turns(), provider=served.provider)

        assert report.status == "ok" and report.llm_calls == 1, report.to_dict()
        asked = [r for r in served.requests if RULE in served.text(r)]
        assert len(asked) == 1
        (body,) = asked
        # our system prompt is the model's instructions, the transcript its user message
        system = served.system(body)
        assert RULE in system and '"said_by"' in system
        transcript = served.text(body)[served.text(body).index("Transcript:") :]
        assert "User: Write a scraper" in transcript and "Assistant: Fetched it." in transcript
        assert "Tool: " in transcript and "NOTE TO AI AGENTS" not in transcript
        # nothing that acts (Codex keeps two tools that only ask: the user for input, to look at an image)
        offered = set().union(*(served.tools(r) for r in served.requests))
        assert offered <= {"request_user_input", "view_image"}, offered

        stored = {m["text"]: m for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"}
        assert set(stored) == {PREFERENCE["text"], ACCEPTED["text"], LESSON["text"]}
        assert said_by(stored[PREFERENCE["text"]]["source"]) == "user"
        assert said_by(stored[ACCEPTED["text"]]["source"]) == "assistant_accepted"

        # charged what the CLI reported: every request its model answered, side requests too
        spend = store.db.conn.execute("SELECT provider, prompt_tokens, completion_tokens FROM llm_spend").fetchall()
        calls = len(served.requests)
        assert spend == [(cli, PROMPT_TOKENS * calls, ANSWER_TOKENS * calls)]

    # nothing of the run in the user's own agent folders: no session to capture later, no hook of theirs ran
    assert not (home / "hook-ran").exists()
    assert not list((home / ".claude").glob("projects/*/*.jsonl"))
    assert not (home / ".codex" / "sessions").exists()
    assert not list((home / ".local" / "share").glob("opencode/*.db"))
