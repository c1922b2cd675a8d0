"""Proactive retrieval for the step at hand (retrieval/proactive.py): the lead phrase (the user's words) outweighs
the tool phrases after it, a pinned memory keeps its place only while the current query still scores it at least
`[context] pinned_min_score`, and ids the caller's context already carries are never returned. Keyword-only
(the tests' user config switches the embedding model off), so every score below comes from BM25 ranks alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store
from codememory.core.config import ContextConfig

MEMORIES = {
    "httpx": "Use httpx, not requests, for partner API calls; they time out after 10 seconds",
    "todo": "TODO: rename the billing cron job before the March release",
    "files": "Files changed in the webhook worker: src/webhooks/worker.py and its tests",
    "deploy": "Deploys go out on Tuesdays after the billing batch finishes",
    "pool": "The Postgres connection pool is capped at 20 in production",
}
# The user asks about the HTTP client; the agent has just read the billing cron file and edited the worker.
# (The edit names the worker in words too: led by a phrase sharing only a path with it, a memory is not called for.)
USER = "which HTTP client do we use for partner API calls?"
TOOLS = ["read src/billing/cron.py", "edit the webhook worker, src/webhooks/worker.py"]


@pytest.fixture
def ids(project: Path) -> dict[str, str]:
    with Store.open(project) as store:
        assert not store.semantic.configured
        return {key: store.add(text).memory.id for key, text in MEMORIES.items()}


def settings(project: Path, text: str) -> None:
    (project / ".codememory" / "config.toml").write_text(text, encoding="utf-8")


def shown(project: Path, ids: dict[str, str], *, pinned: list[str], phrases: list[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    names = {v: k for k, v in ids.items()}
    with Store.open(project) as store:
        result = store.retrieve(phrases, pinned=[ids[p] for p in pinned])
    return {names[m.id]: m.why for m in result.memories}


def test_the_default_threshold_is_the_configs(project: Path) -> None:
    with Store.open(project) as store:
        assert store.config.context.pinned_min_score == ContextConfig.pinned_min_score == 0.5
        assert store.config.context.call_budget_tokens == 2000


def test_a_pin_stays_only_while_the_current_query_scores_it_above_the_threshold(
    project: Path, ids: dict[str, str]
) -> None:
    got = shown(project, ids, pinned=["httpx", "todo", "pool"], phrases=[USER, *TOOLS])
    threshold = ContextConfig.pinned_min_score
    # The user's question still ranks the httpx memory first: it keeps its pin.
    assert got["httpx"].get("pinned") is True and got["httpx"]["score"] >= threshold
    # The todo only shares "billing" and "src" with a tool call: under the threshold it loses the pin (it may still
    # be offered on its own score, as a new memory counted against max_new).
    assert "pinned" not in got.get("todo", {})
    assert got.get("todo", {"score": 0})["score"] < threshold
    # The pool memory matches nothing of this step: gone, pinned or not.
    assert "pool" not in got
    # Every pin shown is at or over the threshold; nothing under it is marked pinned.
    assert all(why["score"] >= threshold for why in got.values() if why.get("pinned"))


def test_the_threshold_is_a_setting(project: Path, ids: dict[str, str]) -> None:
    settings(project, "[context]\npinned_min_score = 0\n")
    loose = shown(project, ids, pinned=["httpx", "todo", "pool"], phrases=[USER, *TOOLS])
    # 0: a pin stays while the step's relevance decision keeps it (a little under the injection bars); the todo
    # shares only "billing" and "cron" with a tool call and the pool memory nothing: both go.
    assert loose["httpx"].get("pinned") is True
    assert "todo" not in loose and "pool" not in loose
    settings(project, "[context]\npinned_min_score = 1.5\n")  # above any score a rank gives: no pin is kept
    strict = shown(project, ids, pinned=["httpx", "todo"], phrases=[USER, *TOOLS])
    assert "httpx" in strict and not any(why.get("pinned") for why in strict.values())


def test_the_lead_phrase_outweighs_the_tool_phrases(project: Path, ids: dict[str, str]) -> None:
    # Taken together, the tool phrases' words (src, webhooks, worker, billing, cron) match more memories, and
    # better, than the user's question does; the question still decides what comes first.
    lead_first = list(shown(project, ids, pinned=[], phrases=[USER, *TOOLS]))
    assert lead_first[0] == "httpx"
    tools_first = list(shown(project, ids, pinned=[], phrases=[TOOLS[1], TOOLS[0], USER]))
    assert tools_first[0] == "files"


def test_ids_the_context_already_carries_are_never_returned(project: Path, ids: dict[str, str]) -> None:
    names = {v: k for k, v in ids.items()}
    with Store.open(project) as store:
        everything = store.retrieve([USER, *TOOLS], pinned=[ids["httpx"]])
        assert ids["httpx"] in [m.id for m in everything.memories]
        carried = [ids["httpx"], "mem_00000000"]  # an unknown id is no error
        result = store.retrieve([USER, *TOOLS], pinned=[ids["httpx"]], exclude=carried)
        both = store.retrieve([USER, *TOOLS], exclude=[ids["httpx"], ids["files"]])
    got = [names[m.id] for m in result.memories]
    assert "files" in got and "httpx" not in got
    assert not {"httpx", "files"} & {names[m.id] for m in both.memories}


def test_a_todo_is_shown_unasked_only_to_a_request_about_what_is_left_to_do(project: Path) -> None:
    # the same words; only a request that speaks of to-dos calls for one (work still to be done is no constraint on
    # the task at hand)
    with Store.open(project) as store:
        todo = store.add("Rename the billing cron job before the March release", category="todo").memory.id
        task = store.retrieve(["rename the billing cron job before the March release"])
        asked = store.retrieve(["what is still to do on the billing cron job before the March release?"])
    assert [m.id for m in task.memories] == []
    assert [m.id for m in asked.memories] == [todo]
