"""The daemon loads the embedding model and a recent project's vectors right after it starts, so the first agent
request after `daemon start` does not wait for them (the OpenCode plugin gives up on a slow /retrieve)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.daemon import isolated_env, make_project, spawn, wait_for

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
