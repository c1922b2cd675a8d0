"""The checks in front of every request to a local server (the daemon, `codememory mcp --http`), as ASGI
middleware before any routing, in this order:

1. `Host` must be exactly 127.0.0.1:PORT or localhost:PORT (else 421): a web page that rebinds its own DNS
   name to 127.0.0.1 still sends its own name.
2. `Origin`, when present, must be exactly the server's own, http://127.0.0.1:PORT or http://localhost:PORT,
   and `Sec-Fetch-Site`, when present, `same-origin` or `none` (else 403): a page served by any other local
   port or site, a sandboxed frame (`null`) or a file cannot reach the server (CSRF). Clients that are not
   browsers send no Origin and are not affected.
3. `Authorization: Bearer <token>` on everything except the public paths (the daemon's /health and
   /openapi.json, and its viewer's page, static files and login; none for `mcp --http`) (else 401), compared in
   constant time. A server with a web viewer (`Guard.sessions`) also takes, instead of the token, the viewer's
   session cookie (on the viewer's own endpoints only, `Guard.session_prefixes`/`session_paths`), together with
   the session's CSRF token in `X-CSRF-Token` on every request, GET included (else 401): the browser also sends
   the cookie to other servers on 127.0.0.1, which could replay it, but only the daemon's own page holds the
   token (see `web.viewer_session`). Only then does a request count
   against the limit of requests at once (503 beyond `http_guard.MAX_IN_FLIGHT`): sockets without the token
   cannot fill it (see `http_guard`).
4. The request body is capped at `max_body_bytes` (413): the Content-Length header is checked before reading,
   and a chunked body is counted as it streams; it must arrive whole within `body_timeout` seconds (408), on
   the public paths too. A body sent as anything but JSON is refused (415).

Every response, refusals included, carries a strict Content-Security-Policy (scripts and styles only from the
server's own origin, no inline script, no framing) and the usual hardening headers (`SECURITY_HEADERS`).

A refusal closes the connection (its body is never read). A failure inside the app is logged (scrubbed by the
log's filter), recorded where the server says (`Guard.record_error`) and answered with a 500 that carries no
traceback.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from codememory.web.http_guard import BODY_TIMEOUT, MAX_IN_FLIGHT
from codememory.web.viewer_session import CSRF_HEADER, ViewerSessions, cookie_value

log = logging.getLogger("codememory.daemon")

PUBLIC_PATHS = frozenset({"/health", "/openapi.json"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")  # the names of the one address a local server binds
_FETCH_SITES_ALLOWED = frozenset({b"same-origin", b"none"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),  # a login link's ticket never leaves in a Referer
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


def _ignore(_exc: BaseException, _where: str) -> None:
    return None


@dataclass(frozen=True)
class Guard:
    """What the checks need to know about the server they protect."""

    port: int  # the port bound: Host and Origin must name it
    token: str  # the per-install bearer token (`web.token`)
    max_body_bytes: int
    body_timeout: float = BODY_TIMEOUT  # seconds for the whole body once the head arrived
    record_error: Callable[[BaseException, str], None] = _ignore  # a failure inside the app, for /health
    sessions: ViewerSessions | None = None  # the web viewer's logins (the daemon); None: the token only
    public_prefixes: tuple[str, ...] = ()  # paths starting with these need no token (the viewer's static files)
    public_paths: frozenset[str] = frozenset()  # more exact paths served without a token
    # Where the viewer's session cookie stands for the token: only what the viewer's pages call. Everywhere else
    # (hooks, raw events, storing, retrieval) wants the token, so a script that got into the page, or a page that
    # got hold of a session, can read and curate but cannot feed the agents' side.
    session_prefixes: tuple[str, ...] = ()
    session_paths: frozenset[str] = frozenset()


def _json_bytes(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


async def send_json(send: Send, status: int, payload: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    body = _json_bytes(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _with_security_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _value in message.get("headers", [])}
            extra = [(n, v) for n, v in SECURITY_HEADERS if n not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


class _Reject(Exception):
    """A refusal before the app runs. It closes the connection: the request's body is not read, so the
    connection could not carry another request anyway, and a refused client gets nothing to keep open.
    Private: the middleware answers it itself; it never leaves this module."""

    def __init__(
        self, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None, reason: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = [*(headers or []), (b"connection", b"close")]
        self.reason = reason or message  # for the log


class SecurityMiddleware:
    """Host, Origin, token and body-size checks in front of everything (see the module docstring)."""

    public_paths: frozenset[str] = PUBLIC_PATHS  # served without a token (`codememory mcp --http`: none)

    def __init__(self, app: ASGIApp, guard: Guard, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.app = app
        self.guard = guard
        self.max_in_flight = max_in_flight
        self.in_flight = 0  # requests past the token check, not yet answered (one event loop: no lock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        send = _with_security_headers(send)
        counted = False
        try:
            headers = self._headers(scope)
            self._check_host(headers)
            self._check_origin(headers)
            if not self._public(scope["path"]):
                scope.setdefault("state", {})["auth"] = self._authenticate(scope, headers)
                if self.in_flight >= self.max_in_flight:
                    raise _Reject(503, "too many requests at once; try again in a moment", [(b"retry-after", b"1")])
                self.in_flight += 1
                counted = True
            body = await self._read_body(headers, receive)
            if body is None:  # the client went away
                return
            content_type = (headers.get(b"content-type") or [b""])[0].split(b";")[0].strip().lower()
            if body and content_type and not (content_type == b"application/json" or content_type.endswith(b"+json")):
                message = "send the request body as JSON (Content-Type: application/json)"
                await send_json(send, 415, {"error": message}, [])
                return
            await self._call_app(scope, receive, send, body)
        except _Reject as rej:
            if rej.status in (401, 403, 421, 503):
                log.warning("rejected %s %s: %d %s", scope.get("method"), scope.get("path"), rej.status, rej.reason)
            await send_json(send, rej.status, {"error": rej.message}, rej.headers)
        finally:
            if counted:
                self.in_flight -= 1

    @staticmethod
    def _headers(scope: Scope) -> dict[bytes, list[bytes]]:
        out: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers", []):
            out.setdefault(name.lower(), []).append(value)
        return out

    def _check_host(self, headers: dict[bytes, list[bytes]]) -> None:
        allowed = {f"{h}:{self.guard.port}" for h in LOOPBACK_HOSTS}
        values = headers.get(b"host", [])
        host = values[0].decode("latin-1").strip().lower() if len(values) == 1 else ""
        if host not in allowed:
            raise _Reject(
                421,
                f"misdirected request: this server answers only to 127.0.0.1:{self.guard.port} or "
                f"localhost:{self.guard.port}",
                reason=f"Host header {host[:100]!r}" if host else "no single Host header",
            )

    def _check_origin(self, headers: dict[bytes, list[bytes]]) -> None:
        # Exact strings: scheme, name and port. Any other port on loopback is another program (a dev server
        # serving a page, say), not this daemon.
        own = {f"http://{h}:{self.guard.port}".encode() for h in LOOPBACK_HOSTS}
        for value in headers.get(b"origin", []):
            if value.strip().lower() not in own:
                raise _Reject(
                    403, "cross-origin requests are not allowed", reason=f"Origin {value[:100].decode('latin-1')!r}"
                )
        for value in headers.get(b"sec-fetch-site", []):
            if value.strip().lower() not in _FETCH_SITES_ALLOWED:
                raise _Reject(
                    403,
                    "cross-origin requests are not allowed",
                    reason=f"Sec-Fetch-Site {value[:40].decode('latin-1')!r}",
                )

    def _public(self, path: str) -> bool:
        return (
            path in self.public_paths
            or path in self.guard.public_paths
            or any(path.startswith(p) for p in self.guard.public_prefixes)
        )

    def _authenticate(self, scope: Scope, headers: dict[bytes, list[bytes]]) -> str:
        """ "bearer", or "session" for a viewer's cookie with its CSRF token; else a refusal."""
        sessions = self.guard.sessions
        path = scope["path"]
        for_viewer = path in self.guard.session_paths or any(path.startswith(p) for p in self.guard.session_prefixes)
        session = cookie_value(headers.get(b"cookie", [])) if sessions is not None and for_viewer else None
        if sessions is None or b"authorization" in headers or session is None:
            self._check_token(headers)
            return "bearer"
        if not sessions.alive(session):
            raise _Reject(
                401,
                "not logged in, or the viewer session expired: open the link `codememory viewer` prints",
                reason="unknown or expired viewer session",
            )
        # On every method: a cookie without its token is what another server on 127.0.0.1 would replay.
        given = (headers.get(CSRF_HEADER.encode()) or [b""])[0].decode("latin-1").strip()
        if not sessions.csrf_matches(session, given):
            raise _Reject(
                401,
                "not logged in on this page (missing or wrong CSRF token): open the link `codememory viewer` prints",
                reason="viewer session cookie without its CSRF token",
            )
        scope.setdefault("state", {})["viewer_session"] = session
        return "session"

    def _check_token(self, headers: dict[bytes, list[bytes]]) -> None:
        values = headers.get(b"authorization", [])
        given = b""
        if len(values) == 1:
            scheme, _, credentials = values[0].strip().partition(b" ")
            if scheme.lower() == b"bearer":
                given = credentials.strip()
        expected = self.guard.token.encode("utf-8")
        if not given or not hmac.compare_digest(given, expected):
            raise _Reject(
                401,
                "missing or wrong bearer token (send the header 'Authorization: Bearer' followed by the "
                "contents of the file named token in codememory's state folder)",
                [(b"www-authenticate", b"Bearer")],
                reason="missing or wrong bearer token",
            )

    async def _read_body(self, headers: dict[bytes, list[bytes]], receive: Receive) -> bytes | None:
        limit = self.guard.max_body_bytes
        too_large = _Reject(413, f"request body too large (limit {limit} bytes)")
        lengths = headers.get(b"content-length", [])
        if lengths:
            try:
                declared = int(lengths[0])
            except ValueError:
                raise _Reject(400, "invalid Content-Length header") from None
            if declared > limit:
                raise too_large
        body = bytearray()
        deadline = max(self.guard.body_timeout, 0.1)
        try:
            async with asyncio.timeout(deadline):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    body += message.get("body", b"")
                    if len(body) > limit:
                        raise too_large
                    if not message.get("more_body", False):
                        return bytes(body)
        except TimeoutError:
            raise _Reject(408, f"request body not received within {deadline:g} s") from None

    async def _call_app(self, scope: Scope, receive: Receive, send: Send, body: bytes) -> None:
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, replay, tracking_send)
        except Exception as exc:
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            self.guard.record_error(exc, f"{scope.get('method')} {scope.get('path')}")
            if not started:
                await send_json(send, 500, {"error": "internal error (see the daemon log)"}, [])
