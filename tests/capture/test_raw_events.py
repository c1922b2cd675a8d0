"""Live capture: raw events streamed to the daemon (`POST /api/raw-events`, preflight `GET /api/raw-events/status`)
are queued durably in the project's store and turned into captured turns by the daemon's flush worker, through
the same pipeline as the OpenCode database poller. Each event arrives once: a replayed batch is a no-op, a batch
accepted just before the daemon is killed (-9) is processed once after its restart, and a turn that both the
stream and the poller see is written to the daily log and `captured_turns` once.

Real daemons (subprocesses with their own HOME and XDG folders), real stores, the real `opencode` binary with the
plugin `codememory init` installs, and a scripted model. No mocks."""

from __future__ import annotations

import fcntl
import json
import os
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from codememory.capture.daily_log import find_anchors
from codememory.capture.opencode_db import OpenCodeDB
from codememory.capture.raw_events import build_turns, flush_project
from codememory.core.dates import to_iso
from codememory.core.project import db_path, store_dir
from codememory.store.capture import CaptureTables
from codememory.store.raw_events import NewRawEvent, RawEventTables
from support.daemon import Daemon, codememory, isolated_env, make_project, spawn, wait_for
from support.opencode import OpenCodeHome, OpenCodeMissing, make_git_project, opencode_bin
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, message_text

T0 = 1_790_000_000_000  # ms since the epoch
SECRET = "hunter2-Vq8x7Zk2Lw9Rt4Np"


def turn_events(session: str, n: int, *, at: int = T0, prompt: str = "fix the failing test") -> list[dict[str, Any]]:
    """One OpenCode turn as the plugin streams it: the prompt, an assistant step that calls bash, its tool call
    (with a secret in its output), and the final answer."""
    user, step, final, tool = f"msg_{n:03d}_user", f"msg_{n:03d}_step", f"msg_{n:03d}_final", f"prt_{n:03d}_tool"
    return [
        {"event_id": user, "session_id": session, "kind": "user_prompt", "at": at, "payload": {"text": prompt}},
        {
            "event_id": step,
            "session_id": session,
            "kind": "assistant_message",
            "at": at + 10,
            "payload": {"parent_id": user, "completed": at + 500, "finish": "tool-calls", "texts": [], "steps": 1},
        },
        {
            "event_id": tool,
            "session_id": session,
            "kind": "tool_call",
            "at": at + 20,
            "payload": {
                "message_id": step,
                "tool": "bash",
                "call_id": f"call_{n}",
                "status": "completed",
                "input": {"command": "npm test"},
                "output": f"1 failing\nDB_PASSWORD={SECRET}\n",
                "title": "npm test",
                "exit": 1,  # the plugin sends bash's metadata.exit: the call failed
            },
        },
        {
            "event_id": final,
            "session_id": session,
            "kind": "assistant_message",
            "at": at + 600,
            "payload": {
                "parent_id": user,
                "completed": at + 900,
                "finish": "stop",
                "texts": ["The token check compared seconds with milliseconds; fixed."],
                "steps": 1,
            },
        },
    ]


def batch(project: Path, events: list[dict[str, Any]], batch_id: str = "b1") -> dict[str, Any]:
    return {"project_root": str(project), "source": "opencode", "batch_id": batch_id, "events": events}


def rows(project: Path) -> list[tuple[Any, ...]]:
    """raw_events straight from the store file."""
    conn = sqlite3.connect(f"file:{db_path(project)}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT event_id, kind, payload, processed_at, error FROM raw_events ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def captured(project: Path) -> list[tuple[str, str, int]]:
    with Store.open(project) as store:
        return [(t.session_id, t.turn_id, t.seq) for t in CaptureTables(store.db).turns("opencode")]


def anchors(project: Path) -> list[tuple[str, str]]:
    return [a for log in sorted((store_dir(project) / "memory").glob("*.md")) for a in find_anchors(log)]


def all_processed(project: Path) -> bool:
    found = rows(project)
    return bool(found) and all(r[3] is not None for r in found)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Daemon, Path]]:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project)
    d = spawn(env)
    yield d, project.resolve()
    d.terminate()


