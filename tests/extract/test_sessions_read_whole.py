"""Every assistant's session read whole: the same small session recorded from the real Claude Code 2.1.330 and the
real OpenCode 1.18.33 (tests/fixtures/transcripts/README.md) gives extraction the user's turns, the assistant's
text between its tool calls, the tool results and the agent's todo list (Claude Code's TaskCreate / TaskUpdate,
OpenCode's todowrite), and what extraction keeps from it is the same for both."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codememory.capture.hook_transcripts import read_session
from codememory.capture.opencode_db import OpenCodeDB
from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.extract import heuristic_candidates
from codememory.extract.todos import agent_todos

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
BETWEEN_TOOLS = [
    "I'll plan this first.",
    "Reading the fetcher.",
    "get() has no backoff, so a single 429 from the API ends the whole run.",
    "Checking it imports.",
    "The call fails as it should: nothing listens on port 9, so after the one try it raises.",
    "Added exponential backoff with the standard library only (time.sleep), no tenacity. Want me to cap the "
    "retries at 5?",
]


def claude_session(tmp_path: Path) -> tuple[SessionInfo, list[Turn], list[Todo]]:
    project = tmp_path / "fetcher"
    project.mkdir()
    text = (FIXTURES / "claude-code-2.1.330.jsonl").read_text(encoding="utf-8").replace("__PROJECT__", str(project))
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    info, turns = read_session(path, source="claude-code", root=str(project))
    return info, turns, []


def opencode_session(tmp_path: Path) -> tuple[SessionInfo, list[Turn], list[Todo]]:
    project = tmp_path / "fetcher"
    project.mkdir()
    recording = json.loads((FIXTURES / "opencode-1.18.33.json").read_text(encoding="utf-8"))
    db = tmp_path / "opencode.db"
    conn = sqlite3.connect(db)
    for table in ("project", "session", "message", "part", "todo"):
        spec = recording["tables"][table]
        conn.execute(spec["create"])
        for row in spec["rows"]:
            values = [v.replace("__PROJECT__", str(project)) if isinstance(v, str) else v for v in row.values()]
            conn.execute(f"INSERT INTO {table} ({','.join(row)}) VALUES ({','.join('?' * len(row))})", values)
    conn.commit()
    conn.close()
    (session_id,) = recording["sessions"]
    with OpenCodeDB(db) as reader:
        info = reader.session(session_id)
        assert info is not None
        return info, reader.turns(session_id), reader.todos(session_id)


READERS = {"claude-code": claude_session, "opencode": opencode_session}


@pytest.mark.parametrize("source", READERS)
def test_the_whole_session_reaches_extraction(source: str, tmp_path: Path) -> None:
    _, turns, todos = READERS[source](tmp_path)
    first, second = turns
    assert first.user_text.strip('"').startswith("add retries to the fetcher. I'd rather not pull in tenacity")
    assert list(first.assistant_texts) == BETWEEN_TOOLS  # every text between the tool calls, in order
    by_kind = {c.tool.lower(): c for c in first.tool_calls}
    assert "def get(url)" in by_kind["read"].output  # the tool results too
    shell = by_kind["bash"]
    assert shell.failed and shell.exit_code == 1 and "RuntimeError" in shell.output
    assert second.user_text.strip('"') == "yes, 5 is fine" and second.assistant_texts[-1] == "Done: at most 5 tries."
    listed = agent_todos(turns, todos)  # Claude Code: TaskCreate / TaskUpdate; OpenCode: its todo table
    assert [(t.content, t.status) for t in listed] == [
        ("Add retries with backoff to get()", "completed"),
        ("Cap the number of retries", "in_progress"),
    ]


@pytest.mark.parametrize("source", READERS)
def test_both_assistants_sessions_give_the_same_memories(source: str, tmp_path: Path) -> None:
    info, turns, todos = READERS[source](tmp_path)
    found = {(c.category, c.said_by, c.text) for c in heuristic_candidates(turns, info, todos)}
    assert found == {
        ("preference", "user", "I'd rather not pull in tenacity, one more dependency to keep alive."),
        ("decision", "assistant_accepted", "Cap the retries at 5."),  # the proposal the user said yes to
    }
