"""The daemon consolidates each registered project on its `[consolidation] interval`: a project never consolidated
gets a recorded run (trigger "schedule") soon after the daemon starts, a project consolidated within its interval
does not get another, and `interval = 0` leaves a project alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.daemon import codememory, isolated_env, make_project, spawn, wait_for

pytestmark = pytest.mark.slow

PARAPHRASES = (
    "Run the test suite with uv run pytest -q",
    "Run the test suite with uv run pytest -q before every push to main",
)


def runs(env: dict[str, str], root: Path) -> list[dict[str, Any]]:
    return list(json.loads(codememory(env, "--project", root, "consolidate", "--runs", "--json"))["runs"])


def test_the_daemon_consolidates_on_its_schedule(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_CAPTURE_POLL_INTERVAL="0.2", CODEMEMORY_NO_CAPTURE="1")
    due, off = tmp_path / "due", tmp_path / "off"
    ids = make_project(env, due, *PARAPHRASES)
    make_project(env, off, *PARAPHRASES)
    (off / ".codememory" / "config.toml").write_text("[consolidation]\ninterval = 0\n")
    daemon = spawn(env)
    try:
        done = wait_for("a scheduled run", lambda: runs(env, due))
        assert [(r["trigger"], r["status"], r["counts"]["squash"]) for r in done] == [("schedule", "applied", 1)]
        listed = json.loads(codememory(env, "--project", due, "list", "--json"))["memories"]
        assert [m["entered_by"] for m in listed] == ["consolidation"] and listed[0]["text"] == PARAPHRASES[1]
        archived = json.loads(codememory(env, "--project", due, "show", *ids, "--json"))
        assert all(m["archived"] and m["superseded_by"] == listed[0]["id"] for m in archived)
        client = daemon.client()
        seen = client.health()["tasks_last_run_at"]
        for _ in range(3):  # more rounds of the tasks: the interval (a day) has not passed, nothing runs again
            seen = wait_for(
                "another round of tasks", lambda s=seen: (t := client.health()["tasks_last_run_at"]) != s and t
            )
        assert len(runs(env, due)) == 1
        assert runs(env, off) == []
        assert client.health()["errors_total"] == 0
    finally:
        daemon.terminate()