# --------------------------------------------------------------------------------------------- daemon
@pytest.mark.slow
def test_endpoints_need_the_token(daemon: tuple[Daemon, Path]) -> None:
    d, project = daemon
    anonymous = d.client(token="")
    assert anonymous.request("GET", "/api/raw-events/status").status == 401
    assert anonymous.request("POST", "/api/raw-events", batch(project, turn_events("ses_a", 1))).status == 401
    assert d.client(token="wrong").request("GET", "/api/raw-events/status").status == 401
    assert rows(project) == []
    status = d.client().request("GET", "/api/raw-events/status").data
    assert status["accepting"] is True and status["max_body_bytes"] == 20_000 and status["max_events"] >= 100
    assert "counts" not in status or status["counts"] is None
    # with a project: its queue; a folder without a store is a 404, bad input a 4xx with a JSON error
    scoped = d.client().request("GET", f"/api/raw-events/status?project_root={project}").data
    assert scoped["counts"] == {"total": 0, "pending": 0, "processed": 0, "failed": 0}
    assert d.client().request("GET", "/api/raw-events/status?project_root=/").status == 403  # not registered
    bad = d.client().request("POST", "/api/raw-events", batch(project, [{"event_id": "x", "kind": "nope"}]))
    assert bad.status == 422 and "error" in bad.data


@pytest.mark.slow
def test_a_batch_is_accepted_durably_processed_once_and_a_replay_is_a_no_op(daemon: tuple[Daemon, Path]) -> None:
    d, project = daemon
    client = d.client()
    events = turn_events("ses_live", 1)
    first = client.request("POST", "/api/raw-events", batch(project, events))
    assert first.status == 200, first.data
    assert first.data["received"] == 4 and first.data["accepted"] == 4 and first.data["duplicates"] == 0
    assert first.data["project_root"] == str(project)
    # durable before the answer: the rows are in the store file, scrubbed
    stored = rows(project)
    assert [r[0] for r in stored] == [e["event_id"] for e in events]
    assert SECRET not in json.dumps(stored) and "REDACTED" in stored[2][2]

    # the flush worker turns them into one captured turn: the daily log entry and captured_turns
    wait_for("the turn to be captured", lambda: all_processed(project), timeout=30)
    assert captured(project) == [("ses_live", "msg_001_user", 1)]
    assert anchors(project) == [("ses_live", "msg_001_user")]
    log = next((store_dir(project) / "memory").glob("*.md")).read_text()
    assert "- User: fix the failing test" in log and "[Tool: bash `npm test`] failed (exit 1)" in log
    assert "seconds with milliseconds" in log and SECRET not in log

    # the same batch again (a plugin retrying after a timeout): nothing new anywhere
    again = client.request("POST", "/api/raw-events", batch(project, events, batch_id="b1-retry"))
    assert again.status == 200 and again.data["accepted"] == 0 and again.data["duplicates"] == 4
    # and a batch overlapping it with one new turn: only the new events count
    second = turn_events("ses_live", 2, at=T0 + 60_000, prompt="now run the linter")
    mixed = client.request("POST", "/api/raw-events", batch(project, events[1:] + second, batch_id="b2"))
    assert mixed.data["accepted"] == 4 and mixed.data["duplicates"] == 3
    wait_for("the second turn", lambda: all_processed(project) and len(captured(project)) == 2, timeout=30)
    assert captured(project) == [("ses_live", "msg_001_user", 1), ("ses_live", "msg_002_user", 2)]
    assert anchors(project) == [("ses_live", "msg_001_user"), ("ses_live", "msg_002_user")]
    assert len(rows(project)) == 8
    status = client.request("GET", f"/api/raw-events/status?project_root={project}").data
    assert status["counts"] == {"total": 8, "pending": 0, "processed": 8, "failed": 0}


