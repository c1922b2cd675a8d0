"""Issue 4 end to end: the real `opencode` binary talks to a scripted model; `codememory capture` and the
daemon turn its sessions into daily-log entries and memories, with heuristics or a scripted extraction
model; crashes lose and duplicate nothing; the secrets corpus never leaks.

OpenCode's runs are shared by the module (`world`); every test starts from a fresh store in the same
project (`fresh`), since sessions are routed to their project by its worktree.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory.capture.daily_log import find_anchors
from codememory.core.project import store_dir
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables
from support.daemon import isolated_env, register, spawn, wait_for
from support.opencode import MODEL, PROVIDER, OpenCodeHome, make_git_project, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request
from support.secrets_corpus import CORPUS, SECRETS

pytestmark = pytest.mark.slow  # sessions of the real OpenCode binary (the module's `world`)

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
LLM_MEMORY = "The cache uses SQLite rather than Postgres because it must work offline."
SECRETS_TEXT = "\n".join(text for _, _, text in CORPUS)


@dataclass
class World:
    oc: OpenCodeHome
    project: Path
    first: str  # two turns: a decision with the secrets corpus, then a `write` tool call
    second: str  # one turn with a `bash` tool call
    base: Path

    @property
    def turns(self) -> int:
        return 3


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_opencode()
    base = tmp_path_factory.mktemp("ingest")
    project = make_git_project(base / "shop")
    script = Script(
        [
            Reply("Agreed. *Remember*: run `make migrate` before the integration tests."),
            Reply(tool_calls=[ToolCallSpec("write", {"filePath": str(project / "cache.toml"), "content": "db='x'\n"})]),
            Reply("Wrote cache.toml with the SQLite settings."),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo tests-ok", "description": "run the tests"})]),
            Reply("The tests pass."),
        ]
    )
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(base / "oc-home", llm.base_url)
        first = oc.run(
            project,
            "We decided to use SQLite instead of Postgres for the cache. Here is our setup:\n" + SECRETS_TEXT,
        ).session_id
        assert first
        oc.run(project, "now write cache.toml", session=first)
        second = oc.run(project, "run the tests").session_id
        assert second
        yield World(oc, project, first, second, base)


@pytest.fixture
def fresh(world: World, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A new empty store in the world's project, and the environment of a codememory process using it."""
    shutil.rmtree(store_dir(world.project), ignore_errors=True)
    Store.init(world.project)[0].close()
    env = isolated_env(tmp_path, OPENCODE_DB=str(world.oc.db_path))
    yield env
    shutil.rmtree(store_dir(world.project), ignore_errors=True)


def project_config(world: World, text: str, trusted_in: dict[str, str] | None = None) -> None:
    """Write the project's config.toml; with `trusted_in` (a process environment), its user then trusts
    it there, as settings that send data (an LLM's base_url) or run a program apply only when trusted."""
    (store_dir(world.project) / "config.toml").write_text(text, encoding="utf-8")
    if trusted_in is not None:
        trust = [CODEMEMORY, "--project", str(world.project), "trust"]
        subprocess.run(trust, env=trusted_in, capture_output=True, text=True, timeout=60, check=True)


