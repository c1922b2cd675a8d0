"""The daemon against hostile callers, over real HTTP on 127.0.0.1 (a real daemon subprocess from
tests/support/daemon.py, its own HOME and XDG folders):

- with the token, it still opens only projects in the user's registry: a cloned repository's committed store,
  a nested clone inside a registered project, a symlink or `..` out of one are refused (403) by every endpoint
  that names a project, before anything is opened;
- sockets that connect and say nothing, or send their headers a byte at a time, neither starve requests that
  carry the token nor stay open for ever;
- only the daemon's own origin and host names are accepted (CSRF, DNS rebinding).

No sleeping for timing: every wait is a socket timeout or a polling deadline."""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory.core import registry
from codememory.daemon.client import Response
from codememory.web.http_guard import MAX_IDLE, MAX_IN_FLIGHT
from support.daemon import Daemon, codememory, isolated_env, make_project, register, spawn, wait_for

MINE = "Deploys go through the blue-green switch on the kettle cluster"
CLONED = "planted by the cloned repository: exfiltrate-me-7f3a"
HEADER_TIMEOUT = 1.0  # the `quick` daemon's [daemon] header_timeout
ON_LINUX = sys.platform.startswith("linux")


# ------------------------------------------------------------------------------------------ helpers
def unregistered_store(env: dict[str, str], root: Path, text: str) -> None:
    """A store on disk that the user never registered (like a clone with a committed `.codememory/`)."""
    root.mkdir(parents=True, exist_ok=True)
    codememory(env, "--project", root, "init", "--assistants", "none", "--no-global")
    codememory(env, "--project", root, "store", text, "--quiet")


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime) of every file under `root`: any write, or a new -wal/-shm file, changes it."""
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def open_files(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return found


def hook_payload(cwd: str) -> str:
    return json.dumps({"session_id": "s1", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "deploys?"})


# Every endpoint that names a project: (name, method, path, body) for a project_root.
def endpoints(root: str) -> list[tuple[str, str, str, dict[str, Any] | None]]:
    event = {"event_id": "m1", "session_id": "ses_1", "kind": "user_prompt", "at": 0, "payload": {"text": "hi"}}
    return [
        ("retrieve", "POST", "/retrieve", {"query_expansion": ["deploys"], "project_root": root}),
        ("search", "POST", "/memory/search", {"project_root": root, "query": "exfiltrate"}),
        ("get", "POST", "/memory/get", {"project_root": root, "ids": ["mem_00000000"]}),
        ("store", "POST", "/memory/store", {"project_root": root, "text": "written by a stranger"}),
        ("transcript", "POST", "/memory/transcript", {"project_root": root, "reference": "ses_1"}),
        ("recent", "POST", "/memory/recent", {"project_root": root}),
        ("raw-events", "POST", "/api/raw-events", {"project_root": root, "events": [event]}),
        ("raw-status", "GET", "/api/raw-events/status?project_root=" + urllib.parse.quote(root), None),
        (
            "hook-cwd",
            "POST",
            "/hook",
            {"assistant": "claude", "event": "UserPromptSubmit", "payload": hook_payload(root)},
        ),
        (
            "hook-project",
            "POST",
            "/hook",
            {"assistant": "claude", "event": "UserPromptSubmit", "payload": hook_payload("/"), "project": root},
        ),
        ("sessions-checkpoint", "POST", "/sessions/checkpoint", {"project_root": root, "slug": "probe"}),
        ("sessions-search", "POST", "/sessions/search", {"project_root": root, "query": "probe"}),
        ("sessions-list", "POST", "/sessions/list", {"project_root": root}),
        ("sessions-files", "POST", "/sessions/files", {"project_root": root, "session_id": "2026-01-01_10-00_x_y"}),
    ]


def open_idle(port: int, n: int) -> list[socket.socket]:
    """`n` connections that never send a byte."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    except BaseException:
        close_all(socks)
        raise
    return socks


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def closed_by_peer(sock: socket.socket, timeout: float) -> bool:
    """True when the daemon closes `sock` within `timeout` seconds (reads past any response first)."""
    sock.settimeout(timeout)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if sock.recv(65536) == b"":
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return False


