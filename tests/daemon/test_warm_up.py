"""The daemon loads the embedding model and a recent project's vectors right after it starts, so the first agent
request after `daemon start` does not wait for them (the OpenCode plugin gives up on a slow /retrieve)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory.embedding.semantic import VECTORS_LOADING
from support.daemon import codememory, isolated_env, make_project, spawn, wait_for
from support.page_cache import cached_share, evict

pytestmark = [pytest.mark.slow, pytest.mark.default_model]


def test_the_model_is_loaded_before_any_request(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)  # the default model, as installed
    make_project(env, tmp_path / "proj", "Use httpx for outbound HTTP calls in the webhook worker")
    daemon = spawn(env)
    try:
        health = wait_for(
            "the warm-up to load the model", lambda: (h := daemon.client().health())["embedding"]["loaded"] and h
        )
        assert health["embedding"]["available"] is True
        assert health["errors_total"] == 0
    finally:
        daemon.terminate()


def test_without_a_model_nothing_is_loaded_and_nothing_fails(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)  # provider "none"
    make_project(env, tmp_path / "proj", "Use httpx for outbound HTTP calls in the webhook worker")
    daemon = spawn(env)
    try:
        wait_for("a first round of tasks", lambda: daemon.client().health()["tasks_last_run_at"])
        health = daemon.client().health()
        assert health["embedding"]["loaded"] is False
        assert health["errors_total"] == 0
    finally:
        daemon.terminate()


def test_a_request_while_the_vectors_are_out_of_memory_answers_from_keywords_and_says_so(tmp_path: Path) -> None:
    """The daemon opens a store whose vector files were pushed out of the page cache: the request does not wait
    for them to come back from disk by random reads, it answers from the keyword pass, marked degraded with the
    reason; the files are read in by one background pass, and the next requests use the vectors again."""
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)  # the default model, as installed
    daemon = spawn(env)  # no project registered yet: the warm-up has nothing to read in
    try:
        wait_for("a first round of tasks", lambda: daemon.client().health()["tasks_last_run_at"])
        project = tmp_path / "proj"
        make_project(
            env,
            project,
            "Use httpx for outbound HTTP calls in the webhook worker",
            "The billing service retries failed charges three times with exponential backoff",
        )
        codememory(env, "--project", project, "search", "webhook")  # writes the vector files, as any search does
        vectors = sorted(p for p in (project / ".codememory" / "cache" / "vectors").iterdir() if p.suffix == ".vec")
        assert vectors
        evict(vectors)
        cold = daemon.client(timeout=60).retrieve(["which HTTP client does the webhook worker use"], project)
        assert cold["degraded"] is True
        assert cold["degraded_reason"] == VECTORS_LOADING
        assert [m["text"] for m in cold["memories"]][:1] == ["Use httpx for outbound HTTP calls in the webhook worker"]
        warm = wait_for(
            "the vectors to be read back in",
            lambda: (
                not (r := daemon.client(timeout=60).retrieve(["which HTTP client for webhooks"], project))["degraded"]
                and r
            ),
        )
        assert warm["degraded_reason"] is None
        assert [cached_share(p) for p in vectors] == [1.0] * len(vectors)
    finally:
        daemon.terminate()


def test_a_cli_search_the_daemon_runs_waits_for_vectors_out_of_memory(tmp_path: Path) -> None:
    """`codememory search` handed to the daemon (POST /cli/search) is a command: its user wants the whole answer,
    as when the CLI searches itself (docs/search.md: commands wait for the disk), not keywords alone while the
    vector files are read back in."""
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)  # the default model, as installed
    daemon = spawn(env)  # no project registered yet: the warm-up opens no store
    try:
        wait_for("a first round of tasks", lambda: daemon.client().health()["tasks_last_run_at"])
        project = tmp_path / "proj"
        make_project(env, project, "Use httpx for outbound HTTP calls in the webhook worker")
        codememory(env, "--project", project, "search", "webhook")  # in the CLI's process: writes the vector files
        vectors = sorted(p for p in (project / ".codememory" / "cache" / "vectors").iterdir() if p.suffix == ".vec")
        assert vectors
        evict(vectors)
        answer = daemon.client(timeout=60).request(
            "POST", "/cli/search", {"project_root": str(project), "query": "which HTTP client for webhooks"}
        )
        assert answer.status == 200, answer.data
        assert (answer.data["degraded"], answer.data["degraded_reason"], answer.data["mode"]) == (False, None, "hybrid")
    finally:
        daemon.terminate()
