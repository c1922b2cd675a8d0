"""`codememory mcp --http` end to end: the installed CLI runs as a subprocess with its own HOME and XDG folders,
over a real store, and is spoken to over real loopback sockets by the MCP SDK's own streamable HTTP client
(and by plain http.client for the refusals). No mocks; waits poll with deadlines."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from codememory import Store
from codememory.mcp.http import DEFAULT_PORT, transport_security
from support.daemon import MAX_BODY, START_DEADLINE, isolated_env, state_of

T = TypeVar("T")
CLIENT = "pytest-http-agent"
SEEDED = "Deploys use blue-green switching on the kettle cluster"
TOOLS = {"memory_search", "memory_get", "memory_store", "memory_forget", "memory_retrieve", "memory_transcript"}
SESSION_TOOLS = {"checkpoint", "search_sessions", "list_sessions", "get_session_files"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
MCP_ACCEPT = "application/json, text/event-stream"


# ------------------------------------------------------------------------------------------- helpers
def token_file(env: dict[str, str]) -> Path:
    return state_of(env) / "token"


def make_project(base: Path, env: dict[str, str]) -> Path:
    """A project whose store holds one memory, made with the real Store under the isolated environment."""
    root = base / "project"
    root.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            if key.startswith("XDG_") or key.startswith("CODEMEMORY_") or key == "HOME":
                mp.setenv(key, value)
        store, created = Store.init(root)
        try:
            assert created
            store.add(SEEDED, category="decision", entered_by="seed")
        finally:
            store.close()
    return root


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    stdout: Path
    url: str = ""
    port: int = 0
    err_lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def stderr(self) -> str:
        return "".join(self.err_lines)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"the server did not stop within {timeout} s of signal {sig}")
        if self.reader is not None:
            self.reader.join(timeout=10)
        return rc


def start(console_script: Path, env: dict[str, str], cwd: Path, *args: str) -> Server:
    """`codememory mcp --http ARGS` in `cwd`; returns once it printed the URL it listens on."""
    out = cwd.parent / f"mcp-http-stdout-{time.monotonic_ns()}.txt"
    with out.open("wb") as stdout:
        proc = subprocess.Popen(
            [str(console_script), "mcp", "--http", *args], cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE
        )
    server = Server(proc, out)

    def drain() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            server.err_lines.append(raw.decode("utf-8", "replace"))

    server.reader = threading.Thread(target=drain, daemon=True)
    server.reader.start()
    prefix = "codememory mcp: listening on "
    deadline = time.monotonic() + START_DEADLINE
    while not server.url:
        for line in list(server.err_lines):
            if line.startswith(prefix):
                server.url = line[len(prefix) :].strip()
        if server.url:
            break
        if proc.poll() is not None:
            server.reader.join(timeout=10)
            pytest.fail(f"the server exited ({proc.returncode}) before listening:\n{server.stderr()}")
        if time.monotonic() > deadline:
            server.stop(signal.SIGKILL)
            pytest.fail(f"no URL line within {START_DEADLINE:.0f} s:\n{server.stderr()}")
        time.sleep(0.02)
    host_port = server.url.removeprefix("http://").removesuffix("/mcp")
    host, _, port = host_port.rpartition(":")
    assert host == "127.0.0.1" and server.url.endswith("/mcp"), server.url
    server.port = int(port)
    return server


def with_session(url: str, token: str, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """The SDK's streamable HTTP client with the bearer header: initialize, then run `body`."""

    async def main() -> T:
        with anyio.fail_after(60):
            async with (
                httpx.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(30, read=300)
                ) as http_client,
                streamable_http_client(url, http_client=http_client) as (read, write, _session_id),
                ClientSession(read, write, client_info=Implementation(name=CLIENT, version="1.0")) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.isError, f"{tool}({arguments}) failed: {text}"
    data = json.loads(text)
    assert data == result.structuredContent
    return data


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), self.headers
        return json.loads(self.body)


def request(
    port: int,
    method: str = "POST",
    path: str = "/mcp",
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    host: str | None = None,
) -> Reply:
    """One plain HTTP request (http.client), with the Host header as given."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        data = resp.read() if resp.status != 200 else resp.read(1)  # a 200 may be an open event stream
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, data)
    finally:
        conn.close()


def mcp_headers(token: str | None, **extra: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": MCP_ACCEPT, **extra}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


INIT_BODY = json.dumps(INIT).encode()


# ------------------------------------------------------------------------------------------- fixtures
@dataclass
class Running:
    server: Server
    env: dict[str, str]
    project: Path
    token: str


@pytest.fixture(scope="module")
def running(console_script: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One server for the module (started with no token file: it must create one)."""
    base = tmp_path_factory.mktemp("mcp-http")
    env = isolated_env(base)
    project = make_project(base, env)
    assert not token_file(env).exists()
    server = start(console_script, env, project, "--port", "0")
    try:
        yield Running(server, env, project, token_file(env).read_text(encoding="utf-8").strip())
    finally:
        rc = server.stop()
    # After every test's requests (refused ones included): a clean exit, nothing on stdout, no traceback.
    assert rc == 0, server.stderr()
    assert server.stdout.read_bytes() == b""
    assert "Traceback" not in server.stderr(), server.stderr()


