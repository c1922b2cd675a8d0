"""`codememory mcp --http`: the same MCP tools as `codememory mcp`, over the streamable HTTP transport.

Listens on 127.0.0.1 only (never another address), at http://127.0.0.1:PORT/mcp, for one project. Every
request passes the daemon's own checks first (`web.security.SecurityMiddleware`, with no path exempt
from the token):

1. `Host` must be exactly 127.0.0.1:PORT or localhost:PORT (else 421, against DNS rebinding);
2. an `Origin` other than http://127.0.0.1:PORT or http://localhost:PORT, or a `Sec-Fetch-Site` other than
   same-origin/none, is refused (403, against CSRF from web pages and other local ports);
3. `Authorization: Bearer <token>` with the daemon's per-user token, the file `token` in codememory's
   state folder, created (0600) if missing (else 401);
4. bodies over `[daemon] max_body_bytes` are refused (413), and so are bodies that do not arrive whole within
   `[daemon] body_timeout` seconds (408);
5. idle or slow connections cannot starve the others (`web.http_guard`: a deadline for the request
   head, a cap on idle connections, and a limit on requests at once counted after the token check).

Then the MCP SDK's own transport security runs too (DNS-rebinding protection with the allowed hosts and
origins of this port only). Logs go to stderr; stdout is not used. SIGINT/SIGTERM stop it cleanly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
import threading
from types import FrameType
from typing import Any

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from codememory.core.config import Config, load_config
from codememory.errors import LocalServerError, McpHttpError
from codememory.mcp.server import MemoryServer, create_server
from codememory.web.http_guard import uvicorn_options
from codememory.web.listen import HOST, listen_loopback
from codememory.web.security import Guard, SecurityMiddleware
from codememory.web.token import load_or_create_token

DEFAULT_PORT = 9474  # the daemon's default (9473) + 1
ENDPOINT = "/mcp"


class _TokenEverywhere(SecurityMiddleware):
    """The daemon's checks, with the token required on every path (the daemon exempts /health)."""

    public_paths: frozenset[str] = frozenset()


class _QuietSessionClose(logging.Filter):
    """The SDK (1.30) logs "Error in standalone SSE writer" with a traceback when a client ends its session
    (DELETE, or the server stopping) while its GET event stream is open: the stream it reads from is closed
    under it (anyio.ClosedResourceError). That is a normal close, not an error; other failures still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.msg == "Error in standalone SSE writer" and isinstance(exc, anyio.ClosedResourceError))


def bind(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:`port` (0: any free port). Raises McpHttpError (one line)."""
    try:
        return listen_loopback(port, "pass --port N, or --port 0 for any free port")
    except LocalServerError as exc:
        raise McpHttpError(str(exc)) from None


def transport_security(port: int) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection for a server on 127.0.0.1:`port`: this port's loopback names only."""
    names = ("127.0.0.1", "localhost")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names],
    )


def create_app(
    project: str | os.PathLike[str] | None, *, port: int, token: str, config: Config
) -> tuple[ASGIApp, MemoryServer]:
    """The ASGI app for a server bound to 127.0.0.1:`port`, and the MCP server inside it (whose store the
    caller closes). The app has a lifespan (the SDK's session manager): run it with lifespan on."""
    limit = config.daemon.max_body_bytes
    server = create_server(project, transport_security=transport_security(port), max_request_body_size=limit)
    # Failures inside the app are logged by the middleware; there is no /health to record them for.
    guard = Guard(port=port, token=token, max_body_bytes=limit, body_timeout=config.daemon.body_timeout)
    return _TokenEverywhere(server.streamable_http_app(), guard=guard), server


def serve_http(project: str | os.PathLike[str] | None = None, port: int = DEFAULT_PORT) -> None:
    """`codememory mcp --http`: serve until SIGINT/SIGTERM. The URL is printed to stderr as one line."""
    import uvicorn

    config = load_config(None)  # the user's settings and env, like the daemon ([daemon] max_body_bytes)
    token = load_or_create_token()
    sock = bind(port)
    try:
        bound = sock.getsockname()[1]
        app, server = create_app(project, port=bound, token=token, config=config)
        uv = uvicorn.Server(
            uvicorn.Config(
                app,
                log_config=None,  # uvicorn's records go to the root logger (stderr, set up by FastMCP)
                access_log=False,
                server_header=False,
                proxy_headers=False,
                lifespan="on",  # the SDK's session manager runs in the app's lifespan
                timeout_graceful_shutdown=3,  # open event streams are cut after this
                **uvicorn_options(config.daemon.header_timeout),  # head deadline, idle cap (no socket limit)
            )
        )

        def on_signal(_signum: int, _frame: FrameType | None) -> None:
            # Before and after uvicorn's own handlers (it restores ours and re-raises what it caught).
            uv.should_exit = True

        quiet = _QuietSessionClose()
        sdk_log = logging.getLogger("mcp.server.streamable_http")
        sdk_log.addFilter(quiet)
        previous: dict[signal.Signals, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        try:
            with contextlib.redirect_stdout(sys.stderr):  # a stray print() must not reach stdout
                print(f"codememory mcp: listening on http://{HOST}:{bound}{ENDPOINT}", file=sys.stderr, flush=True)
                uv.run(sockets=[sock])
            if not uv.started:
                raise McpHttpError("the MCP HTTP server failed to start (see the messages above)")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sdk_log.removeFilter(quiet)
            server.memory.close()
    finally:
        sock.close()
