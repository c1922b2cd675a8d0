"""`codememory import-history` on sessions real CLIs had before codememory was installed: OpenCode (its sessions in
its own database) and Codex (a rollout transcript under $CODEX_HOME) each run one scripted session in a git project
with no codememory at all; then `codememory init` offers the import, `import-history` captures and extracts both
sessions, and a second run adds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli_scenario as scenario
from support.agent_cli import AgentCli, agents
from support.opencode import make_git_project
from support.scripted_llm import Reply

pytestmark = pytest.mark.slow  # real agent CLIs


def test_sessions_from_before_codememory_are_imported_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = make_git_project(tmp_path / "api")
    ran: dict[str, str] = {}
    for key in ("opencode", "codex"):
        agent: AgentCli = agents()[key](home)
        replies = [
            Reply(scenario.SAY_WRITE, tool_calls=[agent.write_file(project / "limiter.py", scenario.LIMITER)]),
            Reply(scenario.SAY_DONE),
        ]
        run = agent.run(project, scenario.PROMPT_1, replies).check()
        assert run.session_id, f"{key} named no session"
        ran[key] = run.session_id

    init = agent.cm(project, "init", "--assistants", "none")
    assert init["past_sessions"] == 2

    dry = agent.cm(project, "import-history", "--dry-run")
    assert dry["by_assistant"] == {"opencode": 1, "codex": 1}
    assert {(s["assistant"], s["session_id"]) for s in dry["sessions"]} == set(ran.items())

    first = agent.cm(project, "import-history")
    assert first["to_import"] == 2 and first["turns_captured"] == 2 and not first["errors"]
    assert all(s["error"] is None for s in first["sessions"]), first["sessions"]
    log = "".join(p.read_text() for p in sorted((project / ".codememory" / "memory").glob("*.md")))
    assert log.count("Redis instead of Memcached") == 2 and "Files: limiter.py" in log, log
    decisions = agent.cm(project, "list", "--category", "decision")["memories"]
    assert any("Redis instead of Memcached" in m["text"] for m in decisions), decisions

    again = agent.cm(project, "import-history")
    assert (again["found"], again["to_import"], again["turns_captured"], again["memories_created"]) == (2, 0, 0, 0)
