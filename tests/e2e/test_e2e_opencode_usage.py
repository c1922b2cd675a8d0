"""The use signals a real OpenCode session gives through codememory's own tools (the real `opencode` binary, a
scripted model, the plugin's tools answered by a real daemon): the model searches the memory, fetches one result
with `memory_get`, cites another's id in its answer and leaves the third alone. After capture, `codememory report`
says which of the three the session was shown and which it used, and how: fetched, cited, ignored.

And the signal no tool gives: the plugin's HUD shows memories when the agent opens a file, asked with the agent's
own tool call ("read …/refunds.py"), and the agent then edits that file as one of them says (used) while leaving
the other's file alone (ignored). What the agent had just read is not the user's request: it is no reason to
discount the edit, as a Claude Code hook, which shows memories with the prompt only, never had to.
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
REFUNDS = "Refunds in src/billing/refunds.py go through post_to_ledger() so the accounting export sees them"
EXPORT = "Refund reports in src/reports/export_csv.py write semicolons for the Dutch accountants"
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


def test_a_memory_the_hud_showed_for_a_file_just_read_is_used_by_the_edit_that_follows(tmp_path: Path) -> None:
    project = make_git_project(tmp_path / "shop")
    source = project / "src" / "billing" / "refunds.py"
    source.parent.mkdir(parents=True)
    source.write_text("def refund(order):\n    order.refunded = True\n", encoding="utf-8")
    path = str(source)
    steps = Script(
        [
            lambda _: Reply(tool_calls=[ToolCallSpec("read", {"filePath": path})]),
            lambda _: Reply(
                tool_calls=[
                    ToolCallSpec(
                        "edit",
                        {
                            "filePath": path,
                            "oldString": "    order.refunded = True\n",
                            "newString": "    if order.refunded:\n        return\n    order.refunded = True\n",
                        },
                    )
                ]
            ),
            lambda _: Reply("Done: a refund is now posted once, and only after it is marked."),
        ]
    )
    with ScriptedLLM(steps) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        env = {**oc.env(), "CODEMEMORY_PLUGIN_TIMEOUT_MS": "5000"}  # a loaded machine must not skip the HUD
        oc.env = lambda: env  # type: ignore[method-assign]
        config = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")  # keywords: no model to load
        run(env, project, "init", "--assistants", "opencode")
        ids = {
            "refunds": run(env, project, "store", REFUNDS)["memory"]["id"],
            "export": run(env, project, "store", EXPORT)["memory"]["id"],
        }
        daemon = spawn(env)
        try:
            done = oc.run(project, "Customers are charged back twice when they click fast. Fix it.", timeout=300)
            run(env, project, "capture", "--no-extract")
        finally:
            daemon.terminate()
    assert done.returncode == 0, done.stderr
    assert "if order.refunded" in source.read_text(encoding="utf-8")

    report = run(env, project, "report")
    rows = {r["id"]: r for r in report["memories"]}
    assert rows[ids["refunds"]]["shown"] == 1, rows  # shown by the HUD once the agent had read the file
    # the edit writes nothing of the memory's: the file it changes, the one the memory is about, is the evidence
    assert rows[ids["refunds"]]["used"] == 1, rows
    shown = run(env, project, "show", ids["refunds"])["usefulness"]
    assert "edit" in shown["last_use"] and "refunds.py" in shown["last_use"], shown
    if ids["export"] in rows:  # shown too (it names refunds): never acted on
        assert rows[ids["export"]]["used"] == 0, rows
