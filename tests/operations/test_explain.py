"""The injection ledger and `codememory explain`, and the daemon's `POST /memory/transcript`.

A real daemon (`python -m codememory.daemon run`, its own HOME and XDG folders) answers real /retrieve and
/memory/recent requests over loopback; `codememory explain` then reads what it recorded from the same
SQLite file. No mocks: a ledger failure is a real SQLite trigger that refuses inserts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory.core.project import db_path
from codememory.operations.explain import explain_last, record_injection
from codememory.service.project_store import Store
from codememory.store.injections import MAX_ROWS, InjectionTables
from codememory.text.tokens import memory_tokens
from conftest import Invoke
from support.capture import capture_by_hand
from support.daemon import Daemon, isolated_env, make_project, spawn

SECRET_KEY = "sk-proj-" + "Zq4rT6yU8iO0pA2sD4fG6hJ8kL0zX2cV4bN6mQ8w"  # split: not a real key for scanners
MEMORIES = (
    "Use httpx instead of requests for outbound HTTP calls in the webhook worker",
    "Postgres connection pool size is 20 in production",
    "Deploys happen on Tuesdays after the billing batch finishes",
)
JSON_KEYS = {"session_id", "total", "shown", "injections"}
INJECTION_KEYS = {"id", "at", "source", "session_id", "kind", "query", "degraded", "tokens", "memories"}
MEMORY_KEYS = {"id", "state", "category", "text", "why", "tokens"}


@dataclass
class World:
    daemon: Daemon
    project: Path
    ids: list[str]

    def post(self, path: str, body: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
        resp = self.daemon.client(token=token).request("POST", path, {"project_root": str(self.project), **body})
        return resp.status, resp.data

    def retrieve(self, *phrases: str, **more: Any) -> dict[str, Any]:
        status, data = self.post("/retrieve", {"query_expansion": list(phrases), **more})
        assert status == 200, data
        assert isinstance(data, dict)
        return data


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("explain")
    env = isolated_env(base)
    project = base / "project"
    ids = make_project(env, project, *MEMORIES)
    d = spawn(env)
    yield World(d, project, ids)
    d.terminate()


def explain(invoke: Invoke, project: Path, *args: Any) -> dict[str, Any]:
    result = invoke("--project", project, "explain", *args, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    assert set(data) == JSON_KEYS
    for inj in data["injections"]:
        assert set(inj) == INJECTION_KEYS
        for mem in inj["memories"]:
            assert set(mem) == MEMORY_KEYS
    return data


def ledger_rows(project: Path) -> list[tuple[Any, ...]]:
    """The injections table as SQLite holds it (not through our code)."""
    with sqlite3.connect(db_path(project)) as conn:
        return conn.execute("SELECT session_id, kind, query, memories, tokens, degraded FROM injections").fetchall()


# ------------------------------------------------------------------------------------- the ledger
def test_each_retrieve_with_memories_is_recorded_with_why_and_tokens(world: World, invoke: Invoke) -> None:
    first = world.retrieve("http client for the webhook worker", session_id="ses_explain_a", entities=["httpx"])
    second = world.retrieve("postgres pool size in production", session_id="ses_explain_a")
    assert first["memories"] and second["memories"]

    data = explain(invoke, world.project, "--last")
    assert (data["session_id"], data["total"], data["shown"]) == ("ses_explain_a", 2, 2)
    for answer, inj, phrase in zip(
        (first, second),
        data["injections"],
        ("http client for the webhook worker", "postgres pool size in production"),
        strict=True,
    ):
        assert (inj["kind"], inj["source"], inj["session_id"], inj["query"]) == (
            "hud",
            "opencode",
            "ses_explain_a",
            [phrase],
        )
        assert inj["degraded"] == answer["degraded"]
        assert [m["id"] for m in inj["memories"]] == [m["id"] for m in answer["memories"]]
        assert [m["why"] for m in inj["memories"]] == [m["why"] for m in answer["memories"]]
        assert [m["text"] for m in inj["memories"]] == [m["text"] for m in answer["memories"]]
        assert [m["tokens"] for m in inj["memories"]] == [memory_tokens(m["text"]) for m in answer["memories"]]
        assert inj["tokens"] == answer["tokens"] == sum(m["tokens"] for m in inj["memories"])
        assert {m["state"] for m in inj["memories"]} == {"live"}
    assert data["injections"][0]["id"] < data["injections"][1]["id"]  # oldest first
    assert world.ids[0] in [m["id"] for m in data["injections"][0]["memories"]]
    hit = next(m for m in data["injections"][0]["memories"] if m["id"] == world.ids[0])
    assert hit["why"].get("entities") == ["httpx"]  # the entity retriever's reason is kept

    # --last N keeps the newest N; the text form shows the same figures
    [only] = explain(invoke, world.project, "--last", "1")["injections"]
    assert only == data["injections"][1]
    text = invoke("--project", world.project, "explain", "--last", "5")
    assert text.exit_code == 0, text.stderr
    out = text.stdout
    assert "Session ses_explain_a: the last 2 of 2 injections" in out
    for inj in data["injections"]:
        n = len(inj["memories"])
        assert f"hud (opencode{', degraded' if inj['degraded'] else ''}): {n} memor" in out
        assert f"{inj['tokens']} tokens" in out and f"query: {inj['query'][0]}" in out
        for mem in inj["memories"]:
            assert f"{mem['id']}  {mem['tokens']:>4} tok  {mem['text'][:40]}" in out
    assert "why: retriever " in out and "entities httpx" in out


def test_a_retrieve_that_finds_nothing_records_nothing(world: World, invoke: Invoke) -> None:
    before = len(ledger_rows(world.project))
    answer = world.retrieve("zqxjvkwpf", session_id="ses_explain_empty")
    assert answer["memories"] == []
    assert len(ledger_rows(world.project)) == before
    result = invoke("--project", world.project, "explain", "--session", "ses_explain_empty")
    assert result.exit_code == 1
    assert result.stderr.startswith("codememory: error: no injections recorded for session ses_explain_empty")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_cold_start_block_is_recorded_once_per_request(world: World, invoke: Invoke) -> None:
    status, block = world.post("/memory/recent", {"session_id": "ses_explain_cold", "limit": 2, "source": "tester"})
    assert status == 200 and len(block["memories"]) == 2
    assert set(block) == {"memories", "tokens", "total"}  # the answer's shape is unchanged
    data = explain(invoke, world.project, "--session", "ses_explain_cold")
    [inj] = data["injections"]
    assert (inj["kind"], inj["source"], inj["query"], inj["degraded"]) == ("cold_start", "tester", [], False)
    assert [m["id"] for m in inj["memories"]] == [m["id"] for m in block["memories"]]
    assert inj["tokens"] == block["tokens"] == sum(memory_tokens(m["text"]) for m in block["memories"])
    reasons = [m["why"] for m in inj["memories"]]
    assert all(w["retriever"] == "cold_start" and w["by"] in ("importance", "recency") for w in reasons)
    # without a session id (an older plugin) the block is still served, and recorded without one
    status, _ = world.post("/memory/recent", {"limit": 1})
    assert status == 200
    assert explain(invoke, world.project)["injections"][-1]["session_id"] is None


def test_secrets_in_the_query_never_reach_the_ledger(world: World, invoke: Invoke) -> None:
    answer = world.retrieve(f"httpx webhook worker {SECRET_KEY}", session_id="ses_explain_secret")
    assert answer["memories"]
    [inj] = explain(invoke, world.project, "--session", "ses_explain_secret")["injections"]
    assert inj["query"][0].startswith("httpx webhook worker ") and "REDACTED" in inj["query"][0]
    raw = json.dumps(ledger_rows(world.project))
    assert SECRET_KEY not in raw and "ses_explain_secret" in raw
    text = invoke("--project", world.project, "explain", "--session", "ses_explain_secret").stdout
    assert SECRET_KEY not in text


def test_explain_shows_the_memorys_current_state(world: World, invoke: Invoke) -> None:
    extra = invoke("--project", world.project, "store", "Staging deploys use the canary cluster", "-q")
    memory_id = extra.stdout.strip()
    world.retrieve("staging deploys canary cluster", session_id="ses_explain_state")
    assert invoke("--project", world.project, "forget", memory_id).exit_code == 0
    [inj] = explain(invoke, world.project, "--session", "ses_explain_state")["injections"]
    gone = next(m for m in inj["memories"] if m["id"] == memory_id)
    assert (gone["state"], gone["text"], gone["category"]) == ("forgotten", None, None)
    assert gone["tokens"] == memory_tokens("Staging deploys use the canary cluster")
    text = invoke("--project", world.project, "explain", "--session", "ses_explain_state").stdout
    assert f"{memory_id}" in text and "[forgotten]  (forgotten)" in text


@pytest.mark.slow
def test_a_broken_ledger_never_fails_the_request(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project, MEMORIES[0])
    d = spawn(env)
    try:
        # The daemon opens the store first (a store holding a foreign trigger is refused when opened; this
        # one breaks later, under the open store): a question that finds nothing records no injection.
        warm = d.client().request(
            "POST", "/retrieve", {"query_expansion": ["zzzqqq"], "project_root": str(project), "session_id": "s"}
        )
        assert warm.status == 200 and warm.data["memories"] == [], warm
        with sqlite3.connect(db_path(project)) as conn:
            conn.execute(
                "CREATE TRIGGER no_ledger BEFORE INSERT ON injections BEGIN SELECT RAISE(ABORT, 'ledger off'); END"
            )
        resp = d.client().request(
            "POST", "/retrieve", {"query_expansion": ["httpx webhook"], "project_root": str(project), "session_id": "s"}
        )
        assert resp.status == 200 and resp.data["memories"], resp
        health = d.client().health()
        assert health["last_error"].startswith("injection ledger: ") and "ledger off" in health["last_error"]
        assert ledger_rows(project) == []
    finally:
        d.terminate()


def test_the_ledger_keeps_only_the_newest_rows(project: Path, invoke: Invoke) -> None:
    with Store.open(project) as store:
        assert InjectionTables(store.db).keep == MAX_ROWS == 5000
        mem = store.add("Use ruff for linting").memory
        for n in range(12):
            record_injection(
                store,
                kind="hud",
                memories=[{"id": mem.id, "text": mem.text, "why": {"n": n}}],
                query=[f"call {n}"],
                session_id="ses_cap",
                keep=5,
            )
        assert InjectionTables(store.db).count() == 5
        data = explain_last(store, last=50).to_dict()
    assert (data["total"], data["shown"]) == (5, 5)
    assert [i["query"] for i in data["injections"]] == [[f"call {n}"] for n in range(7, 12)]
    assert [i["memories"][0]["why"] for i in data["injections"]] == [{"n": n} for n in range(7, 12)]
    # nothing to record: no row
    with Store.open(project) as store:
        assert record_injection(store, kind="hud", memories=[], session_id="ses_cap") is None
        assert InjectionTables(store.db).count() == 5


def test_user_mistakes_are_one_line_errors(tmp_path: Path, project: Path, invoke: Invoke) -> None:
    empty = tmp_path / "no-store"
    empty.mkdir()
    result = invoke("--project", empty, "explain")
    assert result.exit_code == 1 and result.stderr.startswith("codememory: error: no codememory store")
    assert result.stderr.count("\n") == 1

    fresh = invoke("--project", project, "explain")
    assert fresh.exit_code == 0 and fresh.stdout.startswith("No injections recorded yet in this project")
    assert explain(invoke, project) == {"session_id": None, "total": 0, "shown": 0, "injections": []}
    unknown = invoke("--project", project, "explain", "--session", "ses_nope")
    assert unknown.exit_code == 1
    assert unknown.stderr == "codememory: error: no injections recorded for session ses_nope (the ledger is empty)\n"
    zero = invoke("--project", project, "explain", "--last", "0")
    assert zero.exit_code == 2 and "--last" in zero.stderr


def test_help_names_the_keys(invoke: Invoke) -> None:
    result = invoke("explain", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    for words in ("--last [N]", "--session", "--json", "why", "token", "session_id, total, shown, injections"):
        assert words in text


# ---------------------------------------------------------------------------- /memory/transcript
def test_the_transcript_endpoint_answers_what_the_cli_prints(world: World, invoke: Invoke) -> None:
    turns = capture_by_hand(
        world.project, "codex", "codex-xyz", ["fix the flaky login test", f"now signup {SECRET_KEY}"]
    )
    stored = invoke(
        "--project", world.project, "store", "Login test was flaky", "--source", turns[0].memory_source, "-q"
    )
    memory_id = stored.stdout.strip()
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"reference": memory_id}, [memory_id]),
        ({"reference": "codex-xyz"}, ["codex-xyz"]),
        ({"reference": "codex-xyz", "turn": 2}, ["codex-xyz", "--turn", "2"]),
        ({"reference": "codex-xyz", "turn": "t2"}, ["codex-xyz", "--turn", "t2"]),
        ({"reference": "codex-xyz", "max_turns": 1}, ["codex-xyz", "--max-turns", "1"]),
        ({"reference": turns[1].anchor}, [turns[1].anchor]),
    ]
    for body, args in cases:
        status, data = world.post("/memory/transcript", body)
        assert status == 200, data
        cli = invoke("--project", world.project, "transcript", *args, "--json")
        assert cli.exit_code == 0, cli.stderr
        assert data == json.loads(cli.stdout), body
        assert SECRET_KEY not in json.dumps(data)
    status, whole = world.post("/memory/transcript", {"reference": "codex-xyz", "max_turns": 1})
    assert (whole["turns_total"], whole["truncated"], len(whole["turns"])) == (2, True, 1)
    assert whole["turns"][0]["origin"] == "daily_log" and "fix the flaky login test" in whole["turns"][0]["transcript"]


def test_the_transcript_endpoint_needs_the_token_and_answers_errors_in_json(world: World) -> None:
    status, data = world.post("/memory/transcript", {"reference": "codex-xyz"}, token="")
    assert status == 401 and "bearer token" in data["error"]
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"reference": "two words"}, 400, "not a memory id (mem_ and 8 hex digits), a daily-log anchor"),
        ({"reference": "ses_nope"}, 404, "no captured turn for session ses_nope in this project"),
        ({"reference": "mem_00000000"}, 404, "no memory with id mem_00000000"),
        ({"reference": "ses_abc", "turn": 0}, 400, "turn numbers start at 1"),
        ({"reference": "codex-xyz", "max_turns": 0}, 422, "max_turns"),
        ({"reference": "codex-xyz", "seq": 2}, 422, "seq"),
        ({"reference": ""}, 422, "reference"),
    ]
    for body, code, message in cases:
        status, data = world.post("/memory/transcript", body)
        assert status == code, (body, data)
        assert set(data) <= {"error", "details"} and message in data["error"], (body, data)
    resp = world.daemon.client().request("POST", "/memory/transcript", {"project_root": "/", "reference": "x"})
    assert resp.status == 403 and "not in a project registered" in resp.data["error"]
    schema = world.daemon.client().request("GET", "/openapi.json").data
    assert "/memory/transcript" in schema["paths"]