def timed_retrieve(d: Daemon, project: Path, n: int) -> list[float]:
    """`n` authenticated /retrieve calls, each with a 5 s deadline; their durations in seconds."""
    client = d.client(timeout=5)
    durations = []
    for _ in range(n):
        t0 = time.perf_counter()
        resp = client.request("POST", "/retrieve", {"query_expansion": ["deploys"], "project_root": str(project)})
        durations.append(time.perf_counter() - t0)
        assert resp.status == 200, resp
    return durations


# ------------------------------------------------------------------------------------------ fixtures
@dataclass
class World:
    daemon: Daemon
    mine: Path  # registered by `codememory init`
    cloned: Path  # a store on disk, never registered
    nested: Path  # an unregistered store inside `mine` (a vendored clone)
    link: Path  # a symlink inside `mine` to `cloned`


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("daemon-security")
    env = isolated_env(base)
    mine = base / "mine"
    make_project(env, mine, MINE)
    cloned = base / "cloned"
    unregistered_store(env, cloned, CLONED)
    nested = mine / "vendor" / "clone"
    unregistered_store(env, nested, CLONED)
    link = mine / "escape"
    link.symlink_to(cloned, target_is_directory=True)
    d = spawn(env)
    try:
        yield World(d, mine, cloned, nested, link)
    finally:
        assert d.terminate() == 0


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    """A daemon whose request heads must arrive within HEADER_TIMEOUT seconds."""
    base = tmp_path_factory.mktemp("daemon-quick")
    env = isolated_env(base, CODEMEMORY_DAEMON_HEADER_TIMEOUT=str(HEADER_TIMEOUT))
    project = base / "project"
    make_project(env, project, MINE)
    d = spawn(env)
    try:
        yield d, project
    finally:
        assert d.terminate() == 0


# -------------------------------------------------------------------------------- registered projects
@pytest.mark.parametrize("target", ["cloned", "cloned-subfolder", "nested", "symlink", "dotdot", "missing"])
def test_every_endpoint_refuses_a_store_outside_the_registry(world: World, target: str) -> None:
    d = world.daemon
    (world.cloned / "src").mkdir(exist_ok=True)
    root = {
        "cloned": str(world.cloned),
        "cloned-subfolder": str(world.cloned / "src"),
        "nested": str(world.nested),
        "symlink": str(world.link),  # inside the registered folder, resolving outside it
        "dotdot": f"{world.mine}/../{world.cloned.name}",
        "missing": str(world.cloned.parent / "nowhere"),
    }[target]
    # The hook acts on the folder named by --project as given, without looking above it: a folder without a
    # store is nothing to act on (an empty answer); one the request cannot name makes the hook run itself.
    hook_answers = {
        ("hook-project", "cloned-subfolder"): (200, {"output": ""}),
        ("hook-project", "missing"): (200, {"output": ""}),
        ("hook-cwd", "missing"): (400, None),
    }
    before = {p: snapshot(p) for p in (world.cloned, world.nested)}
    client = d.client()
    for name, method, path, body in endpoints(root):
        resp = client.request(method, path, body)
        assert "Traceback" not in json.dumps(resp.data)
        if (name, target) in hook_answers:
            status, data = hook_answers[name, target]
            assert resp.status == status and (data is None or resp.data == data), (name, resp)
            continue
        assert resp.status == 403, (name, resp)
        assert resp.headers["content-type"] == "application/json", name
        assert "registered" in resp.data["error"] and "codememory init" in resp.data["error"], (name, resp.data)
    # Nothing was written, created (no -wal/-shm: never opened) or left open in the unregistered stores.
    assert {p: snapshot(p) for p in before} == before
    if ON_LINUX:
        held = [f for f in open_files(d.proc.pid) if f.startswith((str(world.cloned), str(world.nested)))]
        assert held == []
    assert CLONED not in json.dumps(client.request("POST", "/memory/search", endpoints(str(world.mine))[1][3]).data)


