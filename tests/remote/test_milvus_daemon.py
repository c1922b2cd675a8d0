"""The daemon asks the organisation's Milvus through one kept connection, and lets a Milvus Lite file go when idle
so that a command in another process (here `codememory publish`) can take its turn; then it connects again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support.daemon import PY, Daemon, codememory, isolated_env, make_project, spawn, wait_for

pytest.importorskip("pymilvus", reason='the milvus extra: pip install -e ".[milvus]"')

pytestmark = [pytest.mark.default_model, pytest.mark.slow]


def _retrieve(d: Daemon, project: Path) -> dict[str, Any]:
    body = {"query_expansion": ["payment retry backoff"], "entities": [], "project_root": str(project), "remote": True}
    client = d.client(timeout=60)
    resp = client.request("POST", "/retrieve", body)
    assert resp.status == 200, resp.data
    return dict(resp.data)


def test_the_daemon_keeps_its_connection_and_lets_a_lite_file_go(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)  # publishing needs the default model
    config = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[remote]\nuri = "{tmp_path / "org.db"}"\n')
    payments, orders = tmp_path / "payments", tmp_path / "orders"
    make_project(env, payments, "Payment retries use exponential backoff, at most 5 attempts")
    codememory(env, "--project", payments, "publish")
    make_project(env, orders, "Order retries reuse the payment backoff policy")
    d = spawn(env)
    try:
        for _ in range(2):  # the second through the connection the first opened
            found = _retrieve(d, orders)
            assert found["remote"]["ok"], found["remote"]
            assert "remote:payments" in [m.get("origin") for m in found["memories"]]

        codememory(env, "--project", payments, "store", "Refunds over 1000 EUR need a second approver", "--quiet")

        def published() -> dict[str, Any] | None:
            done = subprocess.run(
                [str(Path(PY).parent / "codememory"), "--project", str(payments), "publish", "--json"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            return json.loads(done.stdout) if done.returncode == 0 else None

        # Refused while the daemon holds the file, then done once it has let it go (5 s without a call).
        assert wait_for("the daemon to let the Milvus Lite file go", published, timeout=90)["sent"] == 1
        again = _retrieve(d, orders)
        assert again["remote"]["ok"], "the daemon connects again after letting the file go"
    finally:
        d.terminate()
