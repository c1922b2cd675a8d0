"""A question the memory does not answer gets nothing, and one it does gets its memory, through the entry points an
agent uses: MCP `memory_search` (the official client against a real `codememory mcp` process) and the daemon's
`POST /retrieve` (what the OpenCode plugin calls before every model call), over loopback HTTP. With the embedding
model a fresh install has: the relevance decision (retrieval/decision.py) is calibrated for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from support.daemon import codememory, isolated_env, make_project, spawn
from support.mcp import CODEMEMORY, call, session_with

MEMORIES = (
    "Use httpx, not requests, for outbound HTTP calls: we need HTTP/2",
    "Alembic migrations live in db/migrations; run them before the tests",
    "CI runs Python 3.9, so no `X | None` annotations",
    "The web frontend is React 18 with state in React context; we do not use Redux",
    "Deploys go out on Tuesdays after the billing batch finishes",
    "The Postgres connection pool is capped at 20 in production",
)
# Questions about things this project's memory does not cover, sharing a word or a topic with it.
ABSENT = (
    "who gets alerted when the site goes down?",
    "what is our code coverage target for the tests?",
    "kafka",
)
ANSWERED = ("why did we choose httpx?", MEMORIES[0])


def model_env(base: Path) -> dict[str, str]:
    """An isolated user (HOME, XDG folders) with the default embedding model, as a fresh install has it."""
    return isolated_env(base, CODEMEMORY_EMBEDDING_PROVIDER=None)


@pytest.mark.slow
@pytest.mark.default_model
def test_mcp_memory_search_returns_nothing_for_what_the_memory_does_not_cover(tmp_path: Path) -> None:
    env = model_env(tmp_path)
    project = tmp_path / "project"
    ids = make_project(env, project, *MEMORIES)
    codememory(env, "--project", project, "embed")

    async def body(session: ClientSession) -> list[Any]:
        return [await call(session, "memory_search", {"query": q}) for q in (*ABSENT, ANSWERED[0])]

    *absent, answered = session_with(CODEMEMORY, ["--project", project, "mcp"], body, env=env, timeout=240)
    for question, found in zip(ABSENT, absent, strict=True):
        assert found["results"] == [], (question, [r["text"] for r in found["results"]])
        assert found["degraded"] is False
        # the agent is told why, as the CLI tells a person: nothing was likely relevant, and how much was held back
        assert found["held_back"] >= 1, found
        n = found["held_back"]
        memories = "memory" if n == 1 else "memories"
        assert found["note"] == f"Nothing relevant found: none of the {n} {memories} compared was close enough."
    assert [r["id"] for r in answered["results"]][:1] == [ids[0]]
    assert "note" not in answered and 0 <= answered["held_back"] <= len(MEMORIES) - len(answered["results"])


@pytest.mark.slow
@pytest.mark.default_model
def test_the_daemons_retrieve_offers_nothing_for_a_step_that_needs_nothing(tmp_path: Path) -> None:
    env = model_env(tmp_path)
    project = tmp_path / "project"
    ids = make_project(env, project, *MEMORIES)
    codememory(env, "--project", project, "embed")
    daemon = spawn(env)
    try:
        client = daemon.client(timeout=300)  # the first call may load the model

        def retrieve(*phrases: str) -> dict[str, Any]:
            answer = client.request(
                "POST", "/retrieve", {"project_root": str(project), "query_expansion": list(phrases)}
            )
            assert answer.status == 200, answer.data
            assert answer.data["degraded"] is False, answer.data
            data: dict[str, Any] = answer.data
            return data

        for question in ABSENT:
            assert retrieve(question)["memories"] == [], question
        # a chore: the agent lists a folder and runs the formatter; no memory is about that
        assert retrieve("list the files in src", "bash: ls src", "bash: make fmt")["memories"] == []
        found = retrieve(ANSWERED[0])
        assert [m["id"] for m in found["memories"]][:1] == [ids[0]]
        assert found["memories"][0]["why"]["retriever"] == "hybrid"
    finally:
        daemon.terminate()
