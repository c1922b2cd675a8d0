"""A request body has a deadline (`[daemon] body_timeout`), on the daemon and on `codememory mcp --http`, on the
public paths too: a client that sends a head and then trickles (or withholds) its body gets 408 and its connection
closed, instead of holding it open for ever (before the deadline, 257 of 300 such connections were still open after
65 s). Normal clients are unaffected. Real servers over real sockets; every wait is a socket timeout."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.daemon import Daemon, isolated_env, make_project, spawn, state_of, wait_for

BODY_TIMEOUT = 1.0
SLOW = 60  # connections that trickle their bodies at once
BIN = Path(sys.executable).parent


def slow_post(port: int, path: str, extra: str = "") -> socket.socket:
    """A connection that sent a POST head announcing 1,000 bytes of body, and then 10 of them."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{extra}"
        "Content-Length: 1000\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"query": ')
    return sock


def answer_and_close(sock: socket.socket, timeout: float) -> bytes | None:
    """What the server sent before closing `sock` within `timeout` seconds; None if it kept it open."""
    sock.settimeout(timeout)
    got = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                return got
            got += chunk
    except (ConnectionResetError, BrokenPipeError):
        return got
    except TimeoutError:
        return None
    return None


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    base = tmp_path_factory.mktemp("slow-bodies")
    env = isolated_env(base, CODEMEMORY_DAEMON_BODY_TIMEOUT=str(BODY_TIMEOUT))
    project = base / "project"
    make_project(env, project, "Deploys go through make deploy-staging")
    d = spawn(env)
    try:
        yield d, project
    finally:
        d.terminate()


@pytest.mark.slow  # waits out the deadline
def test_slow_bodies_on_public_and_private_paths_get_408_and_are_closed(daemon: tuple[Daemon, Path]) -> None:
    d, project = daemon
    token = f"Authorization: Bearer {d.token}\r\n"
    socks = [slow_post(d.port, "/health") for _ in range(SLOW // 2)]
    socks += [slow_post(d.port, "/login") for _ in range(SLOW // 4)]
    socks += [slow_post(d.port, "/retrieve", token) for _ in range(SLOW // 4)]
    try:
        # meanwhile a normal client is answered
        found = d.client(timeout=5).request("POST", "/memory/search", {"project_root": str(project), "query": "deploy"})
        assert found.status == 200
        for sock in socks:
            reply = answer_and_close(sock, BODY_TIMEOUT + 10)
            assert reply is not None, "a slow body kept its connection open"
            assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
            assert b"request body not received within 1 s" in reply
    finally:
        for sock in socks:
            sock.close()
    assert d.client(timeout=5).health()["status"] == "ok"


def test_a_prompt_body_is_not_affected(daemon: tuple[Daemon, Path]) -> None:
    d, project = daemon
    body = {"project_root": str(project), "query_expansion": ["how do deploys work"] * 8}
    assert d.client(timeout=5).request("POST", "/retrieve", body).status == 200


@pytest.mark.slow  # a real `codememory mcp --http` process; waits out the deadline
def test_mcp_http_cuts_a_slow_body_too(tmp_path: Path) -> None:
    env = isolated_env(tmp_path, CODEMEMORY_DAEMON_BODY_TIMEOUT=str(BODY_TIMEOUT))
    project = tmp_path / "project"
    make_project(env, project)
    proc = subprocess.Popen(
        [str(BIN / "codememory"), "--project", str(project), "mcp", "--http", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = proc.stderr
    assert stderr is not None

    def listening() -> str | None:
        line = stderr.readline()  # blocks until the server writes a line (it prints its URL once listening)
        if not line and proc.poll() is not None:
            pytest.fail(f"mcp --http exited with {proc.returncode}")
        return line if "listening on http://127.0.0.1:" in line else None

    try:
        line = wait_for("the listening line", listening, timeout=60)
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        token = (state_of(env) / "token").read_text().strip()
        sock = slow_post(port, "/mcp", f"Authorization: Bearer {token}\r\nAccept: application/json\r\n")
        with sock:
            reply = answer_and_close(sock, BODY_TIMEOUT + 10)
        assert reply is not None and reply.startswith(b"HTTP/1.1 408"), reply
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1]) == {"error": "request body not received within 1 s"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