def capture(env: dict[str, str], *args: str, status: int = 0) -> dict[str, Any]:
    done = subprocess.run(
        [CODEMEMORY, "capture", "--json", *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == status, done.stderr + done.stdout
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def log_anchors(project: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for path in sorted((store_dir(project) / "memory").glob("*.md")):
        found += find_anchors(path)
    return found


def captured_turns(project: Path) -> list[tuple[str, str]]:
    with Store.open(project) as store:
        return [(t.session_id, t.turn_id) for t in CaptureTables(store.db).turns("opencode")]


def memories(project: Path) -> list[dict[str, Any]]:
    with Store.open(project) as store:
        return [m.to_dict() for m in store.list(limit=1000)]


def leaks(project: Path, *more: Path) -> list[tuple[str, str]]:
    """(file, secret prefix) for every corpus secret found in the store's files or `more` files."""
    files = [p for p in store_dir(project).rglob("*") if p.is_file()] + [p for p in more if p.is_file()]
    return [(p.name, s[:12]) for p in files for s in SECRETS if s.encode() in p.read_bytes()]


def fts_leaks(project: Path) -> list[str]:
    db = sqlite3.connect(store_dir(project) / "memory.db")
    try:
        found = []
        for secret in SECRETS:
            phrase = '"' + secret.replace('"', '""') + '"'
            if db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", [phrase]).fetchone()[0]:
                found.append(secret[:12])
        return found
    finally:
        db.close()


# ------------------------------------------------------------------------------------------ heuristic
def test_capture_then_heuristic_extraction_without_an_llm(world: World, fresh: dict[str, str]) -> None:
    report = capture(fresh, "--idle-after", "0")
    assert report["turns_captured"] == world.turns
    assert report["capture"]["db"]["state"] == "ok"
    anchors = log_anchors(world.project)
    assert sorted(anchors) == sorted(captured_turns(world.project))
    assert len(anchors) == len(set(anchors)) == world.turns
    assert {s for s, _ in anchors} == {world.first, world.second}

    extracted = {s["session_id"]: s for p in report["extraction"] for s in p["sessions"]}
    assert set(extracted) == {world.first}  # the second session has 3 messages (< min_messages 4)
    assert extracted[world.first]["status"] == "ok"
    assert report["extraction"][0]["waiting"] == 1
    found = memories(world.project)
    texts = " | ".join(m["text"] for m in found)
    assert "make migrate" in texts  # the *Remember* note
    assert "SQLite instead of Postgres" in texts  # the decision
    assert "cache.toml" not in texts  # files touched belong to the session and the daily log
    assert all(m["source"].startswith(f"opencode session:{world.first} turn:") for m in found)
    assert {m["entered_by"] for m in found} == {"codememory-extract:heuristic"}
    assert report["memories_created"] == len(found)

    again = capture(fresh, "--idle-after", "0")
    assert again["turns_captured"] == 0 and again["memories_created"] == 0
    assert len(memories(world.project)) == len(found)
    assert log_anchors(world.project) == anchors

    assert leaks(world.project) == []
    assert fts_leaks(world.project) == []


def test_min_messages_and_idle_threshold_come_from_the_project_config(world: World, fresh: dict[str, str]) -> None:
    first = capture(fresh)  # default idle_after is an hour: the sessions just ran
    assert first["turns_captured"] == world.turns and first["memories_created"] == 0
    assert first["extraction"][0]["waiting"] == 2
    project_config(world, "[capture]\nmin_messages = 2\nidle_after = 0\n")
    second = capture(fresh)
    done = {s["session_id"] for p in second["extraction"] for s in p["sessions"]}
    assert done == {world.first, world.second}
    assert second["memories_created"] > 0


def test_capture_without_extraction_and_bad_duration(world: World, fresh: dict[str, str]) -> None:
    report = capture(fresh, "--no-extract")
    assert report["turns_captured"] == world.turns and report["extraction"] == []
    bad = subprocess.run(
        [CODEMEMORY, "capture", "--idle-after", "soon"], env=fresh, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "not a duration" in bad.stderr and "Traceback" not in bad.stderr


def test_no_opencode_database_is_reported_not_a_crash(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    done = subprocess.run([CODEMEMORY, "capture"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "missing" in done.stdout and "0 turns captured" in done.stdout


def test_a_malformed_project_config_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = tmp_path / "shop"
    project.mkdir()
    init = [CODEMEMORY, "--project", str(project), "init", "--assistants", "none"]
    subprocess.run(init, env=env, capture_output=True, check=True)
    (store_dir(project) / "config.toml").write_text("[llm\nprovider = 'openai'\n", encoding="utf-8")
    done = subprocess.run([CODEMEMORY, "capture"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert f"{project}: cannot open the store: cannot read {store_dir(project) / 'config.toml'}" in done.stderr
    assert "Traceback" not in done.stderr and "InvalidInput" not in done.stderr


# ------------------------------------------------------------------------------------------ with an LLM
class ExtractionModel:
    """The extraction model: answers compression requests with a sentence and extraction requests with
    one memory; `gate` makes the first extraction request wait (to kill the extractor mid-call)."""

    def __init__(self, gate: bool = False) -> None:
        self.gate = gate
        self.arrived = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        # By the prompt's text, not its role: `opencode run` sends our system prompt as its user message.
        text = json.dumps(body.get("messages", []))
        if is_title_request(body) or "extract durable project knowledge" not in text.lower():
            return Reply("Ran a command.")
        if self.gate and not self.arrived.is_set():
            self.arrived.set()
            self.release.wait(60)
        memory = {"text": LLM_MEMORY, "category": "decision", "importance": 0.8, "entities": ["SQLite", "Postgres"]}
        return Reply(json.dumps({"memories": [memory]}))


def llm_config(base_url: str) -> str:
    return f'[capture]\nidle_after = 0\n\n[llm]\nprovider = "openai"\nbase_url = "{base_url}"\nmodel = "scripted"\n'


def test_extraction_with_a_scripted_llm_stores_its_memories_and_spend(world: World, fresh: dict[str, str]) -> None:
    with ScriptedLLM(ExtractionModel()) as llm:
        project_config(world, llm_config(llm.base_url), trusted_in=fresh)
        report = capture(fresh)
        requests = list(llm.requests)
    assert report["turns_captured"] == world.turns
    session = next(s for p in report["extraction"] for s in p["sessions"])
    assert session["status"] == "ok" and session["llm_calls"] >= 1
    found = memories(world.project)
    from_llm = [m for m in found if m["entered_by"] == "codememory-extract:llm"]
    assert [m["text"] for m in from_llm] == [LLM_MEMORY]
    assert from_llm[0]["category"] == "decision"
    assert from_llm[0]["source"].startswith(f"opencode session:{world.first} turn:")
    assert any("make migrate" in m["text"] for m in found)  # Remember notes are kept by rule as well

    sent = json.dumps(requests)
    assert "SQLite instead of Postgres" in sent  # the transcript did reach the model...
    assert [s[:12] for s in SECRETS if s in sent] == []  # ...but none of the secrets
    stats = subprocess.run(
        [CODEMEMORY, "--project", str(world.project), "stats", "--json"],
        env=fresh,
        capture_output=True,
        text=True,
        check=True,
    )
    spend = json.loads(stats.stdout)["llm_spend"]
    assert spend["all_time"]["calls"] == session["llm_calls"]
    assert spend["all_time"]["total_tokens"] > 0
    human = subprocess.run(
        [CODEMEMORY, "--project", str(world.project), "stats"], env=fresh, capture_output=True, text=True, check=True
    )
    assert "LLM spend: today" in human.stdout and "openai/scripted" in human.stdout
    assert leaks(world.project) == [] and fts_leaks(world.project) == []


def test_extraction_through_the_users_own_opencode(world: World, fresh: dict[str, str], tmp_path: Path) -> None:
    """provider = "opencode": our prompt goes through the real `opencode run`, in an isolated config made
    from the user's (here: one whose model is the scripted server)."""
    with ScriptedLLM(ExtractionModel()) as llm:
        user = OpenCodeHome(tmp_path / "user-home", llm.base_url)
        env = {**fresh, "HOME": str(user.home), "XDG_CONFIG_HOME": str(user.home / ".config")}
        project_config(
            world,
            f'[capture]\nidle_after = 0\n\n[llm]\nprovider = "opencode"\nopencode_bin = "{user.bin}"\n'
            f'model = "{PROVIDER}/{MODEL}"\ncompress_tools = false\n',
            trusted_in=env,
        )
        report = capture(env)
        asked = [
            r
            for r in llm.requests
            if not is_title_request(r) and "extract durable project knowledge" in json.dumps(r).lower()
        ]
    session = next(s for p in report["extraction"] for s in p["sessions"])
    assert session["status"] == "ok", session
    assert len(asked) == session["llm_calls"] >= 1
    assert not any(t.get("function", {}).get("name") == "memory_search" for r in asked for t in r.get("tools", []))
    from_llm = [m for m in memories(world.project) if m["entered_by"] == "codememory-extract:llm"]
    assert [m["text"] for m in from_llm] == [LLM_MEMORY]


def test_unreachable_llm_leaves_the_session_for_a_later_pass(world: World, fresh: dict[str, str]) -> None:
    project_config(world, llm_config("http://127.0.0.1:9/v1"), trusted_in=fresh)  # discard port: connection refused
    report = capture(fresh, status=1)
    session = next(s for p in report["extraction"] for s in p["sessions"])
    assert session["status"] == "failed" and session["created"] == 0
    assert any("cannot reach" in e for e in report["errors"])
    again = capture(fresh)  # a failed span waits RETRY_AFTER before the model is asked again
    assert [s for p in again["extraction"] for s in p["sessions"]] == []
    assert again["extraction"][0]["waiting"] >= 1


# ------------------------------------------------------------------------------------------ crashes
def test_kill_9_during_extraction_loses_and_duplicates_nothing(world: World, fresh: dict[str, str]) -> None:
    model = ExtractionModel(gate=True)
    with ScriptedLLM(model) as llm:
        project_config(world, llm_config(llm.base_url), trusted_in=fresh)
        proc = subprocess.Popen([CODEMEMORY, "capture"], env=fresh, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert model.arrived.wait(60), "the extraction request never arrived"
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            model.release.set()
        assert captured_turns(world.project) and len(log_anchors(world.project)) == world.turns
        assert [m for m in memories(world.project) if m["entered_by"] == "codememory-extract:llm"] == []
        report = capture(fresh)
        assert report["turns_captured"] == 0
        assert [s["status"] for p in report["extraction"] for s in p["sessions"]] == ["ok"]
        capture(fresh)
    found = memories(world.project)
    assert [m["text"] for m in found].count(LLM_MEMORY) == 1
    texts = [m["text"] for m in found]
    assert len(texts) == len(set(texts))


def test_kill_9_during_capture_loses_and_duplicates_nothing(world: World, fresh: dict[str, str]) -> None:
    import fcntl

    # Deterministic: hold the project's capture lock so the pass stops inside the project, then kill it.
    lock = os.open(store_dir(world.project) / "capture.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    proc = subprocess.Popen([CODEMEMORY, "capture", "--no-extract"], env=fresh, stdout=subprocess.DEVNULL)
    try:
        wait_for("the pass to open the project", lambda: _holds_open(proc.pid, "capture.lock"), timeout=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        os.close(lock)
    assert captured_turns(world.project) == []
    # Then kills at whatever point each pass has reached, until one finishes: the invariants hold whatever
    # the point (most land in start-up; any that land between the log append and the record are repaired).
    kills = 0
    for delay in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        proc = subprocess.Popen([CODEMEMORY, "capture", "--no-extract"], env=fresh, stdout=subprocess.DEVNULL)
        try:
            proc.wait(delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            kills += 1
    capture(fresh, "--no-extract")
    anchors = log_anchors(world.project)
    assert len(anchors) == len(set(anchors)) == world.turns
    assert sorted(anchors) == sorted(captured_turns(world.project))


def _holds_open(pid: int, name: str) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").endswith(name) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


# ------------------------------------------------------------------------------------------ daemon
def test_daemon_captures_new_turns_extracts_and_serves_them(world: World, fresh: dict[str, str]) -> None:
    user_config = Path(fresh["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text("[capture]\npoll_interval = 0.2\n", encoding="utf-8")
    project_config(world, "[capture]\nidle_after = 0\nmin_messages = 2\n")
    register(fresh, world.project)  # the daemon answers /retrieve only for registered projects
    daemon = spawn(fresh)
    try:
        wait_for("the existing turns", lambda: len(log_anchors(world.project)) == world.turns, timeout=60)
        with ScriptedLLM(Script([Reply("Use ruff for lint; we rejected flake8 because it is slow.")])) as llm:
            oc = OpenCodeHome(world.oc.home, llm.base_url)
            run = oc.run(world.project, "We decided to use ruff instead of flake8 for lint. " + CORPUS[0][2])
        wait_for(
            "the new turn in the daily log",
            lambda: run.session_id in {s for s, _ in log_anchors(world.project)},
            timeout=30,
        )
        wait_for(
            "the new session's memories",
            lambda: [m for m in memories(world.project) if run.session_id in m["source"]],
            timeout=60,
        )
        # the daemon's OpenCode reads never hold a read transaction open: a full checkpoint succeeds
        oc_db = sqlite3.connect(world.oc.db_path)
        try:
            busy, _, _ = oc_db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            oc_db.close()
        assert busy == 0
        answer = daemon.client().retrieve(["which linter, ruff or flake8"], world.project, entities=["ruff"])
        assert any("ruff" in m["text"] for m in answer["memories"]), answer
        health = _get(daemon.port, "/health")
        assert health["capture_lag_seconds"] is not None and health["last_error"] is None
    finally:
        assert daemon.terminate() == 0
    daemon_log = Path(fresh["XDG_STATE_HOME"]) / "codememory" / "daemon.log"
    assert "captured" in daemon_log.read_text()
    assert leaks(world.project, daemon_log) == [] and fts_leaks(world.project) == []


def _get(port: int, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]
