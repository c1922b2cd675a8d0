"""Connections that cannot starve the daemon: the uvicorn settings the daemon and `codememory mcp --http` share.

uvicorn's `limit_concurrency` counts open *connections*, so 64 sockets that connect and never send a byte
made every other request, with the right token, get 503; and uvicorn has no deadline for a request's head, so
one such socket (or one sending its headers a byte at a time) stays forever. Instead:

- A connection must deliver a complete request head within `header_timeout` seconds: of being accepted, or of
  the first byte of its next request on a kept-alive connection. Otherwise it is closed.
- Connections between requests (accepted and not yet sent a head, or kept alive after a response) are at most
  `max_idle`: a new connection beyond that closes the one idle the longest, so a flood of idle sockets cannot
  run the process out of file descriptors either.
- A request's body must arrive whole within `body_timeout` seconds of its head (`SecurityMiddleware` reads it,
  with or without the token, before the app runs): else 408 and the connection is closed. Without it, bodies
  trickled to the public paths kept 257 of 300 connections open after 65 s.
- The concurrency limit counts requests that passed the token check (`SecurityMiddleware`), never sockets.

A request refused before its body was read (413, 401, ...) is answered, then the connection is closed the way
RFC 9112 §9.6 asks: the write side first, the rest of the body read and dropped, then the socket (a "lingering
close", bounded in time and bytes). Closing a socket with unread data makes the kernel send a reset, which can
destroy the answer in flight and makes a client still sending its body fail with a broken pipe instead of reading
the 413.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0  # seconds for a whole request head (the daemon's `[daemon] header_timeout`)
BODY_TIMEOUT = 10.0  # seconds for a whole request body once the head arrived (`[daemon] body_timeout`)
KEEP_ALIVE = 30  # seconds a connection may idle between requests once it has had a response
MAX_IDLE = 256  # connections between requests, beyond which the longest idle is closed
MAX_IN_FLIGHT = 64  # authenticated requests at once (the rest get 503)
LINGER_SECONDS = 5.0  # a refused request's body is read and dropped for at most this long after the answer
LINGER_BYTES = 8 * 1024 * 1024  # and at most this much of it


class _LingeringTransport:
    """The transport uvicorn sees: `close()` while the client is still sending its request body half-closes
    instead (the answer is flushed, then FIN) and lets the protocol drop what still arrives; the socket closes at
    the client's own FIN, after LINGER_BYTES or after LINGER_SECONDS. Everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport, protocol: GuardedH11Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._closing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self._closing or self._transport.is_closing()

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        real = self._transport
        if real.is_closing() or not self._protocol.body_unread() or not real.can_write_eof():
            real.close()
            return
        self._protocol.lingering = True
        real.write_eof()
        real.resume_reading()  # uvicorn pauses reading while a body waits for the app
        self._protocol.loop.call_later(LINGER_SECONDS, real.close)

    def abort(self) -> None:
        self._closing = True
        self._transport.abort()

    def close_now(self) -> None:
        """End the lingering early (too much was sent)."""
        self._transport.close()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and a cap on idle connections (see the module doc).
    `guarded_protocol` makes a subclass per server, with its own settings and idle set."""

    header_timeout: ClassVar[float] = HEADER_TIMEOUT
    max_idle: ClassVar[int] = MAX_IDLE
    idle: ClassVar[OrderedDict[GuardedH11Protocol, None]] = OrderedDict()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_deadline: asyncio.TimerHandle | None = None
        self.lingering = False  # answered and half-closed: what still arrives is dropped (_LingeringTransport)
        self._dropped = 0
        self._linger: _LingeringTransport | None = None

    def body_unread(self) -> bool:
        """The client is still sending a request body this server will not read."""
        return self.conn.their_state is h11.SEND_BODY

    # A connection is "idle" while h11 waits for the peer's next request head.
    def _waiting_for_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(self.header_timeout, self._head_too_slow)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self._waiting_for_head():
            self._drop()

    def _drop(self) -> None:
        self.idle.pop(self, None)
        self._disarm_head_deadline()
        if not self.transport.is_closing():
            self.transport.close()

    def _became_idle(self) -> None:
        self.idle[self] = None
        self.idle.move_to_end(self)
        while len(self.idle) > self.max_idle:
            oldest = next(iter(self.idle))
            oldest._drop()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._linger = _LingeringTransport(transport, self)
        super().connection_made(self._linger)  # type: ignore[arg-type]
        self._became_idle()
        self._arm_head_deadline()

    def data_received(self, data: bytes) -> None:
        if self.lingering:  # the rest of a refused body: dropped, up to a bound
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES and self._linger is not None:
                self._linger.close_now()
            return
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._waiting_for_head():
            self._arm_head_deadline()  # the first byte after a keep-alive pause starts the clock again
        else:  # a complete head arrived: the request is the app's now
            self._disarm_head_deadline()
            self.idle.pop(self, None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._waiting_for_head():
            self._became_idle()  # uvicorn's keep-alive timer runs; a new head gets `header_timeout`

    def connection_lost(self, exc: Exception | None) -> None:
        self.idle.pop(self, None)
        self._disarm_head_deadline()
        super().connection_lost(exc)


def guarded_protocol(header_timeout: float = HEADER_TIMEOUT, max_idle: int = MAX_IDLE) -> type[GuardedH11Protocol]:
    """A protocol class for one server (`uvicorn.Config(http=...)`), with its own set of idle connections."""

    class ServerProtocol(GuardedH11Protocol):
        pass

    ServerProtocol.header_timeout = max(header_timeout, 0.1)
    ServerProtocol.max_idle = max(max_idle, 1)
    ServerProtocol.idle = OrderedDict()
    return ServerProtocol


def uvicorn_options(header_timeout: float = HEADER_TIMEOUT) -> dict[str, Any]:
    """The `uvicorn.Config` keywords both servers use for their connections (no `limit_concurrency`: see above)."""
    return {
        "http": guarded_protocol(header_timeout),
        "ws": "none",
        "timeout_keep_alive": KEEP_ALIVE,
        "h11_max_incomplete_event_size": 16 * 1024,  # a request head larger than this is a 400
    }
