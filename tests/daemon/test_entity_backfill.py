"""A large import through the CLI while the daemon serves the project: the text is stored at once and the daemon
reads the entities after it."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from codememory import Store
from codememory.daemon.files import LOG_NAME
from codememory.service.transfer import IMPORT_BATCH
from support.daemon import codememory, isolated_env, make_project, spawn, state_of, wait_for

pytestmark = [pytest.mark.slow]


def test_the_daemon_reads_the_entities_of_a_large_import(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    root = tmp_path / "proj"
    make_project(env, root)
    lines = IMPORT_BATCH + 300
    dump = tmp_path / "big.jsonl"
    dump.write_text(
        "".join(json.dumps({"text": f"kafka consumer {i} lags behind src/app_{i}.py"}) + "\n" for i in range(lines))
    )
    daemon = spawn(env)
    try:
        out = json.loads(codememory(env, "--project", root, "import", dump, "--json"))
        assert out["added"] == lines

        def by_entity() -> bool:
            listed = codememory(env, "--project", root, "list", "--entity", "kafka", "--limit", "10000", "--json")
            return len(json.loads(listed)["memories"]) == lines

        wait_for("the daemon's entity pass", by_entity, timeout=120)
        # the import left them to the daemon (it serves this project) rather than reading them itself
        assert "read the entities of" in (state_of(env) / LOG_NAME).read_text()
        assert daemon.client().health()["errors_total"] == 0
    finally:
        daemon.terminate()


def test_a_daemon_of_another_version_is_not_left_the_entities(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    root = tmp_path / "proj"
    make_project(env, root)
    lines = IMPORT_BATCH + 300
    dump = tmp_path / "big.jsonl"
    dump.write_text("".join(json.dumps({"text": f"kafka consumer {i} lags"}) + "\n" for i in range(lines)))
    daemon = spawn(env)
    try:
        daemon.proc.send_signal(signal.SIGSTOP)  # it runs, but reads nothing while the import does
        info = state_of(env) / "daemon.json"
        info.write_text(json.dumps({**json.loads(info.read_text()), "version": "0.0.1"}))  # an older daemon
        assert json.loads(codememory(env, "--project", root, "import", dump, "--json"))["added"] == lines
        with Store.open(root) as store:
            assert store.db.count_entities_pending() == 0  # the import read them itself
    finally:
        daemon.proc.send_signal(signal.SIGCONT)
        daemon.terminate()
