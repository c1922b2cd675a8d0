"""The daemon's HTTP bridge (FastAPI): `GET /health`, `POST /retrieve`, the web viewer (`/`, viewer_pages.py,
viewer_api.py) and the OpenAPI schema.

Security runs first, as ASGI middleware in front of the routing (`web.security`: Host, Origin, the bearer token
on everything except /health and /openapi.json, requests at once, body size). Every endpoint that names a
project opens it only when it is registered on this machine (`project_access`, else 403).

Every error is JSON `{"error": "..."}`; a failure inside a handler is logged (scrubbed) and answered with
a 500 that carries no traceback.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from codememory import __version__
from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.daemon.cli_api import create_router as create_cli_router
from codememory.daemon.embed_api import create_router as create_embed_router
from codememory.daemon.hook_api import create_router as create_hook_router
from codememory.daemon.raw_events_api import create_router as create_raw_events_router
from codememory.daemon.recall_api import create_router as create_recall_router
from codememory.daemon.recall_api import ledger
from codememory.daemon.sessions_api import create_router as create_sessions_router
from codememory.daemon.state import DaemonState
from codememory.daemon.viewer_api import create_router as create_viewer_router
from codememory.daemon.viewer_pages import PAGE_PATHS, SESSION_PATHS, SESSION_PREFIXES, STATIC_PREFIX
from codememory.daemon.viewer_pages import create_router as create_viewer_pages
from codememory.errors import CodememoryError, StoreFailed, http_status
from codememory.operations.retrieve import retrieve as retrieve_for_step
from codememory.retrieval.proactive import DEFAULT_MAX_MEMORIES, DEFAULT_MAX_NEW
from codememory.retrieval.step import step_from_call
from codememory.text.privacy import scrub_message
from codememory.web.request_body import RequestBody
from codememory.web.security import Guard, SecurityMiddleware
from codememory.web.viewer_session import ViewerSessions

log = logging.getLogger("codememory.daemon")

MAX_PHRASES_IN = 32
MAX_LIST = 64
MAX_EXCLUDE = 256
MAX_TEXT = QUERY_MAX_CHARS  # one phrase (the string form holds several, each checked when it is split)


# ------------------------------------------------------------------------------------------- models
class StepCall(BaseModel):
    """The agent's latest tool call of the current request (the one whose result the model reads next)."""

    model_config = ConfigDict(extra="ignore")

    tool: Annotated[str, BeforeValidator(lambda v: v[:100] if isinstance(v, str) else v)] = Field(
        min_length=1, max_length=100, description="The tool's name: read, edit, bash, grep, … (cut to 100 characters)"
    )
    args: Annotated[
        dict[Annotated[str, Field(max_length=100)], Annotated[str, Field(max_length=2000)]], Field(max_length=20)
    ] = Field(default_factory=dict, description="Its key arguments: filePath, path, pattern, command, …")
    error: bool = Field(False, description="The call failed.")


class RetrieveBody(RequestBody):
    """A proactive-retrieval request (the OpenCode plugin sends one per LLM call)."""

    model_config = ConfigDict(extra="ignore")

    query_expansion: (
        Annotated[str, Field(max_length=MAX_TEXT * 4)]
        | Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_PHRASES_IN)]
    ) = Field(
        description="Phrases describing the current step: a list, or one string whose phrases are separated "
        "by ';' or new lines. The first 8 are used; the request's (request_phrases) weigh most."
    )
    entities: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=MAX_LIST)] = Field(
        default_factory=list, description="Libraries, tools, files or errors the step involves."
    )
    pinned_memory_ids: Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=MAX_LIST)] = Field(
        default_factory=list,
        description="Ids surfaced by the previous call; each kept while this query still scores it at least "
        "[context] pinned_min_score.",
    )
    exclude_memory_ids: Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=MAX_EXCLUDE)] = Field(
        default_factory=list,
        description="Ids the agent's context already carries (cold start, tool results): never returned.",
    )
    project_root: str = Field(
        max_length=4096, description="Absolute path of the project (or a folder inside it) with a .codememory store."
    )
    max_memories: int = Field(DEFAULT_MAX_MEMORIES, ge=1, le=50, strict=True)
    max_new: int = Field(DEFAULT_MAX_NEW, ge=1, le=50, strict=True)
    token_budget: int = Field(1500, ge=1, le=100_000, strict=True)
    session_id: str | None = Field(
        None, max_length=200, description="The agent's session: recorded with the injection for `codememory explain`."
    )
    source: str = Field("opencode", min_length=1, max_length=100, description="The calling tool, for the ledger.")
    request_phrases: int = Field(
        1,
        ge=0,
        le=MAX_PHRASES_IN,
        strict=True,
        description="How many leading phrases are the user's request (a long request comes as two); the rest are "
        "the tool calls'. 0: the user's text is empty, every phrase is a tool call's.",
    )
    step: StepCall | None = Field(
        None,
        description="The latest tool call since the request: the step is judged on what it touches (its file, "
        "folder or command) as well, and after a routine call (ls, git status, running the tests) what only the "
        "tool calls' words found is left out.",
    )
    request_carried: bool = Field(
        False,
        description="The turn's first answer (the request's memories) stays in the agent's context for the whole "
        "turn: a call with a step then gets only what that step brings (a memory about the file it touched or the "
        "command it ran), never the request's memories again.",
    )
    remote: bool = Field(
        False,
        description="Also ask the organisation's shared memory ([remote] Milvus) with the request; its memories "
        'come after the project\'s, with origin "remote:<project>".',
    )

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
    why: dict[str, Any] = Field(
        description="How it was found: retriever, match, score (rank), bm25, cosine, fused, words, entities, pinned."
    )
    origin: str = Field(
        "local",
        description='Where it came from: "local" (written on this machine), "git" (pulled), "committed" (found in a '
        'committed memory.db), "import", or "remote:<project>" for the organisation\'s memory.',
    )
    provenance: str = Field(
        "", description='The same in a few words, as blocks show it: "from git, by alice@example.com".'
    )


