"""The daemon's HTTP bridge (FastAPI): `GET /health`, `POST /retrieve`, and the OpenAPI schema.

Security runs first, as ASGI middleware in front of the routing, in this order:

1. `Host` must be exactly 127.0.0.1:PORT or localhost:PORT (else 421): a web page that rebinds its own DNS
   name to 127.0.0.1 still sends its own name.
2. `Origin`, when present, must be exactly the daemon's own, http://127.0.0.1:PORT or http://localhost:PORT,
   and `Sec-Fetch-Site`, when present, `same-origin` or `none` (else 403): a page served by any other local
   port or site, a sandboxed frame (`null`) or a file cannot reach the daemon (CSRF). Clients that are not
   browsers send no Origin and are not affected.
3. `Authorization: Bearer <token>` on everything except /health and /openapi.json (else 401), compared in
   constant time. Only then does a request count against the limit of requests at once (503 beyond
   `http_guard.MAX_IN_FLIGHT`): sockets without the token cannot fill it (see `http_guard`).
4. The request body is capped at `[daemon] max_body_bytes` (413): the Content-Length header is checked
   before reading, and a chunked body is counted as it streams.

A refusal closes the connection (its body is never read). Every endpoint that names a project opens it only
when it is registered on this machine (`project_access`, else 403).

Every error is JSON `{"error": "..."}`; a failure inside a handler is logged (scrubbed) and answered with
a 500 that carries no traceback.
"""

from __future__ import annotations

import hmac
import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from codememory import __version__
from codememory.core.registry import RegistryError
from codememory.daemon.embed_api import create_router as create_embed_router
from codememory.daemon.hook_api import create_router as create_hook_router
from codememory.daemon.http_guard import MAX_IN_FLIGHT
from codememory.daemon.project_access import ProjectNotAllowed
from codememory.daemon.raw_events_api import create_router as create_raw_events_router
from codememory.daemon.recall_api import create_router as create_recall_router
from codememory.daemon.recall_api import ledger
from codememory.daemon.request_body import RequestBody
from codememory.daemon.state import DaemonState
from codememory.errors import CodememoryError, InvalidInput, NotFound, StoreNotFound, StoreUnusable
from codememory.operations.retrieve import retrieve as retrieve_for_step
from codememory.text.privacy import scrub_message

log = logging.getLogger("codememory.daemon")

PUBLIC_PATHS = frozenset({"/health", "/openapi.json"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")  # the names of the one address the daemon binds
_FETCH_SITES_ALLOWED = frozenset({b"same-origin", b"none"})

MAX_PHRASES_IN = 32
MAX_LIST = 64
MAX_TEXT = 4000


# ------------------------------------------------------------------------------------------- models
class RetrieveBody(RequestBody):
    """A proactive-retrieval request (the OpenCode plugin sends one per LLM call)."""

    model_config = ConfigDict(extra="ignore")

    query_expansion: (
        Annotated[str, Field(max_length=MAX_TEXT * 4)]
        | Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_PHRASES_IN)]
    ) = Field(
        description="Phrases describing the current step: a list, or one string whose phrases are separated "
        "by ';' or new lines. The first 8 are used."
    )
    entities: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=MAX_LIST)] = Field(
        default_factory=list, description="Libraries, tools, files or errors the step involves."
    )
    pinned_memory_ids: Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=MAX_LIST)] = Field(
        default_factory=list, description="Ids surfaced by the previous call; kept while still relevant."
    )
    project_root: str = Field(
        max_length=4096, description="Absolute path of the project (or a folder inside it) with a .codememory store."
    )
    max_memories: int = Field(8, ge=1, le=50, strict=True)
    max_new: int = Field(5, ge=1, le=50, strict=True)
    token_budget: int = Field(1500, ge=1, le=100_000, strict=True)
    session_id: str | None = Field(
        None, max_length=200, description="The agent's session: recorded with the injection for `codememory explain`."
    )
    source: str = Field("opencode", min_length=1, max_length=100, description="The calling tool, for the ledger.")

    @field_validator("query_expansion", mode="before")
    @classmethod
    def _string_or_strings(cls, value: Any) -> Any:
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise ValueError("must be a string or a list of strings")

    def phrases(self) -> list[str]:
        if isinstance(self.query_expansion, str):
            parts = self.query_expansion.replace("\n", ";").split(";")
        else:
            parts = self.query_expansion
        return [p.strip() for p in parts if p.strip()]