@pytest.mark.slow
def test_an_incomplete_turn_waits_for_its_end(daemon: tuple[Daemon, Path]) -> None:
    d, project = daemon
    events = turn_events("ses_wait", 1)
    client = d.client()
    assert client.request("POST", "/api/raw-events", batch(project, events[:3])).data["accepted"] == 3
    # a step that ended with tool-calls: the turn goes on, nothing is captured; the events stay queued
    with Store.open(project) as store:  # a flush of its own (the capture lock orders it with the daemon's)
        waiting = flush_project(store)
    assert waiting.turns_captured == 0 and waiting.events_waiting == 3
    status = client.request("GET", f"/api/raw-events/status?project_root={project}").data
    assert status["counts"]["pending"] == 3
    assert captured(project) == [] and all(r[3] is None for r in rows(project))
    assert client.request("POST", "/api/raw-events", batch(project, events[3:], "b2")).data["accepted"] == 1
    wait_for("the turn", lambda: all_processed(project), timeout=30)
    assert captured(project) == [("ses_wait", "msg_001_user", 1)]


@pytest.mark.slow
def test_kill_9_after_accept_then_restart_processes_the_batch_once(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project)
    project = project.resolve()
    d = spawn(env)
    events = turn_events("ses_crash", 1)
    # Hold the project's capture lock, as a long capture pass would: the daemon accepts the batch (durably) but its
    # flush worker cannot process it before the daemon is killed.
    fd = os.open(store_dir(project) / "capture.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        resp = d.client().request("POST", "/api/raw-events", batch(project, events))
        assert resp.status == 200 and resp.data["accepted"] == 4
        d.proc.kill()  # SIGKILL: no cleanup of any kind
        d.proc.wait(timeout=10)
    finally:
        os.close(fd)
    assert [r[3] for r in rows(project)] == [None] * 4
    assert captured(project) == [] and anchors(project) == []

    # A new daemon finds the queued batch by itself (no request needed) and processes it once.
    d2 = spawn(env)
    try:
        wait_for("the queued batch to be processed", lambda: all_processed(project), timeout=60)
        assert captured(project) == [("ses_crash", "msg_001_user", 1)]
        assert anchors(project) == [("ses_crash", "msg_001_user")]
        # the plugin, not knowing whether its batch made it, sends it again: a no-op
        again = d2.client().request("POST", "/api/raw-events", batch(project, events, "b1-again"))
        assert again.data["accepted"] == 0 and again.data["duplicates"] == 4
        d2.client().request("GET", f"/api/raw-events/status?project_root={project}")
        assert captured(project) == [("ses_crash", "msg_001_user", 1)]
        assert anchors(project) == [("ses_crash", "msg_001_user")]
    finally:
        d2.terminate()


# ------------------------------------------------------------------------------------------ in-process
def test_a_turn_the_poller_captured_first_is_not_written_again(tmp_path: Path) -> None:
    """The other order: the turn is in captured_turns (and the log) already when its raw events arrive."""
    project = tmp_path / "p"
    project.mkdir()
    store, _ = Store.init(project)
    with store:
        raw = RawEventTables(store.db)
        raw.accept([new_event(e) for e in turn_events("ses_both", 1)], batch_id="b", received_at=to_iso_ms(T0 + 1000))
        first = flush_project(store)
        assert first.turns_captured == 1 and first.events_processed == 4
        # as if the poller had been first: forget the raw rows' processing, keep the captured turn and its log
        store.db.conn.execute("UPDATE raw_events SET processed_at = NULL")
        second = flush_project(store)
        assert second.turns_captured == 0 and second.turns_already == 1 and second.events_processed == 4
        assert [t.turn_id for t in CaptureTables(store.db).turns("opencode")] == ["msg_001_user"]
    assert anchors(project) == [("ses_both", "msg_001_user")]


def test_seq_counts_the_turns_either_path_knows(tmp_path: Path) -> None:
    """Turn numbers: a prompt compacted away is not a turn; turns captured by the poller only count too."""
    project = tmp_path / "p"
    project.mkdir()
    store, _ = Store.init(project)
    with store:
        raw = RawEventTables(store.db)
        events = turn_events("ses_s", 2, at=T0 + 60_000) + turn_events("ses_s", 4, at=T0 + 180_000)
        compaction = [
            *turn_events("ses_s", 3, at=T0 + 120_000)[:1],
            {
                "event_id": "msg_003_sum",
                "session_id": "ses_s",
                "kind": "assistant_message",
                "at": T0 + 120_010,
                "payload": {"parent_id": "msg_003_user", "completed": T0 + 120_100, "finish": "stop", "summary": True},
            },
        ]
        raw.accept([new_event(e) for e in events + compaction], batch_id="b", received_at=to_iso_ms(T0 + 200_000))
        stored = raw.session_events("opencode", "ses_s")
        # the first turn reached only the poller
        turns, orphans = build_turns(stored, {"msg_001_user": to_iso_ms(T0)})
        assert orphans == []
        assert [(t.turn.turn_id, t.turn.seq, t.compaction) for t in turns if not t.compaction] == [
            ("msg_002_user", 2, False),
            ("msg_004_user", 3, False),
        ]
        assert all(t.turn.completed for t in turns)
        # a turn with no final answer yet is incomplete, unless a later prompt superseded it
        partial, _ = build_turns([e for e in stored if e.event_id != "msg_004_final"], {})
        last = [t for t in partial if not t.compaction][-1].turn
        assert last.turn_id == "msg_004_user" and not last.completed


def to_iso_ms(ms: int) -> str:
    return to_iso(datetime.fromtimestamp(ms / 1000, UTC))


def new_event(e: dict[str, Any]) -> NewRawEvent:
    return NewRawEvent("opencode", e["session_id"], e["event_id"], e["kind"], to_iso_ms(e["at"]), e["payload"])


# -------------------------------------------------------------------------------- end to end (opencode)
@pytest.mark.slow
def test_a_real_opencode_session_arrives_as_raw_events_and_is_captured_once(tmp_path: Path) -> None:
    try:
        opencode_bin()
    except OpenCodeMissing as exc:
        pytest.fail(str(exc))
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo webhook-retries"})]),
            Reply(tool_calls=[ToolCallSpec("read", {"filePath": "README.md"})]),
            Reply("The webhook worker now retries partner calls."),
        ]
    )
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        trace = tmp_path / "trace.jsonl"
        oc_env = {**oc.env(), "CODEMEMORY_PLUGIN_TRACE": str(trace)}
        env = isolated_env(tmp_path / "daemon", XDG_STATE_HOME=str(oc.home / ".local" / "state"))
        project = make_git_project(tmp_path / "project")
        codememory(env, "--project", project, "init", "--assistants", "opencode", "--json")
        d = spawn(env)  # its HOME is not OpenCode's: its database poller cannot see this session
        try:
            first = run_opencode(oc, oc_env, project, "Add retries to the webhook worker")
            session = first["session"]
            wait_for("the first turn from the raw stream", lambda: len(captured(project)) == 1, timeout=60)
            # the next turn reads the first one back through the plugin's memory_transcript tool
            script.replies[:] = [
                Reply(tool_calls=[ToolCallSpec("memory_transcript", {"reference": session})]),
                Reply("Yes, five attempts at most."),
            ]
            start = len(llm.requests)
            run_opencode(oc, oc_env, project, "and a cap on the attempts?", session=session)
            tool_results = [m for r in llm.requests[start:] for m in r["messages"] if m["role"] == "tool"]
            wait_for("both turns from the raw stream", lambda: len(captured(project)) == 2, timeout=60)
            wait_for("every raw event processed", lambda: all_processed(project), timeout=30)
        finally:
            d.terminate()

    # what arrived: the prompts, the answers and the tool calls with their results, each once
    stored = rows(project)
    ids = [r[0] for r in stored]
    assert len(ids) == len(set(ids))
    kinds = [r[1] for r in stored]
    assert kinds.count("user_prompt") == 2 and kinds.count("tool_call") == 3 and kinds.count("session") == 1
    tools = [json.loads(r[2]) for r in stored if r[1] == "tool_call"]
    assert {t["tool"] for t in tools} == {"bash", "read", "memory_transcript"}
    assert [t["exit"] for t in tools if t["tool"] == "bash"] == [0]  # OpenCode's metadata.exit, streamed
    assert any("webhook-retries" in t["output"] for t in tools)
    assert all("developer_context" not in r[2] for r in stored)
    sent = [json.loads(line) for line in trace.read_text().splitlines() if '"hook":"raw"' in line]
    assert sent and all("error" not in e for e in sent), sent

    # memory_transcript (the plugin's tool, the daemon's /memory/transcript) found the live-captured first turn
    transcript = json.loads(message_text(tool_results[-1]))
    assert transcript["kind"] == "session" and transcript["session_id"] == session
    assert transcript["turns"][0]["seq"] == 1 and "Add retries" in transcript["turns"][0]["transcript"]

    # the same turns as the poller builds them (ids and numbers), captured once
    reader = OpenCodeDB(oc.db_path)
    polled = [(t.session_id, t.turn_id, t.seq) for t in reader.turns(session)]
    assert len(polled) == 2
    assert captured(project) == polled
    assert anchors(project) == [(s, t) for s, t, _ in polled]
    log_before = "".join(p.read_text() for p in sorted((store_dir(project) / "memory").glob("*.md")))
    assert "Add retries to the webhook worker" in log_before and "[Tool: bash `echo webhook-retries`]" in log_before
    assert "[Tool: memory_transcript" in log_before

    # now the database poller runs over the same session: it finds both turns captured, writes nothing
    poll_env = {**env, "OPENCODE_DB": str(oc.db_path)}
    report = json.loads(codememory(poll_env, "--project", project, "capture", "--no-extract", "--json"))
    assert report["turns_captured"] == 0, report
    assert captured(project) == polled
    assert anchors(project) == [(s, t) for s, t, _ in polled]
    log_after = "".join(p.read_text() for p in sorted((store_dir(project) / "memory").glob("*.md")))
    assert log_after == log_before


