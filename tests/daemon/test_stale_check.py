"""The daemon checks a registered project for staleness on its own schedule ([staleness] check_interval)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.daemon import codememory, isolated_env, make_project, spawn, wait_for

pytestmark = [pytest.mark.slow]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_daemon_marks_a_memory_whose_file_was_deleted(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_STALENESS_CHECK_INTERVAL="1")
    root = tmp_path / "proj"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "Dev")
    (root / "worker.py").write_text("def drain_queue():\n    pass\n")
    _git(root, "add", "worker.py")
    _git(root, "commit", "-q", "-m", "first")
    (memory_id,) = make_project(env, root, "worker.py drains the queue every minute")
    _git(root, "rm", "-q", "worker.py")
    _git(root, "commit", "-q", "-m", "drop the worker")
    daemon = spawn(env)
    try:
        stats = wait_for(
            "the scheduled staleness check",
            lambda: (s := json.loads(codememory(env, "--project", root, "stats", "--json")))["stale"] and s,
        )
        assert stats["stale"] == 1 and stats["stale_checks"] >= 1
        shown = json.loads(codememory(env, "--project", root, "show", memory_id, "--json"))
        assert shown["staleness"]["reasons"][0]["subject"] == "worker.py"
        assert daemon.client().health()["errors_total"] == 0
    finally:
        daemon.terminate()
