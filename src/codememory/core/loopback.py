"""One JSON request to the local daemon over a plain socket, for the processes that run on every prompt.

The hooks and the daemon-backed embedder use it instead of urllib/http.client: importing those (and the email
parser they pull in) costs more than the whole loopback round trip. Every failure is None, so callers fall back
to doing the work themselves (the daemon is an accelerator, never a dependency).
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
from collections.abc import Callable
from typing import Any

from codememory.core.env_switches import switched_on
from codememory.core.paths import state_dir

ENV_NO_DAEMON = "CODEMEMORY_HOOK_NO_DAEMON"  # a switch (core.env_switches): never ask the daemon (tests, debugging)
MAX_RESPONSE = 32_000_000  # a daemon answer larger than this is not one of ours


def daemon_address() -> tuple[int, str] | None:
    """(port, token) of the daemon this user runs, or None when none is running or asking is switched off."""
    if switched_on(ENV_NO_DAEMON):
        return None
    folder = state_dir()
    try:
        info = json.loads((folder / "daemon.json").read_text(encoding="utf-8"))
        port, pid = info["port"], info["pid"]
        token = (folder / "token").read_text(encoding="utf-8").strip()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(port, int) or not 0 < port < 65536 or not isinstance(pid, int) or pid <= 0 or not token:
        return None
    try:  # a daemon that died left its address behind: never send the token to whatever listens there now
        os.kill(pid, 0)
    except OSError:  # gone, or another user's process that took the number: not our daemon
        return None
    return port, token


def post_json(
    path: str,
    body: dict[str, Any],
    timeout: float,
    *,
    answer_timeout: float | None = None,
    waiting: Callable[[float], None] | None = None,
) -> dict[str, Any] | None:
    """POST `body` to the daemon at `path`; its JSON object answer on 200, else None. `timeout` bounds the
    connection and each read; `answer_timeout`, when given, is how long to wait in all for an answer once the
    request is sent (a write the daemon may be doing, which the caller must not then redo), with `waiting(seconds
    so far)` called about once a second meanwhile, and for as long as the daemon answers its /health every `timeout`
    seconds: a daemon that is stopped or hung (the kernel still takes connections to its port) is not waited for."""
    address = daemon_address()
    if address is None:
        return None
    port, token = address
    try:
        data = json.dumps(body).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(head.encode() + data)
            if answer_timeout is not None:
                _await_answer(sock, answer_timeout, waiting, lambda: _answers_health(port, timeout), timeout)
                sock.settimeout(timeout)
            chunks = []
            size = 0
            while chunk := sock.recv(262144):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_RESPONSE:
                    return None
        response = b"".join(chunks)
        status_line, _, rest = response.partition(b"\r\n")
        headers, _, payload = rest.partition(b"\r\n\r\n")
        if status_line.split()[1:2] != [b"200"] or b"chunked" in headers.lower():
            return None
        answer = json.loads(payload)
    except (OSError, ValueError, UnicodeError, IndexError):
        return None
    return answer if isinstance(answer, dict) else None


HEALTH_PROBE_SECONDS = 5.0  # a daemon that is up answers /health in milliseconds, even while it embeds a long text


def _answers_health(port: int, timeout: float) -> bool:
    """Whether the daemon at `port` starts answering `GET /health` (open: no token) in HEALTH_PROBE_SECONDS."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=min(timeout, HEALTH_PROBE_SECONDS)) as sock:
            sock.sendall(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            return bool(sock.recv(1))
    except OSError:
        return False


def _await_answer(
    sock: socket.socket,
    answer_timeout: float,
    waiting: Callable[[float], None] | None,
    alive: Callable[[], bool],
    check_every: float,
) -> None:
    """Until the first byte of the answer can be read; TimeoutError after `answer_timeout` seconds, or as soon as
    `alive()`, asked every `check_every` seconds, says the daemon is no longer answering at all."""
    start = time.monotonic()
    checked = start
    while True:
        now = time.monotonic()
        elapsed = now - start
        if elapsed >= answer_timeout:
            raise TimeoutError
        if now - checked >= check_every:
            if not alive():
                raise TimeoutError
            checked = time.monotonic()
        readable, _, _ = select.select([sock], [], [], min(1.0, answer_timeout - elapsed))
        if readable:
            return
        if waiting is not None:
            waiting(time.monotonic() - start)
