"""Browser sessions for the daemon's web viewer: one-time login tickets, session cookies and CSRF tokens.

A browser cannot send the bearer token (it would have to live in the page, readable by anything the page runs),
so `codememory viewer`, which can read the token file, asks the daemon for a login ticket and prints a link
carrying it. Opening the link redeems the ticket once (a link copied from a terminal's scroll-back later is dead)
and sets a cookie that is HttpOnly (no script reads it) and SameSite=Strict (no other site's page makes the browser
send it).

The cookie alone is not enough: browsers keep cookies per host, not per port, and SameSite counts every port of
127.0.0.1 as one site, so the browser also sends it to any other web server on 127.0.0.1 it visits (a dev server,
another user's server on a shared machine), which could replay it. Every request made with the cookie must also
carry the session's token in `X-CSRF-Token`, GET included, and the daemon hands that token out exactly once: in
the login redirect's URL fragment (`/#login=<token>`), which browsers never send to a server. The page moves it
into its origin's localStorage, which is per port, and no endpoint ever returns it again.

Everything is held in the daemon's memory: restarting the daemon logs every browser out. Secrets are kept as
their SHA-256 (a dictionary lookup on a hash compares no secret byte by byte).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

COOKIE_NAME = "codememory_viewer"
CSRF_HEADER = "x-csrf-token"
TICKET_SECONDS = 300.0  # a login link is good for five minutes, once
SESSION_SECONDS = 12 * 3600.0
MAX_TICKETS = 32
MAX_SESSIONS = 32


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class Login:
    """What redeeming a ticket gives the browser: the cookie's value, how long it lasts, and the session's token
    (handed out this once, in the redirect's fragment)."""

    session: str
    max_age: int
    csrf: str


class ViewerSessions:
    """The live tickets and sessions of one daemon (thread-safe: the event loop checks, handlers issue)."""

    def __init__(
        self,
        ticket_seconds: float = TICKET_SECONDS,
        session_seconds: float = SESSION_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ticket_seconds = ticket_seconds
        self.session_seconds = session_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._tickets: dict[str, float] = {}  # digest -> expiry
        self._sessions: dict[str, tuple[float, str]] = {}  # digest -> (expiry, the CSRF token's digest)

    def _expire(self, now: float) -> None:
        for key in [k for k, until in self._tickets.items() if until <= now]:
            del self._tickets[key]
        for key in [k for k, (until, _csrf) in self._sessions.items() if until <= now]:
            del self._sessions[key]

    @staticmethod
    def _trim(table: dict[str, Any], limit: int) -> None:
        while len(table) > limit:  # dicts keep insertion order: the oldest goes first
            del table[next(iter(table))]

    def new_ticket(self) -> tuple[str, float]:
        """A fresh one-time ticket and the seconds it stays valid."""
        ticket = secrets.token_urlsafe(32)
        with self._lock:
            now = self._clock()
            self._expire(now)
            self._tickets[_digest(ticket)] = now + self.ticket_seconds
            self._trim(self._tickets, MAX_TICKETS)
        return ticket, self.ticket_seconds

    def redeem(self, ticket: str) -> Login | None:
        """A new session for a live ticket, which is gone afterwards; None for an unknown, used or expired one."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            if self._tickets.pop(_digest(ticket), None) is None:
                return None
            session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
            self._sessions[_digest(session)] = (now + self.session_seconds, _digest(csrf))
            self._trim(self._sessions, MAX_SESSIONS)
        return Login(session, int(self.session_seconds), csrf)

    def alive(self, session: str) -> bool:
        with self._lock:
            self._expire(self._clock())
            return _digest(session) in self._sessions

    def csrf_matches(self, session: str, given: str) -> bool:
        """Whether `given` is the token of the live session `session`. Only its digest is kept: nothing the daemon
        holds can hand the token out again."""
        with self._lock:
            self._expire(self._clock())
            found = self._sessions.get(_digest(session))
        return found is not None and bool(given) and hmac.compare_digest(_digest(given), found[1])

    def end(self, session: str) -> None:
        with self._lock:
            self._sessions.pop(_digest(session), None)


def cookie_value(cookie_headers: list[bytes], name: str = COOKIE_NAME) -> str | None:
    """The value of cookie `name` in the request's Cookie header(s), if any."""
    for header in cookie_headers:
        for part in header.decode("latin-1").split(";"):
            key, sep, value = part.strip().partition("=")
            if sep and key == name and value:
                return value.strip('"')
    return None


def set_cookie_header(login: Login) -> str:
    """The Set-Cookie value for a new session: no script reads it, no other site's request carries it. No
    `Secure`: the daemon speaks plain HTTP on loopback, where the browser would then never send it."""
    return f"{COOKIE_NAME}={login.session}; HttpOnly; SameSite=Strict; Path=/; Max-Age={login.max_age}"
