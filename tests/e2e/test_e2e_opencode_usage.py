"""The use signals a real OpenCode session gives through codememory's own tools (the real `opencode` binary, a
scripted model, the plugin's tools answered by a real daemon): the model searches the memory, fetches one result
with `memory_get`, cites another's id in its answer and leaves the third alone. After capture, `codememory report`
says which of the three the session was shown and which it used, and how: fetched, cited, ignored.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.daemon import spawn
from support.opencode import OpenCodeHome, make_git_project
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec

pytestmark = pytest.mark.slow  # the real OpenCode binary

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
FETCHED = "Staging deploys wait for WEBHOOK_DRAIN_SECONDS before the switch"
CITED = "Staging deploys run scripts/ship_release.sh, which tags the release first"
IGNORED = "Staging deploys are announced in the ops channel an hour ahead"


def run(env: dict[str, str], cwd: Path, *args: str) -> Any:
    done = subprocess.run([CODEMEMORY, *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def test_report_says_what_an_opencode_session_fetched_cited_and_ignored(tmp_path: Path) -> None:
    project = make_git_project(tmp_path / "api")
    ids: dict[str, str] = {}
    seen: dict[str, Any] = {}

    def fetch(body: dict[str, Any]) -> Reply:
        seen["search"] = [m for m in body["messages"] if m["role"] == "tool"][-1]["content"]
        return Reply(tool_calls=[ToolCallSpec("memory_get", {"ids": [ids["fetched"]]})])

    steps = Script(
        [
            lambda _: Reply(tool_calls=[ToolCallSpec("memory_search", {"query": "staging deploys"})]),
            fetch,
            lambda _: Reply(f"Run scripts/ship_release.sh ({ids['cited']}), then wait for the webhook drain."),
        ]
    )
    with ScriptedLLM(steps) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        env = oc.env()
        config = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")  # keywords: no model to load
        run(env, project, "init", "--assistants", "opencode")
        ids.update(
            fetched=run(env, project, "store", FETCHED)["memory"]["id"],
            cited=run(env, project, "store", CITED)["memory"]["id"],
            ignored=run(env, project, "store", IGNORED)["memory"]["id"],
        )
        daemon = spawn(env)
        try:
            done = oc.run(project, "How do staging deploys work here?", timeout=300)
            run(env, project, "capture", "--no-extract")  # what the plugin streamed live, and anything left
        finally:
            daemon.terminate()
    assert done.returncode == 0, done.stderr
    assert all(i in seen["search"] for i in ids.values()), seen  # the search showed all three

    report = run(env, project, "report")
    rows = {r["id"]: r for r in report["memories"]}
    got = {name: (rows[i]["shown"], rows[i]["used"], rows[i]["contradicted"]) for name, i in ids.items()}
    assert got == {"fetched": (1, 1, 0), "cited": (1, 1, 0), "ignored": (1, 0, 0)}
    assert {signal: n for signal, n in report["by_signal"].items() if n} == {"fetched": 1, "cited": 1}
    assert ids["ignored"] in {r["id"] for r in report["never_used"]}
    shown = run(env, project, "show", ids["cited"])["usefulness"]
    assert ids["cited"] in shown["last_use"]  # the evidence: the answer that cites it
