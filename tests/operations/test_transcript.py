"""`codememory transcript` and the MCP `memory_transcript` tool: the captured turns behind a memory, an
anchor or a session. OpenCode's own record comes from the real `opencode` binary talking to a scripted
model (run once for the module, `captured`); the daily-log fallback is also tested without OpenCode."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory.capture.daily_log import MEMORY_DIR, find_anchors
from codememory.capture.opencode import capture_opencode, open_initialised_store
from codememory.capture.opencode_db import OpenCodeDB
from codememory.core.project import store_dir
from codememory.service.project_store import Store
from conftest import Invoke
from support.capture import capture_by_hand
from support.mcp import call, call_error, session_with
from support.opencode import OpenCodeHome, OpenCodeMissing, make_git_project, opencode_bin
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec

SECRET_KEY = "sk-proj-" + "Zq4rT6yU8iO0pA2sD4fG6hJ8kL0zX2cV4bN6mQ8w"  # split: not a real key for scanners
PRIVATE = "my-private-transcript-note"
MARKER = "transcript-marker-42"
DB_ENV = "CODEMEMORY_CAPTURE_OPENCODE_DB"  # the [capture] opencode_db setting, as an env override


@dataclass
class Captured:
    root: Path
    opencode_db: Path
    session: str
    turn_ids: list[str]  # of `session`, in order
    memory_id: str  # a memory whose source is turn 1 of `session`
    anchors: list[str]  # the daily log's anchor comments, in file order

    def env(self, db: Path | None = None) -> dict[str, str | None]:
        return {DB_ENV: str(db or self.opencode_db)}


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    """One OpenCode session of two turns (the second runs a bash command), captured into a store."""
    try:
        opencode_bin()
    except OpenCodeMissing as exc:
        pytest.fail(str(exc))
    base = tmp_path_factory.mktemp("transcript")
    root = make_git_project(base / "proj")
    Store.init(root)[0].close()
    replies = [
        Reply("Hello! Noted."),
        Reply(tool_calls=[ToolCallSpec("bash", {"command": f"echo {MARKER}", "description": "echo"})]),
        Reply("Ran it."),
    ]
    with ScriptedLLM(Script(replies)) as llm:
        oc = OpenCodeHome(base / "home", llm.base_url)
        session = oc.run(root, f"remember {SECRET_KEY} and <private>{PRIVATE}</private> then say hi").session_id
        assert session
        oc.run(root, "now run the echo command", session=session)
    with OpenCodeDB(oc.db_path) as reader:
        report = capture_opencode(reader, open_initialised_store)
        turn_ids = [t.turn_id for t in reader.turns(session)]
    assert not report.errors and report.turns_captured == 2, report.to_dict()
    with Store.open(root) as store:
        memory_id = store.add("Greet the user with hi", source=f"opencode session:{session} turn:1").memory.id
    logs = sorted((store_dir(root) / MEMORY_DIR).glob("*.md"))
    anchors = [f"<!-- session:{s} turn:{t} -->" for path in logs for s, t in find_anchors(path)]
    yield Captured(root, oc.db_path, session, turn_ids, memory_id, anchors)


def transcript_json(invoke: Invoke, captured: Captured, *args: Any, db: Path | None = None) -> dict[str, Any]:
    result = invoke("--project", captured.root, "transcript", *args, "--json", env=captured.env(db))
    assert result.exit_code == 0, result.output + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def no_secrets(data: Any) -> None:
    text = json.dumps(data)
    assert SECRET_KEY not in text and PRIVATE not in text


# ------------------------------------------------------------------------ from OpenCode's database
@pytest.mark.slow
def test_a_memory_leads_to_the_turn_it_came_from(invoke: Invoke, captured: Captured) -> None:
    data = transcript_json(invoke, captured, captured.memory_id)
    assert set(data) == {"reference", "kind", "memory_id", "session_id", "turns", "turns_total", "truncated"}
    assert (data["kind"], data["memory_id"], data["session_id"]) == ("memory", captured.memory_id, captured.session)
    assert (data["turns_total"], data["truncated"]) == (1, False)
    [turn] = data["turns"]
    assert set(turn) == {
        "source",
        "session_id",
        "turn_id",
        "seq",
        "started_at",
        "ended_at",
        "log_path",
        "origin",
        "fallback_reason",
        "transcript",
    }
    assert (turn["turn_id"], turn["seq"], turn["origin"], turn["fallback_reason"]) == (
        captured.turn_ids[0],
        1,
        "opencode",
        None,
    )
    assert turn["log_path"].startswith(".codememory/memory/") and (captured.root / turn["log_path"]).is_file()
    assert "## User" in turn["transcript"] and "then say hi" in turn["transcript"]
    assert "Hello! Noted." in turn["transcript"]
    no_secrets(data)

    text = invoke("--project", captured.root, "transcript", captured.memory_id, env=captured.env())
    assert text.exit_code == 0 and "Hello! Noted." in text.stdout and SECRET_KEY not in text.stdout


@pytest.mark.slow
def test_an_anchor_and_a_session_id_resolve_to_their_turns(invoke: Invoke, captured: Captured) -> None:
    assert len(captured.anchors) == 2
    second = transcript_json(invoke, captured, captured.anchors[1])
    [turn] = second["turns"]
    assert (second["kind"], turn["seq"], turn["origin"]) == ("anchor", 2, "opencode")
    assert "[Tool: bash] completed" in turn["transcript"] and MARKER in turn["transcript"]
    assert turn["transcript"].index("[Tool: bash]") < turn["transcript"].index("Ran it.")

    whole = transcript_json(invoke, captured, captured.session)
    assert whole["kind"] == "session" and [t["seq"] for t in whole["turns"]] == [1, 2]
    assert [t["turn_id"] for t in whole["turns"]] == captured.turn_ids
    no_secrets(whole)
    by_number = transcript_json(invoke, captured, captured.session, "--turn", "2")
    by_id = transcript_json(invoke, captured, captured.session, "--turn", captured.turn_ids[1])
    assert by_number["turns"] == by_id["turns"] == second["turns"]
    first_only = transcript_json(invoke, captured, captured.session, "--max-turns", "1")
    assert [t["seq"] for t in first_only["turns"]] == [1]
    assert (first_only["turns_total"], first_only["truncated"]) == (2, True)


@pytest.mark.slow
def test_without_opencodes_record_the_daily_log_entry_is_returned(
    invoke: Invoke, captured: Captured, tmp_path: Path
) -> None:
    missing = transcript_json(invoke, captured, captured.memory_id, db=tmp_path / "nowhere" / "opencode.db")
    [turn] = missing["turns"]
    assert turn["origin"] == "daily_log" and "missing" in turn["fallback_reason"]
    assert turn["transcript"].startswith("### ") and captured.anchors[0] in turn["transcript"]
    assert "- User: " in turn["transcript"] and "- OpenCode: Hello! Noted." in turn["transcript"]
    assert "## Session" not in turn["transcript"] and captured.anchors[1] not in turn["transcript"]
    no_secrets(missing)

    # OpenCode's database is there but the session was deleted from it
    pruned = tmp_path / "pruned.db"
    source = sqlite3.connect(f"file:{captured.opencode_db}?mode=ro", uri=True)
    target = sqlite3.connect(pruned)
    source.backup(target)
    source.close()
    with target:
        for table in ("part", "message", "session"):
            column = "id" if table == "session" else "session_id"
            target.execute(f"DELETE FROM {table} WHERE {column} = ?", (captured.session,))
    target.close()
    gone = transcript_json(invoke, captured, captured.anchors[1], db=pruned)
    [turn] = gone["turns"]
    assert turn["origin"] == "daily_log" and "no longer in OpenCode's database" in turn["fallback_reason"]
    assert f"[Tool: bash `echo {MARKER}`] completed" in turn["transcript"]

    text = invoke("--project", captured.root, "transcript", captured.anchors[1], env=captured.env(pruned))
    assert text.exit_code == 0 and "(from daily log: " in text.stdout


@pytest.mark.slow
def test_the_mcp_tool_returns_the_same_transcript(console_script: Path, captured: Captured) -> None:
    env = {DB_ENV: str(captured.opencode_db), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}

    async def body(session: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        return {
            "schema": tools["memory_transcript"].inputSchema,
            "memory": await call(session, "memory_transcript", {"reference": captured.memory_id}),
            "turn": await call(session, "memory_transcript", {"reference": captured.session, "turn": 2}),
            "turn_text": await call(session, "memory_transcript", {"reference": captured.session, "turn": "2"}),
            "unknown": await call_error(session, "memory_transcript", {"reference": "ses_nope"}),
            "extra": await call_error(session, "memory_transcript", {"reference": captured.session, "seq": 2}),
        }

    out = session_with(console_script, ["--project", captured.root, "mcp"], body, env=env)
    assert set(out["schema"]["properties"]) == {"reference"}  # turn and max_turns: accepted, not listed
    assert out["schema"]["required"] == ["reference"]
    [turn] = out["memory"]["turns"]
    assert turn["origin"] == "opencode" and "Hello! Noted." in turn["transcript"]
    no_secrets(out["memory"])
    assert out["turn"] == out["turn_text"] and [t["seq"] for t in out["turn"]["turns"]] == [2]
    assert out["unknown"] == "no captured turn for session ses_nope in this project"
    assert "unknown argument 'seq'" in out["extra"]


# ------------------------------------------------------------------- without OpenCode at all
def test_other_sources_fall_back_to_the_daily_log_then_to_the_summary(cm: Invoke, project: Path) -> None:
    turns = capture_by_hand(project, "codex", "codex-abc", ["fix the flaky login test", "now the signup one"])
    stored = json.loads(cm("store", "Login test was flaky", "--source", turns[1].memory_source, "--json").stdout)
    memory_id = stored["memory"]["id"]
    # an edited daily log may hold anything: what comes back is scrubbed anyway
    [log] = (project / ".codememory" / MEMORY_DIR).glob("*.md")
    log.write_text(log.read_text().replace("- User: now the signup one", f"- User: now the signup one {SECRET_KEY}"))

    result = cm("transcript", memory_id, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    [turn] = data["turns"]
    assert (turn["source"], turn["seq"], turn["origin"]) == ("codex", 2, "daily_log")
    assert turn["fallback_reason"] == "codememory cannot read codex transcripts"
    assert turn["transcript"].splitlines()[1] == turns[1].anchor
    assert "- User: now the signup one" in turn["transcript"] and "- Codex: answer 2" in turn["transcript"]
    assert "fix the flaky" not in turn["transcript"]  # only this turn's entry
    no_secrets(data)

    log.unlink()
    gone = json.loads(cm("transcript", "codex-abc", "--json").stdout)
    assert [t["origin"] for t in gone["turns"]] == ["summary", "summary"]
    assert gone["turns"][0]["transcript"].startswith("- User: fix the flaky login test")
    assert gone["turns"][0]["fallback_reason"].endswith("its daily-log entry is gone too")


USER_MISTAKES = [
    (["mem_00000000"], 1, "no memory with id mem_00000000"),
    (["ses_nope"], 1, "no captured turn for session ses_nope in this project"),
    (["mem_nope"], 2, "not a memory id (expected mem_ and 8 hex digits): mem_nope"),  # as show and forget say
    (["ses_nope", "--turn", "3"], 1, "no captured turn for session ses_nope turn 3"),
    (["two words"], 2, "not a memory id (mem_ and 8 hex digits), a daily-log anchor"),
    (["ses_abc", "--turn", "0"], 2, "turn numbers start at 1"),
    (["<!-- session:s turn:t -->", "--turn", "2"], 2, "--turn / turn goes with a session id"),
    (["x" * 600], 2, "reference is 600 characters"),
]


@pytest.mark.parametrize(("args", "code", "message"), USER_MISTAKES)
def test_user_mistakes_are_one_line_errors(cm: Invoke, args: list[str], code: int, message: str) -> None:
    result = cm("transcript", *args)
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("codememory: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_memory_from_no_session_is_a_clear_error(cm: Invoke) -> None:
    memory_id = cm("store", "Use ruff", "-q").stdout.strip()
    result = cm("transcript", memory_id)
    assert result.exit_code == 2
    assert result.stderr == (
        f"codememory: error: memory {memory_id} does not come from a captured session turn (its source is none)\n"
    )
    assert cm("transcript", memory_id, "--turn", "1").stderr.startswith("codememory: error: --turn / turn goes")


def test_help_explains_the_references(invoke: Invoke) -> None:
    result = invoke("transcript", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    for words in ("memory id", "anchor", "session id", "--turn", "--json", "daily"):
        assert words in text