# ---------------------------------------------------------------------------------------------- tests
@pytest.mark.slow
def test_the_token_is_the_daemons_created_private_if_missing(running: Running) -> None:
    path = token_file(running.env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(running.token) >= 32
    assert running.token not in running.server.stderr()


def test_the_sdk_client_lists_tools_searches_and_stores(running: Running) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {"tools": {t.name for t in (await session.list_tools()).tools}}
        out["seeded"] = await call(session, "memory_search", {"query": "blue-green kettle"})
        out["stored"] = await call(
            session, "memory_store", {"text": "Use httpx, not requests: we need HTTP/2", "category": "decision"}
        )
        out["found"] = await call(session, "memory_search", {"query": "httpx"})
        return out

    out = with_session(running.server.url, running.token, body)
    assert out["tools"] == TOOLS | SESSION_TOOLS
    [hit] = out["seeded"]["results"]
    assert (hit["text"], hit["category"]) == (SEEDED, "decision")
    stored = out["stored"]
    assert stored["created"] is True
    memory = stored["memory"]
    assert memory["entered_by"] == CLIENT  # the client's name from its initialize request, over HTTP too
    assert [h["id"] for h in out["found"]["results"]] == [memory["id"]]
    # Written to the project's real SQLite store: another process sees it.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CONFIG_HOME", running.env["XDG_CONFIG_HOME"])
        store = Store.open(running.project)
        try:
            assert store.get(memory["id"], touch=False).text == "Use httpx, not requests: we need HTTP/2"
        finally:
            store.close()


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token-0123456789abcdef0123456789abcdef", "Basic dXNlcjpwYXNz", "Bearer"],
    ids=["missing", "wrong", "basic", "empty"],
)
def test_a_missing_or_wrong_token_is_401_json(running: Running, authorization: str | None) -> None:
    headers = mcp_headers(None)
    if authorization is not None:
        headers["Authorization"] = authorization
    reply = request(running.server.port, body=INIT_BODY, headers=headers)
    assert reply.status == 401
    assert reply.headers.get("www-authenticate") == "Bearer"
    error = reply.json()["error"]
    assert "bearer token" in error
    assert running.token not in reply.body.decode()


def test_every_path_needs_the_token(running: Running) -> None:
    # The daemon serves /health without a token; this server has no path that does.
    for method, path in (("GET", "/health"), ("GET", "/openapi.json"), ("GET", "/mcp"), ("DELETE", "/mcp")):
        reply = request(running.server.port, method, path)
        assert reply.status == 401, (method, path, reply)


def test_the_right_token_opens_a_session(running: Running) -> None:
    reply = request(running.server.port, body=INIT_BODY, headers=mcp_headers(running.token))
    assert reply.status == 200, reply
    assert reply.headers.get("mcp-session-id")


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost", "", "[::1]:{port}", "localhost:1"]
)
def test_a_foreign_host_is_421(running: Running, host: str) -> None:
    port = running.server.port
    reply = request(port, body=INIT_BODY, headers=mcp_headers(running.token), host=host.format(port=port))
    assert reply.status == 421
    assert "misdirected request" in reply.json()["error"]


def test_loopback_names_of_this_port_are_accepted(running: Running) -> None:
    port = running.server.port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        reply = request(port, body=INIT_BODY, headers=mcp_headers(running.token), host=host)
        assert reply.status == 200, (host, reply)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example:{port}",
        "http://localhost:1",  # another local port is another program (a dev server's page, say)
        "http://127.0.0.1:{other}",
        "http://[::1]:{port}",
        "https://127.0.0.1:{port}",
        "http://localhost:{port}/mcp",
    ],
)
def test_a_foreign_origin_is_403(running: Running, origin: str) -> None:
    port = running.server.port
    headers = mcp_headers(running.token, Origin=origin.format(port=port, other=port + 1))
    reply = request(port, body=INIT_BODY, headers=headers)
    assert reply.status == 403
    assert reply.json() == {"error": "cross-origin requests are not allowed"}


def test_this_ports_own_origins_are_accepted(running: Running) -> None:
    port = running.server.port
    for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
        reply = request(port, body=INIT_BODY, headers=mcp_headers(running.token, Origin=origin))
        assert reply.status == 200, (origin, reply)


