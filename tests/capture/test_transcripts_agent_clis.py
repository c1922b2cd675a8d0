"""The Codex CLI 0.171, Gemini CLI 0.61 and Copilot CLI 1.0 transcripts recorded from the real binaries
(tests/fixtures/transcripts/README.md: the two turns of support.cli_scenario), read whole and captured into real
stores: each prompt without the context our hooks put into it, the assistant's text between its tool calls, every
tool call with its result and exit status, the files written, the todo list; capture is idempotent and takes a
turn only once it is finished."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from codememory.capture.daily_log import MEMORY_DIR, find_anchors
from codememory.capture.hook_transcripts import (
    capture_transcript,
    detect_source,
    read_session,
    read_todos,
    transcript_project,
)
from codememory.core.project import store_dir
from codememory.extract.heuristic import heuristic_candidates
from codememory.service.project_store import Store
from support import cli_scenario as scenario

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"


@dataclass(frozen=True)
class Recording:
    source: str
    fixture: str
    where: str  # the transcript's path under HOME, as the CLI names it
    session_id: str
    tools: tuple[str, ...]  # turn 1's tool calls, as the model called them
    todo_tool: str


def _first_line(fixture: str) -> dict[str, object]:
    return json.loads((FIXTURES / fixture).read_text(encoding="utf-8").split("\n", 1)[0])  # type: ignore[no-any-return]


def _codex() -> Recording:
    meta = _first_line("codex-0.171.0.jsonl")["payload"]
    session = str(meta["id"])  # type: ignore[index]
    where = f".codex/sessions/2026/11/27/rollout-2026-11-27T07-08-00-{session}.jsonl"
    tools = ("mcp__codememory__memory_search", "update_plan", "exec_command", "exec_command")
    return Recording("codex", "codex-0.171.0.jsonl", where, session, tools, "update_plan")


def _gemini() -> Recording:
    session = str(_first_line("gemini-0.61.0.jsonl")["sessionId"])
    where = f".gemini/tmp/app/chats/session-2026-11-27T07-08-{session[:8]}.jsonl"
    tools = ("mcp_codememory_memory_search", "write_todos", "write_file", "run_shell_command")
    return Recording("gemini", "gemini-0.61.0.jsonl", where, session, tools, "write_todos")


def _copilot() -> Recording:
    session = str(_first_line("copilot-1.0.102.jsonl")["data"]["sessionId"])  # type: ignore[index]
    where = f".copilot/session-state/{session}/events.jsonl"
    tools = ("codememory-memory_search", "sql", "create", "bash")
    return Recording("copilot", "copilot-1.0.102.jsonl", where, session, tools, "sql")


RECORDINGS = {r.source: r for r in (_codex(), _gemini(), _copilot())}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    store, _ = Store.init(root)
    store.close()
    return root


def lines_of(rec: Recording, project: Path, home: Path) -> list[str]:
    path = home / rec.where
    text = (FIXTURES / rec.fixture).read_text(encoding="utf-8")
    text = text.replace("__PROJECT__", str(project)).replace("__TRANSCRIPT_DIR__", str(path.parent))
    return text.replace("__HOME__", str(home)).splitlines(keepends=True)


def place(rec: Recording, project: Path, home: Path, lines: list[str] | None = None) -> Path:
    """The recording where its CLI writes it, in this test's HOME, with what the CLI keeps beside it."""
    path = home / rec.where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines if lines is not None else lines_of(rec, project, home)), encoding="utf-8")
    if rec.source == "gemini":  # Gemini CLI notes the project of each folder of chats
        (path.parent.parent / ".project_root").write_text(str(project), encoding="utf-8")
    if rec.source == "copilot":  # Copilot CLI's todo list, in its session database
        todos = json.loads((FIXTURES / "copilot-1.0.102.todos.json").read_text(encoding="utf-8"))
        with closing(sqlite3.connect(path.parent / "session.db")) as db, db:
            db.execute("DROP TABLE IF EXISTS todos")
            db.execute(todos["schema"])
            db.executemany("INSERT INTO todos (id, title, description, status) VALUES (?, ?, ?, ?)", todos["rows"])
    return path


def capture(project: Path, path: Path, **kwargs: object) -> dict[str, object]:
    with Store.open(project) as store:
        return capture_transcript(store, path, **kwargs).to_dict()  # type: ignore[arg-type]


def anchors(project: Path) -> list[tuple[str, str]]:
    return [a for p in sorted((store_dir(project) / MEMORY_DIR).glob("*.md")) for a in find_anchors(p)]