def run_opencode(
    oc: OpenCodeHome, env: dict[str, str], project: Path, message: str, session: str | None = None
) -> dict[str, Any]:
    proc = subprocess.run(
        oc.args(message, session=session),
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = re.search(r"\bses_[A-Za-z0-9]+\b", proc.stdout)
    assert found, proc.stdout[-2000:]
    return {"session": found.group(0)}


def test_processed_events_are_pruned_and_a_later_replay_still_captures_nothing_twice(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    store, _ = Store.init(project)
    with store:
        raw = RawEventTables(store.db)
        done = [new_event(e) for e in turn_events("ses_old", 1)]
        raw.accept(done, batch_id="b1", received_at=to_iso_ms(T0 + 1000))
        assert flush_project(store).turns_captured == 1
        prompt = {**turn_events("ses_open", 7)[0], "event_id": "msg_open_user"}  # not answered yet: pending
        raw.accept([new_event(prompt)], batch_id="b2", received_at=to_iso_ms(T0 + 2000))
        assert raw.prune("2999-01-01T00:00:00.000Z") == 4  # ses_old's four; ses_open has a pending event
        assert {e.session_id for e in raw.session_events("opencode", "ses_open")} == {"ses_open"}
        assert raw.session_events("opencode", "ses_old") == []
        again = raw.accept(done, batch_id="b1", received_at=to_iso_ms(T0 + 3000))  # replayed after the prune
        assert again.accepted == 4
        replay = flush_project(store)  # (also takes ses_open's prompt: its session is long idle)
        assert replay.turns_already == 1
        assert [t.turn_id for t in CaptureTables(store.db).turns("opencode", "ses_old")] == ["msg_001_user"]
    assert anchors(project).count(("ses_old", "msg_001_user")) == 1