def test_the_sdk_transport_security_allows_the_same_names() -> None:
    """The SDK's own DNS-rebinding protection runs behind ours, with the same exact hosts and origins."""
    settings = transport_security(4321)
    assert settings.enable_dns_rebinding_protection is True
    assert settings.allowed_hosts == ["127.0.0.1:4321", "localhost:4321"]
    assert settings.allowed_origins == ["http://127.0.0.1:4321", "http://localhost:4321"]


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_fetch_from_another_site_or_port_is_403(running: Running, site: str) -> None:
    headers = mcp_headers(running.token, **{"Sec-Fetch-Site": site})
    assert request(running.server.port, body=INIT_BODY, headers=headers).status == 403


def test_idle_sockets_do_not_starve_requests_with_the_token(running: Running) -> None:
    """100 sockets that connect and never send a byte (uvicorn's limit_concurrency=64 counted them, and then
    answered every request 503) leave the server answering the token's requests."""
    port = running.server.port
    idle: list[socket.socket] = []
    try:
        for _ in range(100):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        reply = request(port, body=INIT_BODY, headers=mcp_headers(running.token))  # 30 s timeout: bounded
        assert reply.status == 200, reply
    finally:
        for sock in idle:
            sock.close()


def test_an_oversized_body_is_413(running: Running) -> None:
    port = running.server.port
    big = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * MAX_BODY}}).encode()  # type: ignore[dict-item]
    reply = request(port, body=big, headers=mcp_headers(running.token))
    assert reply.status == 413
    assert f"limit {MAX_BODY} bytes" in reply.json()["error"]
    # A chunked body (no Content-Length) is counted as it streams.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/mcp", body=iter([big[:10_000], big[10_000:]]), headers=mcp_headers(running.token))
        resp = conn.getresponse()
        assert resp.status == 413
        resp.read()
    finally:
        conn.close()


def test_it_listens_on_127_0_0_1_only(running: Running) -> None:
    port = running.server.port
    with socket.create_connection(("127.0.0.1", port), timeout=10):
        pass
    if not sys.platform.startswith("linux"):
        pytest.skip("the listening-socket table and 127.0.0.2 loopback checks are Linux-only")
    # 127.0.0.2 is loopback too: a server bound to 0.0.0.0 would accept it, one bound to 127.0.0.1 refuses.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", port), timeout=10).close()
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                listening.append((table, address))
    assert listening == [("/proc/net/tcp", "0100007F")]  # 127.0.0.1, little-endian; no IPv6 socket


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_it_cleanly_and_stdout_stays_empty(
    console_script: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    env = isolated_env(tmp_path)
    project = make_project(tmp_path, env)
    # An existing daemon token is used as is.
    folder = token_file(env).parent
    folder.mkdir(parents=True, mode=0o700, exist_ok=True)  # init made it for the machine id
    token = "existing-daemon-token-" + "k" * 32
    fd = os.open(token_file(env), os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    server = start(console_script, env, project, "--port", "0")
    try:

        async def body(session: ClientSession) -> Any:
            return await call(session, "memory_search", {"query": "kettle"})

        found = with_session(server.url, token, body)
        assert [h["text"] for h in found["results"]] == [SEEDED]
        # A client holding an open event stream (the GET stream of a session) must not keep it from stopping.
        opened = request(server.port, body=INIT_BODY, headers=mcp_headers(token))
        session_id = opened.headers["mcp-session-id"]
        stream = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        stream.request(
            "GET",
            "/mcp",
            headers={"Accept": "text/event-stream", "Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id},
        )
        listening = stream.getresponse()
        assert (listening.status, listening.getheader("content-type")) == (200, "text/event-stream")
    finally:
        # An open stream would hold a graceful shutdown forever; the server cuts it (fails past the deadline).
        rc = server.stop(sig, timeout=15)
    stream.close()
    assert rc == 0, server.stderr()
    assert "Traceback" not in server.stderr()
    assert server.stdout.read_bytes() == b""
    assert token_file(env).read_text().strip() == token


@pytest.mark.slow
def test_a_port_in_use_is_a_one_line_error(console_script: Path, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = make_project(tmp_path, env)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [str(console_script), "mcp", "--http", "--port", str(port)],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith(f"codememory: error: cannot listen on 127.0.0.1:{port}: ")
    assert "--port" in line


def test_help_and_usage(console_script: Path, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    shown = subprocess.run([str(console_script), "mcp", "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0
    for words in ("--http", "--port", str(DEFAULT_PORT), "127.0.0.1", "Authorization: Bearer", "token"):
        assert words in shown.stdout, words
    wrong = subprocess.run(
        [str(console_script), "mcp", "--port", "0"], env=env, capture_output=True, text=True, timeout=120
    )
    assert wrong.returncode == 2 and "--port needs --http" in wrong.stderr