@pytest.mark.parametrize("source", sorted(RECORDINGS))
def test_the_session_reads_whole(source: str, project: Path, tmp_path: Path) -> None:
    rec = RECORDINGS[source]
    path = place(rec, project, tmp_path / "home")
    assert detect_source(path) == source
    assert transcript_project(path) == str(project)

    info, turns = read_session(path)
    assert (info.source, info.session_id, info.project_root) == (source, rec.session_id, str(project))
    one, two = turns
    # the prompts as typed: the memories our hooks put into them are not the user's words
    assert one.user_text == scenario.PROMPT_1 and two.user_text == scenario.PROMPT_2
    said = (scenario.SAY_SEARCH, scenario.SAY_PLAN, scenario.SAY_WRITE, scenario.SAY_CHECK, scenario.SAY_DONE)
    assert one.assistant_texts == said and two.assistant_texts == (scenario.SAY_MARKED,)
    assert tuple(c.tool for c in one.tool_calls) == rec.tools
    assert [c.tool for c in two.tool_calls] == [rec.todo_tool]
    search, todo, write, check = one.tool_calls
    assert search.status == "completed" and scenario.NOTE in search.output  # the MCP tool's answer
    assert search.input == {"query": scenario.SEARCH}
    assert todo.status == write.status == "completed" and write.exit_code in (None, 0)
    assert check.status == "error" and check.failed and check.exit_code == 3
    assert one.files == ("limiter.py",) and two.files == ()
    assert one.completed and two.completed and one.error is None and two.error is None
    if source != "codex":  # model calls: four with tools and an answer, then one with a tool and an answer (Codex's
        # rollout does not say which items one response gave: its reader counts items)
        assert one.steps == 5 and two.steps == 2
    assert one.started_at <= (one.ended_at or "") <= two.started_at


@pytest.mark.parametrize("source", sorted(RECORDINGS))
def test_todo_list_reaches_extraction(source: str, project: Path, tmp_path: Path) -> None:
    """The open todo is a todo candidate, the done one is not; the user's decision is a decision."""
    path = place(RECORDINGS[source], project, tmp_path / "home")
    info, turns = read_session(path)
    todos = read_todos(path)
    if source == "copilot":  # kept by its sql tool in its session database, as it was after turn 2
        assert [(t.content, t.status) for t in todos] == [
            (scenario.TODO_DONE, "completed"),
            (scenario.TODO_OPEN, "pending"),
        ]
    else:  # in the todo tool's calls, read by extraction
        assert todos == []
    candidates = heuristic_candidates(turns, info, todos)
    todo_texts = [c.text for c in candidates if c.category == "todo"]
    assert any(scenario.TODO_OPEN in t for t in todo_texts), todo_texts
    assert not any(scenario.TODO_DONE in t for t in todo_texts), todo_texts
    decisions = [c.text for c in candidates if c.category == "decision"]
    assert any("Redis instead of Memcached" in t for t in decisions), decisions


@pytest.mark.parametrize("source", sorted(RECORDINGS))
def test_capture_takes_each_finished_turn_once(source: str, project: Path, tmp_path: Path) -> None:
    rec = RECORDINGS[source]
    home = tmp_path / "home"
    lines = lines_of(rec, project, home)
    # the file as it was while turn 2's todo call ran: turn 1 is finished, turn 2 is not
    cut = max(i for i, line in enumerate(lines) if rec.todo_tool in line and scenario.PROMPT_2 not in line)
    path = place(rec, project, home, lines[:cut])
    first = capture(project, path)
    assert first["error"] is None and first["turns_captured"] == 1 and first["turns_pending"] == 1, first
    assert [a[0] for a in anchors(project)] == [rec.session_id]

    place(rec, project, home)  # the rest of the session
    second = capture(project, path)
    assert second["turns_captured"] == 1 and second["turns_pending"] == 0, second
    assert capture(project, path)["turns_captured"] == 0  # nothing new: nothing again
    path.write_text("".join(lines[:cut]), encoding="utf-8")  # rewritten shorter (Gemini CLI does on resume)
    assert capture(project, path, final=True)["turns_captured"] == 0  # read again from the start: all known
    turns = [a[1] for a in anchors(project)]
    assert len(turns) == 2 and len(set(turns)) == 2, anchors(project)


def test_gemini_keeps_a_messages_last_version_and_honours_a_rewind(project: Path, tmp_path: Path) -> None:
    """Gemini CLI writes a model message first without its tool calls, then again with them (one message), and a
    `$rewindTo` line takes back that message and what follows it."""
    rec = RECORDINGS["gemini"]
    lines = lines_of(rec, project, tmp_path / "home")
    records = [json.loads(line) for line in lines]
    ids = [r.get("id") for r in records if r.get("type") == "gemini"]
    assert len(ids) > len(set(ids))  # the recording has messages written twice
    prompt_2 = next(r["id"] for r in records if r.get("type") == "user" and scenario.PROMPT_2 in json.dumps(r))
    rewound = place(rec, project, tmp_path / "home", [*lines, json.dumps({"$rewindTo": prompt_2}) + "\n"])
    _, turns = read_session(rewound)
    assert [t.user_text for t in turns] == [scenario.PROMPT_1]