def test_the_registered_project_and_its_subfolders_are_served(world: World) -> None:
    """The same endpoints for the registered project (a sub-folder, as the plugin sends its working folder)."""
    client = world.daemon.client()
    inner = world.mine / "src" / "pkg"
    inner.mkdir(parents=True, exist_ok=True)
    for root in (world.mine, inner, world.mine / "vendor"):  # vendor: between mine and the nested clone
        for name, method, path, body in endpoints(str(root)):
            resp = client.request(method, path, body)
            # nothing captured for ses_1, no such session: a 404, not a 403
            expected = 404 if name in ("transcript", "sessions-files") else 200
            assert resp.status == expected, (root, name, resp)
    found = client.request("POST", "/memory/search", {"project_root": str(world.mine), "query": "kettle"}).data
    assert [r["text"] for r in found["results"]] == [MINE]
    hook = client.request("POST", "/hook", endpoints(str(world.mine))[8][3]).data
    assert "kettle" in hook["output"]


def test_a_registry_change_takes_effect_at_once(world: World, tmp_path: Path) -> None:
    d = world.daemon
    other = tmp_path / "other"
    unregistered_store(d.env, other, "Feature flags live in Unleash")
    body = {"project_root": str(other), "query": "feature flags"}
    assert d.client().request("POST", "/memory/search", body).status == 403
    register(d.env, other)  # what `codememory init` does
    found = d.client().request("POST", "/memory/search", body)
    assert found.status == 200 and found.data["results"][0]["text"] == "Feature flags live in Unleash"
    registry.unregister(other.resolve(), path=Path(d.env["XDG_CONFIG_HOME"]) / "codememory" / "registry.json")
    assert d.client().request("POST", "/memory/search", body).status == 403  # even with the store still open


def test_a_broken_registry_is_a_clear_error(world: World) -> None:
    path = Path(world.daemon.env["XDG_CONFIG_HOME"]) / "codememory" / "registry.json"
    good = path.read_bytes()
    try:
        path.write_text("{not json", encoding="utf-8")
        resp = world.daemon.client().request("POST", "/memory/search", {"project_root": str(world.mine), "query": "x"})
        assert resp.status == 503 and "not valid JSON" in resp.data["error"] and "fix or delete" in resp.data["error"]
    finally:
        path.write_bytes(good)
    assert world.daemon.client().request("POST", "/memory/recent", {"project_root": str(world.mine)}).status == 200


def test_the_hook_endpoint_runs_only_what_the_hook_forwards(world: World, tmp_path: Path) -> None:
    client = world.daemon.client()
    plain = tmp_path / "no-store"
    plain.mkdir()
    no_store = {"assistant": "claude", "event": "UserPromptSubmit", "payload": hook_payload(str(plain))}
    assert client.request("POST", "/hook", no_store).data == {"output": ""}  # nothing to do, nothing refused
    for bad, fragment in (
        ({**no_store, "event": "Stop"}, "only these hook events"),
        ({**no_store, "project": "relative/dir"}, "absolute"),
    ):
        resp = client.request("POST", "/hook", bad)
        assert resp.status == 400 and fragment in resp.data["error"], resp


# -------------------------------------------------------------------------- idle and slow connections
def test_idle_sockets_do_not_starve_authenticated_requests(world: World) -> None:
    """uvicorn's limit_concurrency=64 counted connections: 70 idle sockets made every request a 503."""
    d = world.daemon
    timed_retrieve(d, world.mine, 5)  # warm up: the store is open, the code paths loaded
    quiet = timed_retrieve(d, world.mine, 30)
    base_fds = fd_count(d.proc.pid) if ON_LINUX else 0
    idle = open_idle(d.port, 100)
    try:
        if ON_LINUX:  # the daemon has accepted them (not just the kernel's backlog); a few descriptors open at
            # the base count (a store's journal, a log rotation) may have closed since, hence the slack
            wait_for("the daemon to accept 100 sockets", lambda: fd_count(d.proc.pid) >= base_fds + 90, timeout=30)
        loaded = timed_retrieve(d, world.mine, 30)
        assert d.client(timeout=5).health()["status"] == "ok"
        # They are still open: served alongside, not closed to make room.
        assert not closed_by_peer(idle[0], 0.05) and not closed_by_peer(idle[-1], 0.05)
    finally:
        close_all(idle)
    ratio = statistics.median(loaded) / statistics.median(quiet)
    print(
        f"\n/retrieve median: {statistics.median(quiet) * 1000:.2f} ms with no idle socket, "
        f"{statistics.median(loaded) * 1000:.2f} ms with 100 idle sockets open (ratio {ratio:.2f}); "
        f"max {max(loaded) * 1000:.2f} ms"
    )


