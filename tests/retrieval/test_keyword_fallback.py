"""Keyword-only search answers questions: with no embedding model, a plain-words query that finds too few
memories with all its words goes on with the memories holding some of its content words (BM25 over the
words ORed, stopwords and question words dropped), through the CLI, the API, the MCP server (official
client) and the daemon's /memory/search (what the OpenCode plugin's tool calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory import Store
from conftest import Invoke
from support.daemon import codememory, isolated_env, spawn
from support.mcp import call, session_with

NO_MODEL = '[embedding]\nprovider = "none"\n'

# (memory, a natural question about it that shares at most a word or two with it)
QUESTIONS = {
    "httpx": ("Use httpx, not requests, for every outbound HTTP call", "why did we choose httpx?"),
    "redux": ("We do not use Redux; UI state lives in React context", "what do we use for state management?"),
    "postgres": ("The Postgres connection pool is capped at 20 in production", "how big is the connection pool?"),
    "alembic": ("Alembic migrations run automatically when the API container starts", "when do migrations run?"),
    "pytest": ("Run the tests with pytest -n auto; the suite needs Docker for the database", "how do I run the tests?"),
    "ruff": ("Ruff replaced black and isort for formatting and linting", "which formatter do we use?"),
    "redis": ("Session data is cached in Redis with a 15 minute TTL", "where are sessions cached?"),
    "deploy": ("Deploys go out on Tuesdays after the billing batch finishes", "on which day do we deploy?"),
    "timeout": ("Partner API calls time out after 10 s; the tax vendor needs 30", "which timeout for the tax vendor?"),
    "logging": ("Logs are JSON lines shipped to Loki; never log request bodies", "why are request bodies not logged?"),
    "flags": ("Feature flags live in LaunchDarkly, not in environment variables", "where are the feature flags kept?"),
    "uv": ("Dependencies are locked with uv; poetry was dropped in March", "why was poetry dropped?"),
}  # fmt: skip


def no_model(root: Path) -> Path:
    """Keyword-only whatever the default provider: what a user gets with `provider = "none"`."""
    (root / ".codememory" / "config.toml").write_text(NO_MODEL, encoding="utf-8")
    return root


@pytest.fixture
def corpus(project: Path) -> dict[str, str]:
    no_model(project)
    with Store.open(project) as store:
        assert not store.semantic.configured
        return {key: store.add(text).memory.id for key, (text, _) in QUESTIONS.items()}


def search_json(cm: Invoke, *args: str) -> dict[str, Any]:
    result = cm("search", *args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize("key", list(QUESTIONS))
def test_a_natural_question_finds_its_memory(cm: Invoke, corpus: dict[str, str], key: str) -> None:
    data = search_json(cm, QUESTIONS[key][1], "--limit", "3")
    assert data["mode"] == "lexical" and data["degraded"] is True  # no model, keywords only
    ids = [r["id"] for r in data["results"]]
    assert corpus[key] in ids, (QUESTIONS[key][1], [r["text"] for r in data["results"]])


def test_the_question_of_the_issue_finds_httpx_first(cm: Invoke, corpus: dict[str, str]) -> None:
    out = cm("search", "why did we choose httpx?")
    assert out.exit_code == 0 and "No memories match" not in out.stderr
    data = search_json(cm, "why did we choose httpx?")
    first = data["results"][0]
    assert (first["id"], first["match"], first["fuzzy"]) == (corpus["httpx"], "partial", False)
    assert first["explain"]["bm25"] > 0


def test_lower_case_not_is_a_word_not_an_operator_nor_a_keyword(cm: Invoke, corpus: dict[str, str]) -> None:
    """Both memories hold "not"; only one is about requests."""
    data = search_json(cm, "why not requests?")
    assert data["results"][0]["id"] == corpus["httpx"]
    assert corpus["redux"] not in [r["id"] for r in data["results"]]
    assert data["literal"] is False


def test_upper_case_not_still_excludes(cm: Invoke, corpus: dict[str, str]) -> None:
    ids = [r["id"] for r in search_json(cm, "httpx NOT requests", "--no-fuzzy")["results"]]
    assert ids == []  # the httpx memory mentions requests: excluded, and nothing is relaxed
    ids = [r["id"] for r in search_json(cm, "state NOT redux", "--no-fuzzy")["results"]]
    assert ids == []


def test_all_words_outrank_any_word_matches_whatever_their_bm25(project: Path) -> None:
    no_model(project)
    with Store.open(project) as store:
        filler = " ".join(f"word{i}" for i in range(60))
        both = store.add(f"The kettle was boiling. {filler} Somewhere a teapot.").memory.id
        strong = store.add("kettle kettle kettle kettle").memory.id
        res = store.search("kettle teapot", show_held_back=True)
    assert [(h.memory.id, h.match) for h in res.hits] == [(both, "exact"), (strong, "partial")]
    assert res.hits[1].score > res.hits[0].score  # the pass decides the order, not the score
    # ... and the relevance decision what is shown: "kettle" is in every memory, "teapot" in one
    assert [h.held_back for h in res.hits] == [False, True] and res.held_back == 1


def test_a_tag_naming_a_word_lifts_a_some_word_match(project: Path) -> None:
    no_model(project)
    with Store.open(project) as store:
        plain = store.add("retries use exponential backoff").memory.id
        tagged = store.add("retries stop after five attempts", tags="retries").memory.id
        res = store.search("how many retries do we allow?", show_held_back=True)  # the ranking, whatever is shown
    assert [h.memory.id for h in res.hits] == [tagged, plain]
    assert res.hits[0].explain["tag_nudge"] == 0.2 and "tag_nudge" not in res.hits[1].explain
    assert res.hits[0].explain["bm25"] <= res.hits[1].explain["bm25"] * 1.01  # the tag made the difference


def test_no_fallback_when_all_words_fill_the_limit(project: Path) -> None:
    no_model(project)
    with Store.open(project) as store:
        full = [store.add(f"docker compose note {i}").memory.id for i in range(3)]
        store.add("docker swarm note")
        res = store.search("docker compose", limit=3)
        assert set(h.memory.id for h in res.hits) == set(full) and {h.match for h in res.hits} == {"exact"}
        # one short: the fallback finds the fourth, which holds only "docker" (in every memory): held back
        more = store.search("docker compose", limit=4, show_held_back=True)
        assert [(h.match, h.held_back) for h in more.hits][3] == ("partial", True)
        assert len(store.search("docker compose", limit=4).hits) == 3


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("docker NOT swarm", {"compose"}),
        ('"compose file"', {"compose"}),
        ("migrat*", {"migrations"}),
        ("podman OR swarm", {"podman", "swarm"}),
        ("docker AND podman", set()),
        ("(swarm OR rootless) NOT api", {"swarm", "podman"}),
    ],
)
def test_explicit_syntax_keeps_its_strict_meaning(project: Path, query: str, expected: set[str]) -> None:
    no_model(project)
    with Store.open(project) as store:
        ids = {
            "compose": store.add("docker compose file for the api").memory.id,
            "swarm": store.add("docker swarm is not used here").memory.id,
            "podman": store.add("podman runs rootless containers").memory.id,
            "migrations": store.add("migrations run on startup").memory.id,
        }
        res = store.search(query, fuzzy=False)
    assert {h.memory.id for h in res.hits} == {ids[k] for k in expected}
    assert all(h.match == "exact" for h in res.hits)


def test_one_word_and_stopword_only_queries_are_not_relaxed(project: Path) -> None:
    no_model(project)
    with Store.open(project) as store:
        path = store.add("Tokens are refreshed in src/auth/oauth.py").memory.id
        store.add("The build writes py files and an oauth client")
        assert [h.memory.id for h in store.search("src/auth/oauth.py", fuzzy=False).hits] == [path]
        assert store.search("what is it?", fuzzy=False).hits == []


def test_typos_in_a_question_go_to_the_fuzzy_pass_after_the_fallback(cm: Invoke, corpus: dict[str, str]) -> None:
    data = search_json(cm, "where do we keep the feature flgas?")
    by_id = {r["id"]: r for r in data["results"]}
    assert data["results"][0]["id"] == corpus["flags"]  # "feature" is a word of it: partial, first
    assert by_id[corpus["flags"]]["match"] == "partial"
    data = search_json(cm, "how do we handle launchdarkley outages?")
    hit = next(r for r in data["results"] if r["id"] == corpus["flags"])
    assert hit["match"] == "fuzzy" and hit["fuzzy"] is True and data["fuzzy_used"] is True
    assert hit["explain"]["terms"]["launchdarkley"]["matched"] == "typo:launchdarkly"
    assert [r["match"] for r in data["results"]] == sorted(
        (r["match"] for r in data["results"]), key=["exact", "partial", "fuzzy"].index
    )
    none = search_json(cm, "how do we handle launchdarkley outages?", "--no-fuzzy")
    assert corpus["flags"] not in [r["id"] for r in none["results"]]


def test_json_keys_are_only_added(cm: Invoke, corpus: dict[str, str]) -> None:
    data = search_json(cm, "why did we choose httpx?")
    assert set(data) >= {"query", "count", "has_more", "fuzzy_used", "literal", "mode", "degraded", "results"}
    assert {r["match"] for r in data["results"]} <= {"exact", "partial", "fuzzy"}


def test_lexical_mode_with_a_question(cm: Invoke, corpus: dict[str, str]) -> None:
    data = search_json(cm, "why was poetry dropped?", "--mode", "lexical")
    assert data["results"][0]["id"] == corpus["uv"] and data["mode"] == "lexical"


def test_mcp_memory_search_answers_a_question(console_script: Path, project: Path) -> None:
    no_model(project)

    async def body(session: ClientSession) -> tuple[Any, Any]:
        stored = await call(session, "memory_store", {"text": QUESTIONS["httpx"][0], "category": "decision"})
        await call(session, "memory_store", {"text": QUESTIONS["redux"][0], "category": "decision"})
        return stored, await call(session, "memory_search", {"query": "why did we choose httpx?"})

    stored, found = session_with(console_script, ["--project", project, "mcp"], body)
    [hit] = found["results"]
    assert (hit["id"], hit["match"]) == (stored["memory"]["id"], "partial")
    assert hit["why"].startswith("bm25 ") and found["degraded"] is True


@pytest.mark.slow
def test_daemon_memory_search_answers_a_question(tmp_path: Path) -> None:
    """The endpoint behind the OpenCode plugin's memory_search tool."""
    env = isolated_env(tmp_path / "daemon")
    root = tmp_path / "project"
    root.mkdir()
    codememory(
        env, "--project", root, "init", "--assistants", "none"
    )  # registered: the daemon serves only the user's projects
    no_model(root)
    httpx = codememory(env, "--project", root, "store", QUESTIONS["httpx"][0], "--quiet").strip()
    codememory(env, "--project", root, "store", QUESTIONS["redux"][0], "--quiet")
    daemon = spawn(env)
    try:
        client = daemon.client()
        found = client.request("POST", "/memory/search", {"project_root": str(root), "query": "why not requests?"})
    finally:
        daemon.terminate()
    assert found.status == 200
    assert [(h["id"], h["match"]) for h in found.data["results"]] == [(httpx, "partial")]
