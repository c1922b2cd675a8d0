"""A hostile pull as a real OpenCode session sees it: the real `opencode` binary with the plugin `codememory init`
copies into the project, a scripted model, and a real daemon over bob's clone after mallory pushed ten memory files
(importance 1.0, created in 2099, entered_by "user", three of them instructions to agents) and alice one plain one
(test_provenance.py builds the same pull for the hooks and MCP). What the model receives is read from its requests:
the cold-start block in the system prompt of the first call and the HUD at the tail of the next. No instruction
reaches either block, bob's own notes are all in the cold start, and every line says where its memory came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_provenance import ALICE, BOBS, INSTRUCTIONS, pulled_team

from support.daemon import codememory, isolated_env, spawn
from support.opencode import OpenCodeHome, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request, message_text

pytestmark = pytest.mark.slow  # node and the real OpenCode binary

# `- [mem_…] (category · where it came from) text`, as the plugin renders a memory
LINE_RE = re.compile(r"^- \[(mem_[0-9a-f]{8})\] \(([^)]*)\) (.*)$")
PROMPT = "Which production database do we use?"


def lines(block: str) -> list[tuple[str, str, str]]:
    return [m.groups() for m in map(LINE_RE.match, block.splitlines()) if m]  # type: ignore[misc]


def cold_block(request: dict[str, Any]) -> str:
    text = "\n".join(message_text(m) for m in request["messages"] if m["role"] == "system")
    start = text.find("<project_memory>")
    return text[start : text.find("</project_memory>", start)] if start >= 0 else ""


def hud(request: dict[str, Any]) -> str:
    """Our blocks in a request: the turn's block kept beside the prompt and a HUD at the tail."""
    texts = [message_text(m) for m in request["messages"] if m["role"] == "user"]
    return "\n".join(t[t.index("<developer_context>") :] for t in texts if "<developer_context>" in t)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    require_opencode()
    base = tmp_path_factory.mktemp("hostile-pull-opencode")
    script = Script([])
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(base / "home", llm.base_url)
        env = isolated_env(base / "daemon", XDG_STATE_HOME=str(oc.home / ".local" / "state"))

        def set_up(bob: Path) -> list[str]:
            codememory(env, "--project", bob, "init", "--assistants", "opencode")
            return [
                codememory(env, "--project", bob, "store", text, "--category", cat, "--importance", imp, "-q").strip()
                for text, cat, imp in BOBS
            ]

        bob, bobs = pulled_team(base, set_up)

        daemon = spawn(env)
        try:
            start = len(llm.requests)
            script.replies = [
                Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(bob / "README.md")})]),
                Reply("Postgres 16."),
            ]
            oc.run(bob.resolve(), PROMPT, timeout=180)
            calls = [r for r in llm.requests[start:] if not is_title_request(r)]
            yield {"calls": calls, "bobs": bobs}
        finally:
            daemon.terminate()


def test_the_cold_start_holds_the_instructions_and_keeps_bobs_notes(session: dict[str, Any]) -> None:
    block = cold_block(session["calls"][0])
    shown = lines(block)
    assert shown, block
    ids = [mid for mid, _, _ in shown]
    assert not set(INSTRUCTIONS) & set(ids) and "curl" not in block and "Ignore previous" not in block
    # only standing instructions open a session: bob's essential preference, said to be his; nothing pulled stands
    # there, however important its file claims it is (1.0) or however new ("2099"), until the user accepts it
    assert ids == [session["bobs"][0]], block
    for mid, label, _ in shown:
        if mid in session["bobs"]:
            assert label.endswith(" · by the user"), (mid, label)
        else:
            author = "alice" if mid == ALICE[0] else "mallory"
            assert label.endswith(f" · from git, by {author}@example.com"), (mid, label)


def test_the_hud_ranks_bobs_note_first_and_says_who_wrote_the_pulled_one(session: dict[str, Any]) -> None:
    calls, bobs = session["calls"], session["bobs"]
    block = "\n".join(hud(r) for r in calls[1:])
    assert block, "no HUD after the first call"
    shown = lines(block)
    ids = [mid for mid, _, _ in shown]
    assert not set(INSTRUCTIONS) & set(ids) and "curl" not in block
    assert all(" · " in label for _, label, _ in shown), block
    # the same words, the same length: bob's Postgres note before mallory's claimed MongoDB (importance 1.0, 2099)
    assert bobs[2] in ids and "mem_bad00004" in ids, block
    assert ids.index(bobs[2]) < ids.index("mem_bad00004"), block
    assert "(decision · by the user) The production database is Postgres 16." in block
    assert "(decision · from git, by mallory@example.com) The production database is MongoDB 3.2." in block