class RetrievedMemory(BaseModel):
    id: str
    text: str
    importance: float
    category: str
    why: dict[str, Any] = Field(description="How it was found: retriever, match, score, cosine, entities, pinned.")


class RetrieveResponse(BaseModel):
    memories: list[RetrievedMemory]
    tokens: int = Field(description="Estimated tokens of the memories' text (within token_budget).")
    degraded: bool = Field(description="True when retrieval ran with a partial failure (e.g. no embedding model).")
    degraded_reason: str | None
    project_root: str = Field(description="The project whose store answered.")


class EmbeddingHealth(BaseModel):
    provider: str
    loaded: bool
    available: bool | None


class HealthResponse(BaseModel):
    status: str
    version: str
    uptime_seconds: float
    projects_open: int
    llm: bool = Field(description="An LLM provider is configured (extraction can use it).")
    llm_provider: str
    embedding_model: bool = Field(description="An embedding model is loaded, or configured and not failed.")
    embedding: EmbeddingHealth
    capture_lag_seconds: float | None
    capture_last_run_at: str | None
    tasks_last_run_at: str | None
    last_error: str | None = Field(description="Latest background failure (secrets and paths removed).")
    last_error_at: str | None
    errors_total: int


class ErrorResponse(BaseModel):
    error: str


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse, "description": text}
    for code, text in [
        (400, "Invalid request (bad JSON, bad project_root, invalid values)"),
        (401, "Missing or wrong bearer token"),
        (403, "Cross-origin request, or a project not registered on this machine"),
        (404, "No codememory store for project_root"),
        (413, "Request body too large"),
        (415, "Body sent with a Content-Type other than JSON"),
        (421, "Host header is not this daemon's loopback address"),
        (422, "Request body does not match the schema"),
        (503, "Too many requests at once, or the store or the registry cannot be used"),
    ]
}


# --------------------------------------------------------------------------------------- middleware
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