def test_a_flood_of_idle_sockets_closes_the_oldest(world: World) -> None:
    """More idle connections than the cap: the longest idle are closed (long before their head deadline),
    so idle sockets cannot use up the daemon's file descriptors; requests with the token still answer."""
    d = world.daemon
    idle = open_idle(d.port, MAX_IDLE + 40)
    try:
        assert closed_by_peer(idle[0], 5.0)  # the header deadline is 10 s: this is the cap
        assert not closed_by_peer(idle[-1], 0.05)
        timed_retrieve(d, world.mine, 3)
    finally:
        close_all(idle)


def test_refused_requests_cannot_hold_a_connection_or_a_slot(world: World) -> None:
    """70 connections that send a complete head without the token and promise a body they never send: each
    gets its 401 and is closed; then a request with the token is answered."""
    d = world.daemon
    head = (
        f"POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 5000\r\n\r\n"
    ).encode()
    socks = open_idle(d.port, 70)
    try:
        for sock in socks:
            sock.sendall(head)
        for sock in socks:
            sock.settimeout(5)
            assert sock.recv(65536).startswith(b"HTTP/1.1 401")
            assert closed_by_peer(sock, 5.0)
        timed_retrieve(d, world.mine, 3)
    finally:
        close_all(socks)


def test_only_requests_with_the_token_count_against_the_concurrency_limit(world: World) -> None:
    d = world.daemon
    head = (
        f"POST /memory/recent HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\nAuthorization: Bearer {d.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    ).encode()

    def recent() -> Response:
        return d.client(timeout=5).request("POST", "/memory/recent", {"project_root": str(world.mine)})

    slow = open_idle(d.port, MAX_IN_FLIGHT)
    try:
        for sock in slow:
            sock.sendall(head)  # authenticated, body never sent: each holds a slot
        full = wait_for("the limit to fill", lambda: (r := recent()).status == 503 and r, timeout=10)
        assert "too many requests" in full.data["error"] and full.headers["retry-after"] == "1"
        assert d.client(timeout=5).health()["status"] == "ok"  # /health has no token: it takes no slot
    finally:
        close_all(slow)
    wait_for("the slots to free", lambda: recent().status == 200, timeout=10)


@pytest.mark.slow
def test_a_silent_connection_is_closed_after_the_header_timeout(quick: tuple[Daemon, Path]) -> None:
    d, _ = quick
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        assert closed_by_peer(sock, HEADER_TIMEOUT + 5)


def trickle_until_closed(sock: socket.socket, data: bytes, limit: float) -> tuple[bool, int]:
    """Send `data` one byte at a time, each after waiting up to 0.2 s for the daemon to close the socket.
    (closed, bytes sent) after at most `limit` seconds."""
    sent = 0
    deadline = time.monotonic() + limit
    for byte in data:
        if time.monotonic() > deadline:
            return False, sent
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return True, sent
        sent += 1
        if closed_by_peer(sock, 0.2):
            return True, sent
    return False, sent


@pytest.mark.slow
def test_a_slowloris_is_cut_off_and_does_not_delay_others(quick: tuple[Daemon, Path]) -> None:
    d, project = quick
    slow_head = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\nX-Pad: {'a' * 500}\r\n\r\n".encode()
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        sock.sendall(slow_head[:20])
        assert timed_retrieve(d, project, 1)  # answered while the slow head is pending
        closed, sent = trickle_until_closed(sock, slow_head[20:], limit=HEADER_TIMEOUT + 10)
    assert closed and 2 <= sent < len(slow_head) - 20  # bytes kept coming, the head never completed: cut

    # On a kept-alive connection too: the first byte of the next head starts the clock again.
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as sock:
        sock.sendall(slow_head)
        reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200"), reply
        closed, sent = trickle_until_closed(sock, slow_head, limit=HEADER_TIMEOUT + 10)
    assert closed and 2 <= sent < len(slow_head)


def test_a_normal_client_is_unaffected_by_the_short_header_timeout(quick: tuple[Daemon, Path]) -> None:
    d, project = quick
    assert len(timed_retrieve(d, project, 5)) == 5


# --------------------------------------------------------------------------------------- Origin, Host
def status_of(d: Daemon, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, Any]:
    status, response_headers, data = d.raw(method, path, body, headers)
    if status in (403, 421):
        assert response_headers["connection"] == "close", response_headers
    return status, data


def requests_of(world: World) -> list[tuple[str, str, bytes | None, dict[str, str]]]:
    body = json.dumps({"query_expansion": ["deploys"], "project_root": str(world.mine)}).encode()
    return [
        ("GET", "/health", None, {}),
        ("POST", "/retrieve", body, {"Content-Type": "application/json"}),
    ]


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:1",
        "http://127.0.0.1:{other}",
        "http://localhost:{other}",
        "http://evil.example",
        "null",
        "",
        "https://127.0.0.1:{port}",
        "http://[::1]:{port}",
        "http://localhost:{port}.evil.example",
        "http://127.0.0.1:{port}/",
        "http://127.0.0.1",
    ],
)
def test_an_origin_other_than_the_daemons_own_is_refused(world: World, origin: str) -> None:
    d = world.daemon
    value = origin.format(port=d.port, other=d.port + 1)
    for method, path, body, headers in requests_of(world):
        status, data = status_of(d, method, path, body, d.auth_headers(Origin=value, **headers))
        assert status == 403, (value, path)
        assert data == {"error": "cross-origin requests are not allowed"}


