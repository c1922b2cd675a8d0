"""The daemon consolidates each registered project on its `[consolidation] interval`, counted from the last run or,
before the first, from the store's creation: a project whose interval has passed gets a recorded run (trigger
"schedule"), a store younger than its interval (a day by default) does not, and `interval = 0` leaves a project
alone."""

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
    due, fresh, off = tmp_path / "due", tmp_path / "fresh", tmp_path / "off"
    ids = make_project(env, due, *PARAPHRASES)
    for root in (fresh, off):
        make_project(env, root, *PARAPHRASES)
    (due / ".codememory" / "config.toml").write_text("[consolidation]\ninterval = 1\n")
    (off / ".codememory" / "config.toml").write_text("[consolidation]\ninterval = 0\n")
    daemon = spawn(env)
    try:
        done = wait_for("a scheduled run", lambda: runs(env, due))
        assert (done[-1]["trigger"], done[-1]["status"], done[-1]["counts"]["squash"]) == ("schedule", "applied", 1)
        listed = json.loads(codememory(env, "--project", due, "list", "--json"))["memories"]
        assert [m["entered_by"] for m in listed] == ["consolidation"] and listed[0]["text"] == PARAPHRASES[1]
        archived = json.loads(codememory(env, "--project", due, "show", *ids, "--json"))
        assert all(m["archived"] and m["superseded_by"] == listed[0]["id"] for m in archived)
        wait_for("a second run a second later", lambda: len(runs(env, due)) >= 2)
        assert runs(env, fresh) == []  # created moments ago: its first run is a day away
        assert runs(env, off) == []
        assert daemon.client().health()["errors_total"] == 0
    finally:
        daemon.terminate()
