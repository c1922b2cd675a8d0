"""The session endpoints the OpenCode plugin's session tools call: `POST /sessions/checkpoint`, `/sessions/search`,
`/sessions/list` and `/sessions/files`, the MCP tools `checkpoint`, `search_sessions`, `list_sessions` and
`get_session_files` over HTTP, so OpenCode gets them from the plugin alone (one tool set: `codememory init` does not
register the MCP server for OpenCode).

Each body names the project (`project_root`, as for the recall endpoints) and takes the MCP tool's arguments with the
same limits; each answer is the same operation's result (codememory.operations.checkpoint, .sessions,
.global_search) as the MCP tool's JSON. Security is the server's middleware (bearer token, Host, Origin, size).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Security
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.daemon.recall_api import ProjectRoot
from codememory.daemon.state import DaemonState
from codememory.operations.checkpoint import checkpoint
from codememory.operations.sessions import list_sessions, search_sessions, session_files
from codememory.sessions.markdown import SESSION_ID_RE
from codememory.sessions.service import MAX_RESULTS
from codememory.web.request_body import RequestBody

SessionId = Annotated[str, Field(pattern=SESSION_ID_RE.pattern, description="YYYY-MM-DD_HH-MM_<tool>_<slug>")]
Bullets = Annotated[list[str] | None, Field(max_length=100)]
ToolName = Annotated[str, Field(min_length=1, max_length=100)]
Status = Literal["open", "frozen", "closed"]
DEFAULT_TOOL = "opencode"


class PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    header: str | None = None


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    title: str | None = None


class CheckpointBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    slug: str | None = None
    session_id: SessionId | None = None
    goal: str | None = None
    work_completed: Bullets = None
    work_pending: Bullets = None
    work_summary: Bullets = None
    decisions: Bullets = None
    plan_files: Annotated[list[PlanFile] | None, Field(max_length=50)] = None
    references: Annotated[list[Reference] | None, Field(max_length=50)] = None
    key_changes: str | None = None
    status: Status | None = None
    trigger: Literal["manual", "context_limit", "git_commit", "session_end"] | None = None
    tool: ToolName = Field(DEFAULT_TOOL, description="The coding tool, in the session file's name.")


class SearchSessionsBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    query: Annotated[str, Field(max_length=QUERY_MAX_CHARS)]
    limit: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = MAX_RESULTS
    tool: Annotated[str | None, Field(max_length=100)] = None
    scope: Literal["project", "global"] = "project"


class ListSessionsBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    tool: Annotated[str | None, Field(max_length=100)] = None
    status: Status | None = None


class SessionFilesBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    session_id: SessionId


def create_router(state: DaemonState) -> APIRouter:
    """The session endpoints over the daemon's open stores (include with `app.include_router`)."""
    bearer = HTTPBearer(auto_error=False, description="The per-install token (the middleware enforces it).")
    router = APIRouter(prefix="/sessions", tags=["sessions"], dependencies=[Security(bearer)])

    @router.post("/checkpoint")
    def save_checkpoint(body: CheckpointBody) -> dict[str, Any]:
        """Save or update a coding session and re-render its markdown file, as the MCP tool checkpoint:
        `{session_id, markdown_path, status, created, files_touched}`. Without `session_id` the open session of
        `tool` with `slug` is updated, else a new one is made (which needs a slug)."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            saved = checkpoint(
                store,
                tool=body.tool,
                session_id=body.session_id,
                slug=body.slug,
                goal=body.goal,
                work_completed=body.work_completed,
                work_pending=body.work_pending,
                work_summary=body.work_summary,
                decisions=body.decisions,
                plan_files=[p.model_dump() for p in body.plan_files] if body.plan_files is not None else None,
                references=[r.model_dump() for r in body.references] if body.references is not None else None,
                key_changes=body.key_changes,
                status=body.status,
                trigger=body.trigger,
                env={},  # the daemon's own environment names no assistant session
            )
        return saved.to_dict()

    @router.post("/search")
    def sessions_search(body: SearchSessionsBody) -> dict[str, Any]:
        """Earlier sessions ranked by weighted keywords, as the MCP tool search_sessions: `{results: [{rank, score,
        session_id, goal, date, tool, status, top_files, markdown_path, why}], query}`; scope "global" searches
        every registered project (and names each result's project)."""
        root = state.project_root(body.project_root)
        if body.scope == "global":
            from codememory.operations.global_search import search_sessions_all

            return search_sessions_all(body.query, limit=body.limit, tool=body.tool).to_dict()
        with state.stores.use(root) as store:
            return search_sessions(store, body.query, limit=body.limit, tool=body.tool).to_dict()

    @router.post("/list")
    def sessions_list(body: ListSessionsBody) -> dict[str, Any]:
        """Recent sessions, newest first, as the MCP tool list_sessions: `{sessions: [...]}`."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            return list_sessions(store, limit=body.limit, tool=body.tool, status=body.status).to_dict()

    @router.post("/files")
    def sessions_files(body: SessionFilesBody) -> dict[str, Any]:
        """The files a session touched, as the MCP tool get_session_files: `{session_id, files: [{path,
        change_type}]}`."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            return session_files(store, body.session_id).to_dict()

    return router
