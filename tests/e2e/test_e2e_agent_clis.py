"""Codex CLI, Gemini CLI and Copilot CLI as real binaries (pinned in tests/clis), each against a scripted model server
on 127.0.0.1 speaking its own API (support.cli_codex, cli_gemini, cli_copilot): in a fresh git project with its own
HOME, `codememory init --assistants KEY` wires the CLI; the memory codememory's hooks inject reaches the model's first
request; the model calls codememory's MCP tool by the name that CLI gives it and the result comes back in the next
request; the CLI's todo tool, a file write and a failing command run for real; a second turn resumes the session;
the hooks capture both turns from the CLI's transcript into the daily log, the transcript reads whole (the
assistant's text between its tool calls, the tool results, the exit status), and extraction turns the session into
memories: the user's decision, the model's `*Remember*:` note and the todo left open. Nothing goes wrong in the hooks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory.capture.hook_transcripts import read_session, read_todos
from codememory.core.project import store_dir
from support import cli_scenario as scenario
from support.agent_cli import AgentCli, agents
from support.opencode import make_git_project

pytestmark = pytest.mark.slow  # real agent CLIs

# what each CLI calls its tools in the scenario, as its model sees them
TOOLS = {
    "codex": ("mcp__codememory__memory_search", "update_plan", "exec_command", "exec_command"),
    "gemini": ("mcp_codememory_memory_search", "write_todos", "write_file", "run_shell_command"),
    "copilot": ("codememory-memory_search", "sql", "create", "bash"),
}


@pytest.mark.parametrize("key", sorted(TOOLS))
def test_init_then_a_real_cli_session_gets_memories_calls_our_tools_and_is_captured_whole(
    key: str, tmp_path: Path
) -> None:
    agent: AgentCli = agents()[key](tmp_path / "home")
    project = make_git_project(tmp_path / "api")
    store = store_dir(project)
    init = agent.cm(project, "init", "--assistants", key)
    assert init["created"] is True and init["assistants"] == [key]
    # a convention marked essential: a standing instruction, which the session-start hook shows
    seeded = agent.cm(project, "store", "--category", "convention", "--importance", "0.9", scenario.NOTE)["memory"][
        "id"
    ]
    (store / "config.toml").write_text("[capture]\nmin_messages = 1\n", encoding="utf-8")  # one turn is enough

    # turn 1: a new session
    first = scenario.first_turn(agent, project)
    run = agent.run(project, first.prompt, first.replies).check()
    assert len(run.requests) == len(first.replies), f"{key} made {len(run.requests)} model calls"
    assert "project_memory" in run.texts[0] and scenario.NOTE in run.texts[0]  # the hooks' block, before any tool
    assert agent.mcp("memory_search") in agent.offered(run.requests[0]), sorted(agent.offered(run.requests[0]))
    assert seeded in run.texts[1] and any(seeded in out for out in run.outputs.values())  # our MCP tool answered
    assert (project / "limiter.py").read_text() == scenario.LIMITER
    assert run.session_id and run.transcript is not None and run.transcript.is_file()

    # turn 2: the same session, resumed
    second = scenario.second_turn(agent)
    agent.run(project, second.prompt, second.replies, resume=run.session_id).check()

    # the hooks captured both turns from the transcript into the daily log, once each
    logs = sorted((store / "memory").glob("*.md"))
    assert len(logs) == 1, logs
    log = logs[0].read_text()
    anchors = log.count(f"session:{run.session_id} turn:")
    assert anchors == 2 and "Redis instead of Memcached" in log and scenario.PROMPT_2 in log, log
    assert "failed (exit 3)" in log and "Files: limiter.py" in log, log

    # the transcript read whole: text between tool calls, tool results, exit status, files
    info, turns = read_session(run.transcript)
    assert info.session_id == run.session_id and info.source == key
    one, two = turns
    assert one.user_text == scenario.PROMPT_1 and two.user_text == scenario.PROMPT_2
    said = (scenario.SAY_SEARCH, scenario.SAY_PLAN, scenario.SAY_WRITE, scenario.SAY_CHECK, scenario.SAY_DONE)
    assert one.assistant_texts == said and two.assistant_texts == (scenario.SAY_MARKED,)
    assert tuple(c.tool for c in one.tool_calls) == TOOLS[key]
    search, _todo, _write, check = one.tool_calls
    assert seeded in search.output and search.status == "completed"
    assert check.failed and check.exit_code == 3
    assert one.files == ("limiter.py",) and one.completed and two.completed

    # extraction: the user's decision, the model's note, the todo left open (and not the one done)
    report = agent.cm(project, "capture", "--idle-after", "0")
    extracted = [s for p in report["extraction"] for s in p["sessions"] if s["session_id"] == run.session_id]
    assert extracted and extracted[0]["source"] == key and extracted[0]["status"] == "ok", report
    hits = agent.cm(project, "search", "Memcached")["results"]
    assert any(h["category"] == "decision" and "Redis instead of Memcached" in h["text"] for h in hits), hits
    hits = agent.cm(project, "search", "Redis counters expire")["results"]
    assert any(scenario.MODEL_NOTE in h["text"] for h in hits), hits
    todos = agent.cm(project, "list", "--category", "todo")["memories"]
    assert [t for t in todos if "gateway" in t["text"]] and not [t for t in todos if "60 second" in t["text"]], todos
    if key == "copilot":  # its todo list lives in its session database, not in the transcript's tool calls
        listed = [(t.content, t.status) for t in read_todos(run.transcript)]
        assert listed == [(scenario.TODO_DONE, "completed"), (scenario.TODO_OPEN, "pending")]

    hooks_log = store / "logs" / "hooks.log"
    assert not hooks_log.exists(), hooks_log.read_text()