class RetrieveResponse(BaseModel):
    memories: list[RetrievedMemory]
    tokens: int = Field(description="Estimated tokens of the memories' text (within token_budget).")
    degraded: bool = Field(description="True when retrieval ran with a partial failure (e.g. no embedding model).")
    degraded_reason: str | None
    project_root: str = Field(description="The project whose store answered.")
    remote: dict[str, Any] | None = Field(
        None, description="With remote: true, how the organisation's memory answered (ok, hits, error)."
    )
    call_budget_tokens: int = Field(
        description="The project's [context] call_budget_tokens: codememory's share of one LLM call."
    )


class EmbeddingHealth(BaseModel):
    provider: str
    loaded: bool
    available: bool | None
    queries_embedded: int = Field(0, description="Query phrases handed to a model since the daemon started.")
    queries_reused: int = Field(0, description="Query phrases answered from vectors already computed.")


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
    from codememory.remote.milvus import reuse_connections

    serve_models_locally()  # this process is the daemon: its stores embed with their own warm model
    reuse_connections()  # and search the organisation's Milvus through one kept connection
    app = FastAPI(
        title="codememory daemon",
        version=__version__,
        summary="Local memory for AI coding agents: the HTTP bridge on 127.0.0.1",
        description="Every endpoint except /health, /openapi.json and the web viewer's page, files and /login needs "
        "`Authorization: Bearer <token>`; the token is in $XDG_STATE_HOME/codememory/token (mode 0600). The web "
        "viewer (`codememory viewer`) logs a browser in through a one-time link instead: its session cookie "
        "(HttpOnly, SameSite=Strict) stands for the token on the /viewer/ endpoints, /memory/transcript, "
        "/sessions/list and /sessions/search only, and every request with it, GET included, also needs the "
        "session's token in `X-CSRF-Token` (handed out once, in the login redirect's URL fragment). Every answer "
        "carries a strict Content-Security-Policy. "
        'Errors are JSON `{"error": "..."}`.',
        docs_url=None,  # the interactive pages load scripts from a CDN: a local tool serves the schema only
        redoc_url=None,
        openapi_url="/openapi.json",
        debug=False,
    )
    sessions = ViewerSessions()
    guard = Guard(
        port=state.port,
        token=state.token,
        max_body_bytes=state.config.daemon.max_body_bytes,
        body_timeout=state.config.daemon.body_timeout,
        record_error=state.health.record_error,
        sessions=sessions,
        public_prefixes=(STATIC_PREFIX,),
        public_paths=PAGE_PATHS,
        session_prefixes=SESSION_PREFIXES,
        session_paths=SESSION_PATHS,
    )
    app.add_middleware(SecurityMiddleware, guard=guard)
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

    @app.exception_handler(CodememoryError)
    async def _codememory(_request: Request, exc: CodememoryError) -> JSONResponse:
        status = http_status(exc)
        if isinstance(exc, StoreFailed):  # SQLite refused a statement: a bug, kept for /health
            log.error("store error: %s", exc.__cause__ or exc)
            state.health.record_error(exc.__cause__ or exc, "store")
        elif status >= 500:
            log.warning("%s", exc)
        return error(status, str(exc))

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
                exclude=body.exclude_memory_ids,
                recorder=ledger(state, body.source, body.session_id),
                remote=body.remote,
                step=None if body.step is None else step_from_call(**body.step.model_dump(), root=str(root)),
                request_phrases=body.request_phrases,
                request_carried=body.request_carried,
            ).to_dict()
            result["call_budget_tokens"] = store.config.context.call_budget_tokens
            semantic = store.semantic
            if semantic.configured:
                loaded = semantic.model is not None  # already tried by retrieval: no extra load
                state.health.note_embedding(loaded, loaded, store.config.embedding.provider)
        result["project_root"] = str(root)
        return result

    app.include_router(create_recall_router(state))
    app.include_router(create_sessions_router(state))
    app.include_router(create_raw_events_router(state))
    app.include_router(create_hook_router(state))
    app.include_router(create_embed_router())
    app.include_router(create_cli_router(state))
    app.include_router(create_viewer_pages(state, sessions))
    app.include_router(create_viewer_router(state))
    return app
