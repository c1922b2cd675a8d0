"""The listening socket of a local server: 127.0.0.1 only, never another address."""

from __future__ import annotations

import os
import socket

from codememory.errors import LocalServerError

HOST = "127.0.0.1"  # the only address a codememory server ever binds


def listen_loopback(port: int, hint: str) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:`port` (0: any free port); LocalServerError (one line, ending with
    `hint`) when the port cannot be had."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP; without it every
    # keep-alive response waits ~40 ms (Nagle + delayed ACK: uvicorn writes headers and body separately).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":  # rebind at once after a restart (old connections in TIME_WAIT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise LocalServerError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc} (is another program using the port? {hint})"
        ) from None
    sock.set_inheritable(False)
    return sock