def test_the_daemons_own_origin_and_no_origin_are_accepted(world: World) -> None:
    d = world.daemon
    for method, path, body, headers in requests_of(world):
        for extra in (
            {},
            {"Origin": f"http://127.0.0.1:{d.port}"},
            {"Origin": f"http://localhost:{d.port}"},
            {"Sec-Fetch-Site": "same-origin"},
            {"Sec-Fetch-Site": "none"},
        ):
            assert status_of(d, method, path, body, d.auth_headers(**headers, **extra))[0] == 200, (path, extra)


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_fetch_from_another_site_or_port_is_refused(world: World, site: str) -> None:
    d = world.daemon
    for method, path, body, headers in requests_of(world):
        status, _ = status_of(d, method, path, body, d.auth_headers(**{"Sec-Fetch-Site": site}, **headers))
        assert status == 403, (site, path)


@pytest.mark.parametrize(
    "host",
    [
        "localhost:1",
        "127.0.0.1:{other}",
        "[::1]:{port}",
        "evil.example:{port}",
        "rebound.attacker.example:{port}",
        "127.0.0.1",
        "localhost",
        "127.0.0.1:{port}.evil.example",
        "0.0.0.0:{port}",
    ],
)
def test_a_host_other_than_the_daemons_is_misdirected(world: World, host: str) -> None:
    d = world.daemon
    value = host.format(port=d.port, other=d.port + 1)
    for method, path, body, headers in requests_of(world):
        auth = {"Authorization": f"Bearer {d.token}", "Host": value, **headers}
        status, data = status_of(d, method, path, body, auth)
        assert status == 421 and "misdirected" in data["error"], (value, path)


def test_the_daemons_host_names_are_accepted(world: World) -> None:
    d = world.daemon
    for method, path, body, headers in requests_of(world):
        for host in (f"127.0.0.1:{d.port}", f"localhost:{d.port}"):
            auth = {"Authorization": f"Bearer {d.token}", "Host": host, **headers}
            assert status_of(d, method, path, body, auth)[0] == 200, (host, path)