class _Reject(Exception):
    """A refusal before the app runs. It closes the connection: the request's body is not read, so the
    connection could not carry another request anyway, and a refused client gets nothing to keep open."""

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

    def __init__(self, app: ASGIApp, state: DaemonState, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.app = app
        self.state = state
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
        counted = False
        try:
            headers = self._headers(scope)
            self._check_host(headers)
            self._check_origin(headers)
            if scope["path"] not in self.public_paths:
                self._check_token(headers)
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
        allowed = {f"{h}:{self.state.port}" for h in LOOPBACK_HOSTS}
        values = headers.get(b"host", [])
        host = values[0].decode("latin-1").strip().lower() if len(values) == 1 else ""
        if host not in allowed:
            raise _Reject(
                421,
                f"misdirected request: this server answers only to 127.0.0.1:{self.state.port} or "
                f"localhost:{self.state.port}",
                reason=f"Host header {host[:100]!r}" if host else "no single Host header",
            )

    def _check_origin(self, headers: dict[bytes, list[bytes]]) -> None:
        # Exact strings: scheme, name and port. Any other port on loopback is another program (a dev server
        # serving a page, say), not this daemon.
        own = {f"http://{h}:{self.state.port}".encode() for h in LOOPBACK_HOSTS}
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

    def _check_token(self, headers: dict[bytes, list[bytes]]) -> None:
        values = headers.get(b"authorization", [])
        given = b""
        if len(values) == 1:
            scheme, _, credentials = values[0].strip().partition(b" ")
            if scheme.lower() == b"bearer":
                given = credentials.strip()
        expected = self.state.token.encode("utf-8")
        if not given or not hmac.compare_digest(given, expected):
            raise _Reject(
                401,
                "missing or wrong bearer token (send the header 'Authorization: Bearer' followed by the "
                "contents of the file named token in codememory's state folder)",
                [(b"www-authenticate", b"Bearer")],
                reason="missing or wrong bearer token",
            )

    async def _read_body(self, headers: dict[bytes, list[bytes]], receive: Receive) -> bytes | None:
        limit = self.state.config.daemon.max_body_bytes
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
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > limit:
                raise too_large
            if not message.get("more_body", False):
                return bytes(body)

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
            self.state.health.record_error(exc, f"{scope.get('method')} {scope.get('path')}")
            if not started:
                await send_json(send, 500, {"error": "internal error (see the daemon log)"}, [])


# ------------------------------------------------------------------------------------------------ app
def _validation_message(exc: RequestValidationError) -> tuple[int, str, list[dict[str, Any]]]:
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        return 400, "request body is not valid JSON", []
    details = [
        {
            "loc": [scrub_message(x, limit=100) for x in e.get("loc", ())],  # a key of the body is input too
            "msg": scrub_message(e.get("msg", "")),
            "type": str(e.get("type", "")),
        }
        for e in errors
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(x for x in first["loc"] if x != "body")
    what = str(first["msg"]).removeprefix("Value error, ")
    if where == "" and first.get("type") == "model_attributes_type":
        what = "the body must be a JSON object"
    message = f"invalid request: {where + ': ' if where else ''}{what}"
    return 422, message, details


def create_app(state: DaemonState) -> FastAPI:
    """The HTTP app over a daemon's state. The caller binds it to 127.0.0.1:`state.port`."""
    from codememory.embedding.factory import serve_models_locally

    serve_models_locally()  # this process is the daemon: its stores embed with their own warm model
    app = FastAPI(
        title="codememory daemon",
        version=__version__,
        summary="Local memory for AI coding agents: the HTTP bridge on 127.0.0.1",
        description="Every endpoint except /health and /openapi.json needs `Authorization: Bearer <token>`; the "
        'token is in $XDG_STATE_HOME/codememory/token (mode 0600). Errors are JSON `{"error": "..."}`.',
        docs_url=None,  # the interactive pages load scripts from a CDN: a local tool serves the schema only
        redoc_url=None,
        openapi_url="/openapi.json",
        debug=False,
    )
    app.add_middleware(SecurityMiddleware, state=state)
    bearer = HTTPBearer(auto_error=False, description="The per-install token (the middleware enforces it).")

    def error(status: int, message: str, **extra: Any) -> JSONResponse:
        """Every error answer: its message may quote a request field, which may hold a secret."""
        return JSONResponse({"error": scrub_message(message), **extra}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        status, message, details = _validation_message(exc)
        return error(status, message, details=details) if details else error(status, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else "error"
        if message in ("Not Found", "Method Not Allowed"):
            message = message.lower()
        response = error(exc.status_code, message)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    handlers: list[tuple[type[Exception], int]] = [
        (InvalidInput, 400),
        (ProjectNotAllowed, 403),
        (RegistryError, 503),
        (StoreNotFound, 404),
        (NotFound, 404),
        (StoreUnusable, 503),
        (CodememoryError, 400),
    ]

    def _handler(status: int) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
        async def handle(_request: Request, exc: Exception) -> JSONResponse:
            if status >= 500:
                log.warning("%s", exc)
            return error(status, str(exc))

        return handle

    for exc_type, status in handlers:
        app.add_exception_handler(exc_type, _handler(status))

    async def _sqlite(_request: Request, exc: Exception) -> JSONResponse:
        log.error("store error: %s", exc)
        state.health.record_error(exc, "store")
        return error(503, f"the store could not be used: {exc}")

    app.add_exception_handler(sqlite3.Error, _sqlite)

    @app.get("/health", response_model=HealthResponse, tags=["daemon"])
    def health() -> dict[str, Any]:
        """Daemon status and dependency availability. Needs no token and reveals nothing private (no paths,
        no memory text, no token)."""
        return state.health_report()

    @app.post(
        "/retrieve",
        response_model=RetrieveResponse,
        responses=_ERRORS,
        tags=["memory"],
        dependencies=[Security(bearer)],
    )
    def retrieve(body: RetrieveBody) -> dict[str, Any]:
        """The few memories worth showing the agent for its current step, within a token budget, each with
        why it was chosen. `degraded` is true (with a reason) when part of retrieval failed, e.g. no
        embedding model: the results then come from keywords and entities alone. An answer with memories is
        recorded in the project's injection ledger (with `session_id` and `source`) for `codememory explain`."""
        root = state.project_root(body.project_root)
        with state.stores.use(root) as store:
            result = retrieve_for_step(
                store,
                body.phrases(),
                entities=body.entities,
                pinned=body.pinned_memory_ids,
                max_memories=body.max_memories,
                max_new=body.max_new,
                token_budget=body.token_budget,
                recorder=ledger(state, body.source, body.session_id),
            ).to_dict()
            semantic = store.semantic
            if semantic.configured:
                loaded = semantic.model is not None  # already tried by retrieval: no extra load
                state.health.note_embedding(loaded, loaded, store.config.embedding.provider)
        result["project_root"] = str(root)
        return result

    app.include_router(create_recall_router(state))
    app.include_router(create_raw_events_router(state))
    app.include_router(create_hook_router(state))
    app.include_router(create_embed_router())
    return app
