"""What agents did with what they were shown, end to end with the real Claude Code CLI (pinned in tests/clis)
against the scripted Anthropic API, in a project set up by `codememory init --assistants claude`.

Three sessions are each shown the project's three memories by the session-start hook. In each, the model runs the
deploy script one memory names (a use: its path is in the Bash call), never touches what the webhook memory says
(ignored), and in the first it runs `pytest` bare where a memory says never (a contradiction). The Stop hook
captures each turn, and the capture reads it against what the session was shown. Then `codememory report` says
which memories were shown and which used, `show` says the same of one memory, the ignored memory's ranking factor
is under 1 and the used one's over 1, and a search that found the ignored one first before the sessions finds the
used one first after them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_e2e_claude import CODEMEMORY, claude, claude_bin, cm, isolated_env, poll

from support.opencode import make_git_project
from support.scripted_anthropic import Reply, Script, ScriptedAnthropic, ToolUse

pytestmark = pytest.mark.slow  # the real Claude Code CLI

USED = "Staging deploys run scripts/ship_release.sh, which tags the release first"
IGNORED = "Staging deploys wait for WEBHOOK_DRAIN_SECONDS"
RULE = "Never run `pytest` bare in this repository: use `scripts/run_tests.sh`, it starts Postgres first."
QUERY = "staging deploys"
SESSIONS = 25  # at the default weight (0.5) search reorders these two (a near tie) only after more than 15


def run_cm(env: dict[str, str], project: Path, *args: str) -> str:
    done = subprocess.run([CODEMEMORY, *args], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def session(env: dict[str, str], project: Path, n: int) -> str:
    """One `claude -p` session: the model runs the deploy script (and, in the first, `pytest` bare), then answers."""
    calls = [ToolUse("Bash", {"command": "bash scripts/ship_release.sh --dry-run"}, id=f"toolu_deploy_{n}")]
    if n == 0:
        calls.append(ToolUse("Bash", {"command": "pytest -q --co"}, id="toolu_pytest"))
    script = Script([Reply("Deploying to staging.", tool_uses=calls), Reply("Deployed to staging.")])
    with ScriptedAnthropic(script) as api:
        done = claude(env, api, project, "Run the staging deploys, please.", "Bash")
        requests = api.conversation_requests()
    assert "scripts/ship_release.sh" in json.dumps(requests[0]), "the session-start block did not reach the model"
    return str(done["session_id"])


def order(env: dict[str, str], project: Path) -> list[str]:
    hits: list[dict[str, Any]] = cm(env, project, "search", QUERY, "--mode", "lexical")["results"]
    return [h["id"] for h in hits]


def test_report_shows_what_claude_code_sessions_were_shown_and_used(tmp_path: Path) -> None:
    claude_bin()  # fail first, with the npm command, when the CLI is not installed
    project = make_git_project(tmp_path / "api")
    (project / "scripts").mkdir()
    (project / "scripts" / "ship_release.sh").write_text("echo deployed\n", encoding="utf-8")
    env = isolated_env(tmp_path / "home")
    cm(env, project, "init", "--assistants", "claude")
    ids = {
        "ignored": cm(env, project, "store", IGNORED, "--importance", "0.9")["memory"]["id"],
        "used": cm(env, project, "store", USED, "--importance", "0.6")["memory"]["id"],
        # a standing instruction: every session start shows it, so a bare `pytest` contradicts what was shown
        "rule": cm(env, project, "store", RULE, "--category", "convention", "--importance", "0.9")["memory"]["id"],
    }
    before = order(env, project)
    assert before[:2] == [ids["ignored"], ids["used"]]  # both say "staging deploys": the shorter text leads

    sessions = [session(env, project, n) for n in range(SESSIONS)]
    assert len(set(sessions)) == SESSIONS

    def settled() -> dict[str, Any] | None:
        """The report once the last session's end is captured: a turn's end finishes in a process of its own, which
        may still be at work as `claude` exits."""
        found = cm(env, project, "report")
        rows = {r["id"]: r for r in found["memories"]}
        return found if rows.get(ids["used"], {}).get("used") == SESSIONS else None

    report = poll("the last session's capture", settled, timeout=60)
    rows = {r["id"]: r for r in report["memories"]}
    assert report["sessions"] == SESSIONS and report["tokens"] > 0
    assert {k: rows[ids["used"]][k] for k in ("shown", "used")} == {"shown": SESSIONS, "used": SESSIONS}
    assert {k: rows[ids["ignored"]][k] for k in ("shown", "used", "contradicted")} == {
        "shown": SESSIONS,
        "used": 0,
        "contradicted": 0,
    }
    assert rows[ids["rule"]]["contradicted"] == 1 and [r["id"] for r in report["contradicted"]] == [ids["rule"]]
    assert "pytest -q --co" in str(report["contradicted"][0]["evidence"])
    assert report["by_signal"]["entity"] >= SESSIONS
    assert {s["session_id"] for s in report["per_session"]} == set(sessions)
    assert report["most_useful"][0]["id"] == ids["used"]
    assert ids["ignored"] in {r["id"] for r in report["never_used"]}

    text = run_cm(env, project, "--project", str(project), "report")
    assert f"{ids['used']}  used in {SESSIONS} of {SESSIONS} sessions" in text
    assert "Shown and never used:" in text and ids["ignored"] in text.split("Shown and never used:")[1]
    shown = cm(env, project, "show", ids["used"])["usefulness"]
    assert (shown["shown"], shown["used"]) == (SESSIONS, SESSIONS)
    assert "scripts/ship_release.sh" in shown["last_use"]

    # ranking: the ignored memory sinks under the used one it led before the sessions
    after = cm(env, project, "search", QUERY, "--mode", "lexical")["results"]
    factors = {h["id"]: h["explain"]["usefulness"]["factor"] for h in after if "usefulness" in h["explain"]}
    assert factors[ids["ignored"]] < 1.0 < factors[ids["used"]]
    assert order(env, project)[:2] == [ids["used"], ids["ignored"]]
