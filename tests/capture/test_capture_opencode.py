"""Capture from OpenCode's database, against the real `opencode` binary talking to a scripted model.

The module's OpenCode runs (a few seconds each) are shared: `world` makes three git projects and runs
OpenCode in them once; each test captures into stores of its own (`stores`), so tests do not depend on
each other's passes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from codememory.capture.daily_log import MEMORY_DIR, DailyLog, find_anchors
from codememory.capture.opencode import (
    UNFINISHED,
    CaptureReport,
    capture_opencode,
    open_initialised_store,
    project_lock,
)
from codememory.capture.opencode_db import OpenCodeDB, discover_db
from codememory.capture.turns import SessionInfo, ToolCall, Turn
from codememory.core.dates import now_utc
from codememory.core.project import store_dir
from codememory.errors import OpenCodeDBError
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables
from support.opencode import OpenCodeHome, make_git_project, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request, message_text

pytestmark = pytest.mark.slow  # sessions of the real OpenCode binary (the module's `world`)

SECRET_KEY = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d"  # split: not a real key for scanners
PRIVATE = "my-private-diary-entry"
INJECTED = "INJECTED-MEMORY-MARKER"  # what a <developer_context> block of ours would hold
SYNTHETIC = "SYNTHETIC-FILE-MARKER"  # file content OpenCode inlines as synthetic text parts
GATE = "WAIT-FOR-RELEASE"


class Model:
    """The scripted model: replies in order; a conversation whose prompt holds GATE waits for `release`."""

    def __init__(self, replies: list[Reply]) -> None:
        self.script = Script(replies)
        self.gated = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [message_text(m) for m in body.get("messages", []) if m.get("role") == "user"]
        if not is_title_request(body) and any(GATE in u for u in users):
            self.gated.set()
            self.release.wait(60)
            return Reply("Released answer.")
        return self.script(body)


@dataclass
class World:
    oc: OpenCodeHome
    model: Model
    alpha: Path  # two sessions, one continued, one with tools and a sub-agent
    beta: Path  # one plain session
    gamma: Path  # for the turn-in-progress test
    before: Path  # a copy of OpenCode's database taken before alpha's first session was continued
    plain: str  # alpha: the secrets prompt, continued with a second turn
    tools: str  # alpha: todowrite, bash, write, task (a sub-agent), then an answer
    child: str  # the sub-agent's session
    beta_session: str

    @property
    def db(self) -> Path:
        return self.oc.db_path


def _backup(src: Path, dst: Path) -> None:
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    target = sqlite3.connect(dst)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_opencode()
    base = tmp_path_factory.mktemp("opencode")
    alpha = make_git_project(base / "alpha")
    beta = make_git_project(base / "beta")
    gamma = make_git_project(base / "gamma")
    (alpha / "notes.md").write_text(f"<developer_context>{INJECTED}</developer_context>\n{SYNTHETIC}\n")
    todos = [
        {"content": "write the app", "status": "in_progress", "priority": "high", "id": "1"},
        {"content": "ship it", "status": "pending", "priority": "low", "id": "2"},
    ]
    model = Model(
        [
            Reply("Hello! Noted."),
            Reply(tool_calls=[ToolCallSpec("todowrite", {"todos": todos})]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo hi > out.txt && ls", "description": "list"})]),
            Reply(tool_calls=[ToolCallSpec("write", {"filePath": str(alpha / "src/app.py"), "content": "print(1)\n"})]),
            Reply(
                tool_calls=[
                    ToolCallSpec(
                        "task", {"description": "explore", "prompt": "look around the repo", "subagent_type": "general"}
                    )
                ]
            ),
            Reply("The sub-agent found a README."),
            Reply("Done: the app is written."),
            Reply("Beta says hi."),
            Reply("Continued: one more thing handled."),
        ]
    )
    with ScriptedLLM(model) as llm:
        oc = OpenCodeHome(base / "home", llm.base_url)
        plain = oc.run(alpha, f"remember {SECRET_KEY} and <private>{PRIVATE}</private> then say hi").session_id
        tools = oc.run(alpha, "run the tests and write the app", files=("notes.md",)).session_id
        beta_session = oc.run(beta, "hello from beta").session_id
        before = base / "before.db"
        _backup(oc.db_path, before)
        assert oc.run(alpha, "and one more thing", session=plain).session_id == plain
        assert plain and tools and beta_session
        with OpenCodeDB(oc.db_path) as reader:
            child = next(s.session_id for s in reader.sessions() if s.parent_id == tools)
        try:
            yield World(oc, model, alpha, beta, gamma, before, plain, tools, child, beta_session)
        finally:
            model.release.set()


class Stores:
    """Stores of this test for the module's projects: `open` maps a worktree to a store under tmp_path
    (None for projects not asked for), so `capture_opencode` writes nowhere else."""

    def __init__(self, base: Path, world: World) -> None:
        self.base = base
        self.names = {world.alpha: "alpha", world.beta: "beta", world.gamma: "gamma"}
        self.enabled = {"alpha"}
        self._opened: list[Store] = []

    def root(self, name: str) -> Path:
        folder = self.base / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def open(self, root: Path) -> Store | None:
        name = self.names.get(Path(root).resolve())
        if name not in self.enabled:
            return None
        store, _ = Store.init(self.root(name))
        return store

    def log_files(self, name: str = "alpha") -> list[Path]:
        return sorted((store_dir(self.root(name)) / MEMORY_DIR).glob("*.md"))

    def log(self, name: str = "alpha") -> str:
        return "".join(p.read_text() for p in self.log_files(name))

    def anchors(self, name: str = "alpha") -> list[tuple[str, str]]:
        return [a for p in self.log_files(name) for a in find_anchors(p)]

    def tables(self, name: str = "alpha") -> CaptureTables:
        store, _ = Store.init(self.root(name))
        self._opened.append(store)
        return CaptureTables(store.db)

    def close(self) -> None:
        for store in self._opened:
            store.close()


@pytest.fixture
def stores(tmp_path: Path, world: World) -> Iterator[Stores]:
    s = Stores(tmp_path / "stores", world)
    yield s
    s.close()


def capture(db: Path, stores: Stores, **kwargs: Any) -> CaptureReport:
    with OpenCodeDB(db) as reader:
        report = capture_opencode(reader, stores.open, **kwargs)
    json.dumps(report.to_dict())  # the report is JSON as it is
    return report


def project(report: CaptureReport, stores: Stores, name: str = "alpha") -> dict[str, Any]:
    roots = {str(root): n for root, n in stores.names.items()}
    found = [p.to_dict() for p in report.projects if roots.get(p.root) == name]
    assert len(found) == 1, report.to_dict()
    return found[0]


def expected_anchors(world: World) -> set[tuple[str, str]]:
    with OpenCodeDB(world.db) as reader:
        return {(t.session_id, t.turn_id) for sid in (world.plain, world.tools, world.child) for t in reader.turns(sid)}


# --------------------------------------------------------------------------- the reader
def test_reader_reads_sessions_turns_tools_and_todos(world: World) -> None:
    with OpenCodeDB(world.db) as reader:
        assert reader.status().ok
        sessions = {s.session_id: s for s in reader.sessions()}
        assert {world.plain, world.tools, world.child, world.beta_session} <= set(sessions)
        assert sessions[world.plain].project_root == str(world.alpha)
        assert sessions[world.beta_session].project_root == str(world.beta)
        assert sessions[world.child].parent_id == world.tools
        assert sessions[world.child].project_root == str(world.alpha)
        assert sessions[world.plain].message_count == 4  # two turns: user + assistant each
        newest = max(s.updated_at for s in sessions.values())
        assert [s.session_id for s in reader.sessions(since=newest)] == [
            max(sessions.values(), key=lambda s: s.updated_at).session_id
        ]
        assert reader.sessions(since=now_utc() + timedelta(days=1)) == []

        first, second = reader.turns(world.plain)
        assert (first.seq, second.seq) == (1, 2)
        assert first.completed and second.completed
        assert SECRET_KEY in first.user_text  # the reader returns what OpenCode stored; writers scrub
        assert first.assistant_texts == ("Hello! Noted.",)
        assert second.assistant_texts == ("Continued: one more thing handled.",)
        assert first.started_at < first.ended_at <= second.started_at  # type: ignore[operator]

        (turn,) = reader.turns(world.tools)
        assert turn.completed and turn.error is None
        assert [c.tool for c in turn.tool_calls] == ["todowrite", "bash", "write", "task"]
        assert all(c.status == "completed" for c in turn.tool_calls)
        bash = turn.tool_calls[1]
        assert bash.input["command"] == "echo hi > out.txt && ls" and "out.txt" in bash.output
        assert set(turn.files) == {"out.txt", "src/app.py"}  # patch parts and the write tool, project-relative
        assert turn.assistant_texts == ("Done: the app is written.",)
        assert turn.steps == 5
        assert "run the tests" in turn.user_text
        assert SYNTHETIC not in turn.user_text and INJECTED not in turn.user_text

        (sub,) = reader.turns(world.child)
        assert "look around the repo" in sub.user_text and sub.assistant_texts == ("The sub-agent found a README.",)

        assert [(t.content, t.status, t.priority) for t in reader.todos(world.tools)] == [
            ("write the app", "in_progress", "high"),
            ("ship it", "pending", "low"),
        ]
        assert reader.todos(world.plain) == []

        # excluded turns are left out, the others keep their numbers
        assert [t.seq for t in reader.turns(world.plain, exclude={first.turn_id})] == [2]
        assert reader.turn(world.plain, second.turn_id) == second

        transcript = reader.transcript(world.tools, turn.turn_id)
        assert transcript is not None
        assert "[Tool: bash] completed" in transcript and "out.txt" in transcript
        assert transcript.index("[Tool: todowrite]") < transcript.index("[Tool: bash]") < transcript.index("Done:")
        assert SYNTHETIC not in transcript and INJECTED not in transcript
        secret_transcript = reader.transcript(world.plain, first.turn_id)
        assert (
            secret_transcript is not None and SECRET_KEY not in secret_transcript and PRIVATE not in secret_transcript
        )
        assert reader.transcript(world.plain, "msg_nope") is None
        assert reader.turns("ses_nope") == [] and reader.session("ses_nope") is None


# --------------------------------------------------------------------------- capture passes
def test_pass_logs_every_completed_turn_once_and_a_second_pass_adds_nothing(world: World, stores: Stores) -> None:
    report = capture(world.db, stores)
    alpha = project(report, stores)
    assert not report.errors, report.errors
    assert alpha["turns_captured"] == 4 and alpha["turns_repaired"] == 0 and alpha["turns_pending"] == 0
    assert alpha["sessions_seen"] == 3 and alpha["sessions_read"] == 3
    assert str(world.beta) in report.skipped and [p.root for p in report.projects] == [str(world.alpha)]
    anchors = stores.anchors()
    assert len(anchors) == len(set(anchors)) == 4
    assert set(anchors) == expected_anchors(world)

    log = stores.log()
    assert log.startswith("# 20")
    assert "\n## Session " in log and f"(sub-agent of {world.tools})" in log
    assert "- [Tool: bash `echo hi > out.txt && ls`] completed" in log
    assert "- [Tool: write `src/app.py`] completed" in log
    assert "- [Tool: task `explore`] completed" in log
    assert "- OpenCode: Done: the app is written." in log
    assert '- User: "run the tests and write the app"' in log
    files_line = next(line for line in log.splitlines() if line.startswith("- Files:"))
    assert set(files_line.removeprefix("- Files: ").split(", ")) == {"out.txt", "src/app.py"}

    tables = stores.tables()
    rows = tables.turns("opencode")
    assert len(rows) == 4
    (tools_row,) = [r for r in rows if r.session_id == world.tools]
    assert tools_row.log_path == stores.log_files()[0].relative_to(store_dir(stores.root("alpha"))).as_posix()
    assert tools_row.summary in log and tools_row.seq == 1
    assert tables.last_seq("opencode", world.plain) == 2
    cursor = tables.get_cursor("opencode", world.plain)
    assert cursor is not None and json.loads(cursor.position)["seq"] == 2
    assert tables.counts().to_dict() | {"last_captured_at": None} == {
        "turns": 4,
        "sessions": 3,
        "last_captured_at": None,
        "by_source": {"opencode": 4},
    }
    assert report.newest_turn_at == max(r.ended_at or "" for r in rows)
    assert report.max_lag_seconds is not None and report.max_lag_seconds >= 0

    before = [p.read_bytes() for p in stores.log_files()]
    again = project(capture(world.db, stores), stores)
    assert again["turns_captured"] == 0 and again["sessions_read"] == 0 and again["log_files"] == []
    assert [p.read_bytes() for p in stores.log_files()] == before


def test_new_turns_of_a_continued_session_are_appended(world: World, stores: Stores) -> None:
    first = project(capture(world.before, stores), stores)
    assert first["turns_captured"] == 3
    log_before = stores.log()
    with OpenCodeDB(world.db) as reader:
        _, continued = reader.turns(world.plain)
    assert (world.plain, continued.turn_id) not in stores.anchors()

    second = project(capture(world.db, stores), stores)
    assert second["turns_captured"] == 1 and second["sessions_read"] == 1
    log = stores.log()
    assert log.startswith(log_before)  # appended, nothing rewritten
    assert log[len(log_before) :].count("<!-- session:") == 1
    assert continued.anchor in log[len(log_before) :] and "Continued: one more thing handled." in log
    anchors = stores.anchors()
    assert len(anchors) == len(set(anchors)) == 4


def test_a_crash_between_log_append_and_insert_neither_duplicates_nor_skips(world: World, stores: Stores) -> None:
    # The crashed pass wrote the log entry of the tools turn and died before recording it.
    with OpenCodeDB(world.db) as reader:
        (turn,) = reader.turns(world.tools)
        info = reader.session(world.tools)
    DailyLog(store_dir(stores.root("alpha")) / MEMORY_DIR, root=world.alpha).append(turn, info)
    alpha = project(capture(world.db, stores), stores)
    assert alpha["turns_captured"] == 4 and alpha["turns_repaired"] == 1
    anchors = stores.anchors()
    assert len(anchors) == len(set(anchors)) == 4

    # The same crash later on: the row and the cursor's advance are lost, the log entry stays.
    tables = stores.tables()
    assert tables.forget_turn("opencode", world.plain, tables.turns("opencode", world.plain)[-1].turn_id)
    with tables.db.transaction() as c:
        c.execute("DELETE FROM capture_cursors WHERE key = ?", (world.plain,))
    log = stores.log()
    again = project(capture(world.db, stores), stores)
    assert again["turns_captured"] == 1 and again["turns_repaired"] == 1
    assert stores.log() == log
    assert len(tables.turns("opencode")) == 4


def test_concurrent_passes_are_serialised_by_the_project_lock(world: World, stores: Stores) -> None:
    root = stores.root("alpha")
    Store.init(root)[0].close()
    reports: list[CaptureReport] = []
    with project_lock(root):
        worker = threading.Thread(target=lambda: reports.append(capture(world.db, stores)))
        worker.start()
        worker.join(0.5)
        assert worker.is_alive() and not stores.log_files()  # waiting for the lock we hold
    worker.join(30)
    assert not worker.is_alive() and project(reports[0], stores)["turns_captured"] == 4

    # two passes racing on a fresh store: each turn is logged and recorded exactly once
    stores.base = stores.base.parent / "race"
    Store.init(stores.root("alpha"))[0].close()
    start = threading.Barrier(2)
    results: list[CaptureReport] = []

    def race() -> None:
        start.wait()
        results.append(capture(world.db, stores))

    threads = [threading.Thread(target=race) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(project(r, stores)["turns_captured"] for r in results) == [0, 4]
    anchors = stores.anchors()
    assert len(anchors) == len(set(anchors)) == 4
    assert len(stores.tables().turns("opencode")) == 4


def test_secrets_and_private_spans_never_reach_the_log_or_the_store(world: World, stores: Stores) -> None:
    capture(world.db, stores)
    log = stores.log()
    assert "remember [REDACTED:openai] and" in log
    assert SECRET_KEY not in log and PRIVATE not in log and "sk-proj-" not in log
    folder = store_dir(stores.root("alpha"))
    stores.tables().db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET_KEY.encode() not in data and PRIVATE.encode() not in data, path


def test_synthetic_parts_and_injected_context_are_not_captured(world: World, stores: Stores) -> None:
    conn = sqlite3.connect(f"file:{world.db}?mode=ro", uri=True)
    try:
        synthetic = [
            json.loads(d)
            for (d,) in conn.execute("SELECT data FROM part WHERE session_id = ?", (world.tools,))
            if json.loads(d).get("synthetic")
        ]
    finally:
        conn.close()
    assert any(INJECTED in p["text"] for p in synthetic) and any(SYNTHETIC in p["text"] for p in synthetic)
    capture(world.db, stores)
    log = stores.log()
    assert INJECTED not in log and SYNTHETIC not in log and "developer_context" not in log
    assert "Called the Read tool" not in log


def test_only_initialised_projects_are_captured_unless_auto_init(world: World) -> None:
    roots = (world.alpha, world.beta, world.gamma)
    try:
        with OpenCodeDB(world.db) as reader:
            report = capture_opencode(reader, open_initialised_store)
        assert report.projects == [] and report.turns_captured == 0
        assert "codememory init" in report.skipped[str(world.beta)]
        assert not any(store_dir(r).exists() for r in roots)

        Store.init(world.beta)[0].close()
        with OpenCodeDB(world.db) as reader:
            report = capture_opencode(reader, open_initialised_store)
        assert [(p.root, p.turns_captured, p.initialised) for p in report.projects] == [(str(world.beta), 1, False)]
        assert not store_dir(world.alpha).exists()
        shutil.rmtree(store_dir(world.beta))

        with OpenCodeDB(world.db) as reader:
            report = capture_opencode(reader, open_initialised_store, auto_init=True)
        by_root = {p.root: p for p in report.projects}
        assert by_root[str(world.beta)].initialised and by_root[str(world.beta)].turns_captured == 1
        assert by_root[str(world.alpha)].turns_captured == 4
        (log,) = (store_dir(world.beta) / MEMORY_DIR).glob("*.md")
        assert find_anchors(log)[0][0] == world.beta_session and "Beta says hi." in log.read_text()
    finally:
        for root in roots:
            shutil.rmtree(store_dir(root), ignore_errors=True)


def test_a_turn_is_captured_only_once_the_assistant_has_finished_it(world: World, stores: Stores) -> None:
    stores.enabled = {"gamma"}
    proc = world.oc.start(world.gamma, f"{GATE} then answer")
    try:
        assert world.model.gated.wait(60), "opencode never asked the model"
        deadline = time.monotonic() + 30
        while True:  # the assistant message exists before the model is asked; wait until it is visible
            with OpenCodeDB(world.db) as reader:
                gamma = [s for s in reader.sessions() if s.project_root == str(world.gamma)]
            if gamma and gamma[0].message_count >= 2:
                break
            assert time.monotonic() < deadline, "the in-flight turn never showed up in OpenCode's database"
            time.sleep(0.05)  # poll, not spin: the machine running opencode is shared
        with OpenCodeDB(world.db) as reader:
            (turn,) = reader.turns(gamma[0].session_id)
        assert not turn.completed and turn.ended_at is None

        report = project(capture(world.db, stores), stores, "gamma")
        assert report["turns_captured"] == 0 and report["turns_pending"] == 1
        assert stores.log_files("gamma") == []

        # a turn left running for longer than idle_after is captured anyway, marked as stopped
        later = stores.base
        stores.base = later.parent / "idle"
        idle = project(capture(world.db, stores, now=lambda: now_utc() + timedelta(hours=2)), stores, "gamma")
        assert idle["turns_captured"] == 1 and f"- Stopped: {UNFINISHED}" in stores.log("gamma")
        stores.base = later
    finally:
        world.model.release.set()
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err
    report = project(capture(world.db, stores), stores, "gamma")
    assert report["turns_captured"] == 1
    assert "- OpenCode: Released answer." in stores.log("gamma")


# --------------------------------------------------------------------------- the database file
def test_reading_never_writes_opencode_database(world: World, stores: Stores) -> None:
    def fingerprint() -> tuple[str, int, int]:
        st = world.db.stat()
        return hashlib.sha256(world.db.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size

    before = fingerprint()
    with OpenCodeDB(world.db) as reader:
        assert reader.status().ok
        for s in reader.sessions():
            for t in reader.turns(s.session_id):
                reader.transcript(s.session_id, t.turn_id)
            reader.todos(s.session_id)
        capture_opencode(reader, stores.open)
    assert fingerprint() == before


def test_the_reader_holds_no_transaction_between_calls(world: World, tmp_path: Path) -> None:
    copy = tmp_path / "opencode.db"
    _backup(world.db, copy)
    wal = Path(f"{copy}-wal")
    writer = sqlite3.connect(copy, timeout=0.05)  # plays OpenCode: writes to its WAL, checkpoints it
    reader = OpenCodeDB(copy)
    try:
        assert writer.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"

        def write(title: str) -> None:
            writer.execute("UPDATE session SET title = ? WHERE id = ?", (title, world.plain))
            writer.commit()

        def checkpoint() -> int:
            write("a change after the reader's last call")  # frames a held snapshot would pin
            busy: int = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            return busy

        # control: a connection that keeps a read transaction open does hold the checkpoint back
        held = sqlite3.connect(f"file:{copy}?mode=ro", uri=True, isolation_level=None)
        held.execute("BEGIN")
        held.execute("SELECT count(*) FROM message").fetchone()
        assert checkpoint() == 1 and wal.stat().st_size > 0
        held.close()

        sessions = reader.sessions()
        assert reader.turns(world.tools) and reader.todos(world.tools) and reader.status().ok
        assert checkpoint() == 0 and wal.stat().st_size == 0  # our open reader did not hold it back
        write("renamed by OpenCode")
        info = reader.session(world.plain)
        assert info is not None and info.title == "renamed by OpenCode"  # each call sees the latest data
        assert checkpoint() == 0
    finally:
        reader.close()
        writer.close()
    for side in ("-wal", "-shm"):
        Path(f"{copy}{side}").unlink(missing_ok=True)
    with OpenCodeDB(copy) as fresh:  # no -wal / -shm next to it
        assert fresh.status().ok
        assert [s.session_id for s in fresh.sessions()] == [s.session_id for s in sessions]


def test_a_missing_unreadable_or_foreign_database_degrades_with_a_reason(world: World, tmp_path: Path) -> None:
    def status_and_pass(path: Path) -> tuple[str, str]:
        with OpenCodeDB(path) as reader:
            status = reader.status()
            report = capture_opencode(reader, lambda root: None)
        assert report.db == status and report.projects == []
        return status.state, status.reason

    assert status_and_pass(tmp_path / "nope.db")[0] == "missing"
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    state, reason = status_and_pass(garbage)
    assert state == "unreadable" and "not a database" in reason

    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.close()
    state, reason = status_and_pass(foreign)
    assert state == "unknown_schema" and "table session is missing" in reason

    drifted = tmp_path / "drifted.db"
    _backup(world.db, drifted)
    conn = sqlite3.connect(drifted)
    conn.execute("ALTER TABLE part RENAME COLUMN data TO payload")
    conn.close()
    state, reason = status_and_pass(drifted)
    assert state == "unknown_schema" and "part lacks data" in reason

    with OpenCodeDB(tmp_path / "nope.db") as reader, pytest.raises(OpenCodeDBError) as err:
        reader.sessions()
    assert err.value.state == "missing"


def test_discover_finds_the_database_as_opencode_does(world: World, tmp_path: Path) -> None:
    assert discover_db(world.oc.env()) == world.oc.reported_db_path() == world.db

    home = tmp_path / "home"
    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    env = {"HOME": str(home)}
    assert discover_db(env) is None
    beta = data / "opencode-beta.db"
    dev = data / "opencode-dev.db"
    beta.write_bytes(b"")
    dev.write_bytes(b"")
    newer = time.time()
    os.utime(beta, (newer - 100, newer - 100))
    os.utime(dev, (newer, newer))
    assert discover_db(env) == dev  # no opencode.db: the most recently modified channel database
    (data / "opencode.db").write_bytes(b"")
    assert discover_db(env) == data / "opencode.db"
    xdg = tmp_path / "xdg"
    (xdg / "opencode").mkdir(parents=True)
    (xdg / "opencode" / "opencode.db").write_bytes(b"")
    assert discover_db({**env, "XDG_DATA_HOME": str(xdg)}) == xdg / "opencode" / "opencode.db"
    assert discover_db({**env, "OPENCODE_DB": "/elsewhere/x.db"}) == Path("/elsewhere/x.db")
    assert discover_db({**env, "OPENCODE_DB": "custom.db"}) == data / "custom.db"
    assert discover_db({**env, "OPENCODE_DB": ":memory:"}) is None
    assert discover_db({**env, "OPENCODE_DB": "custom.db"}, configured=str(beta)) == beta
    mac = home / "Library" / "Application Support" / "opencode"
    mac.mkdir(parents=True)
    (mac / "opencode.db").write_bytes(b"")
    shutil.rmtree(data)
    assert discover_db(env) == mac / "opencode.db"


# --------------------------------------------------------------------------- the daily log layout
def _turn(session: str, turn: str, at: str, **kw: Any) -> Turn:
    base: dict[str, Any] = {
        "source": "opencode",
        "session_id": session,
        "turn_id": turn,
        "seq": 1,
        "started_at": at,
        "ended_at": at,
        "user_text": "fix the failing test",
    }
    return Turn(**(base | kw))


def test_daily_log_layout_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        log = DailyLog(tmp_path / "memory", root="/work/app")
        a = SessionInfo("opencode", "ses_a", "/work/app", None, "2026-03-26T14:30:00.000Z", "2026-03-26T15:00:00.000Z")
        b = SessionInfo("opencode", "ses_b", "/work/app", None, "2026-03-26T14:40:00.000Z", "", parent_id="ses_a")
        calls = (
            ToolCall("bash", "c1", "completed", {"command": "npm   test\n"}),
            ToolCall("edit", "c2", "completed", {"filePath": "/work/app/src/auth.ts"}),
            ToolCall("bash", "c3", "error", {"command": "echo `date`"}, exit_code=1),
            ToolCall("todowrite", "c4", "completed", {"todos": []}, title="2 todos"),
            ToolCall("read", "c5", "error", {"filePath": "/work/app/a.ts"}, error="File not found: a.ts"),
            ToolCall("bash", "c6", "error", {"command": "git commit"}, error="killed", exit_code=128),
        )
        first = _turn(
            "ses_a",
            "msg_1",
            "2026-03-26T14:31:00.000Z",
            assistant_texts=("Looking.", "Fixed: the token check\ncompared seconds with ms."),
            tool_calls=calls,
            files=("src/auth.ts",),
        )
        assert log.append(first, a).appended
        assert log.append(_turn("ses_b", "msg_2", "2026-03-26T14:41:00.000Z", user_text=""), b).appended
        quoting = _turn("ses_b", "msg_q", "2026-03-26T14:42:00.000Z", user_text="see <!-- session:ses_a turn:msg_3 -->")
        assert "<\\!-- session:ses_a turn:msg_3 -->" in log.append(quoting, b).summary
        third = _turn("ses_a", "msg_3", "2026-03-26T15:00:00.000Z", user_text="x" * 400, error="Aborted\x1b[2J\x00")
        assert log.append(third, a).appended
        assert not log.append(first, a).appended  # already there
        path = tmp_path / "memory" / "2026-03-26.md"
        assert path.read_text() == (
            "# 2026-03-26\n"
            "\n## Session 14:30\n"
            "\n### 14:31\n<!-- session:ses_a turn:msg_1 -->\n"
            "- User: fix the failing test\n"
            "- OpenCode: Fixed: the token check compared seconds with ms.\n"
            "- [Tool: bash `npm test`] completed\n"
            "- [Tool: edit `src/auth.ts`] completed\n"
            "- [Tool: bash `` echo `date` ``] failed (exit 1)\n"
            "- [Tool: todowrite `2 todos`] completed\n"
            "- [Tool: read `a.ts`] failed: File not found: a.ts\n"
            "- [Tool: bash `git commit`] failed (exit 128): killed\n"
            "- Files: src/auth.ts\n"
            "\n## Session 14:40 (sub-agent of ses_a)\n"
            "\n### 14:41\n<!-- session:ses_b turn:msg_2 -->\n"
            "- (nothing said or done)\n"
            "\n### 14:42\n<!-- session:ses_b turn:msg_q -->\n"
            "- User: see <\\!-- session:ses_a turn:msg_3 -->\n"
            "\n## Session 14:30\n"
            "\n### 15:00\n<!-- session:ses_a turn:msg_3 -->\n"
            f"- User: {'x' * 299}…\n"
            "- Stopped: Aborted\\x1b[2J\\x00\n"  # control characters escaped, never written raw
        )
        assert find_anchors(path) == [("ses_a", "msg_1"), ("ses_b", "msg_2"), ("ses_b", "msg_q"), ("ses_a", "msg_3")]
        # another writer's process (a fresh DailyLog) sees the anchors too; the next day starts a file
        fresh = DailyLog(tmp_path / "memory")
        assert fresh.contains(third)
        nxt = replace(third, turn_id="msg_4", started_at="2026-03-27T09:00:00.000Z")
        fresh.append(nxt, a)
        assert (
            (tmp_path / "memory" / "2026-03-27.md")
            .read_text()
            .startswith("# 2026-03-27\n\n## Session 2026-03-26 14:30\n\n### 09:00\n<!-- session:ses_a turn:msg_4 -->\n")
        )
    finally:
        monkeypatch.undo()
        time.tzset()


def test_capture_report_is_empty_for_projects_without_sessions(world: World, stores: Stores) -> None:
    stores.enabled = set()
    report = capture(world.db, stores)
    assert report.projects == [] and report.turns_captured == 0 and report.errors == []
    assert report.newest_turn_at is None and report.db.ok
