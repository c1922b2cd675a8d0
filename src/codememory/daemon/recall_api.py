"""The recall endpoints the OpenCode plugin's tools call: `POST /memory/search`, `/memory/get`, `/memory/store`,
`/memory/transcript` and `/memory/recent` (the plugin's cold-start block).

Each body names the project (`project_root`, an absolute path inside a project with a store, as for
`/retrieve`). The results have the same shapes as the MCP tools of the same names (`codememory.mcp.server`),
so an agent reading either gets the same JSON. Security (Host, Origin, bearer token, body size) is the
server's middleware: every path here needs the token, exactly like `/retrieve`.

Each endpoint is a thin adapter over the operation the MCP tool calls (codememory.operations). What
`/memory/recent` (and the server's `/retrieve`) hand an agent is recorded in the project's injection ledger
(`codememory.operations.explain`, shown by `codememory explain`); recording never fails a request (`ledger`).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Security
from fastapi.security import HTTPBearer
from pydantic import ConfigDict, Field

from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.core.model import ID_RE, MAX_TEXT
from codememory.daemon.state import DaemonState
from codememory.operations.cold_start import recent
from codememory.operations.explain import Recorder
from codememory.operations.get import get_records
from codememory.operations.search import recall_search
from codememory.operations.store_memory import store_memory
from codememory.operations.transcript import TranscriptReference
from codememory.text.privacy import scrub
from codememory.web.request_body import RequestBody

log = logging.getLogger("codememory.daemon")

MemoryId = Annotated[str, Field(pattern=ID_RE.pattern, description="A memory id: mem_ followed by 8 hex digits.")]
ProjectRoot = Annotated[
    str, Field(max_length=4096, description="Absolute path of the project (or a folder inside it) with a store.")
]
DEFAULT_ENTERED_BY = "opencode"
DEFAULT_SOURCE = "opencode"
SessionIdField = Annotated[
    str | None, Field(max_length=200, description="The agent's session, recorded in the injection ledger.")
]
SourceField = Annotated[str, Field(min_length=1, max_length=100, description="The calling tool, for the ledger.")]


class SearchBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX_CHARS)]
    limit: Annotated[int, Field(ge=1, le=50)] = 5
    category: Annotated[str | None, Field(max_length=400)] = None
    tags: Annotated[list[Annotated[str, Field(max_length=100)]] | None, Field(max_length=20)] = None
    entity: Annotated[str | None, Field(max_length=200)] = None
    after: Annotated[str | None, Field(max_length=100)] = None
    before: Annotated[str | None, Field(max_length=100)] = None
    mode: Literal["hybrid", "lexical", "semantic"] = "hybrid"


class GetBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    ids: Annotated[list[MemoryId], Field(min_length=1, max_length=20)]


class StoreBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
    category: Annotated[str, Field(max_length=40)] = "note"
    tags: Annotated[list[Annotated[str, Field(max_length=100)]], Field(max_length=20)] = Field(default_factory=list)
    importance: Annotated[float, Field(ge=0, le=1)] = 0.5
    expires: Annotated[str | None, Field(max_length=100)] = None
    supersedes: Annotated[list[MemoryId], Field(max_length=20)] = Field(default_factory=list)
    entered_by: Annotated[str, Field(min_length=1, max_length=100)] = DEFAULT_ENTERED_BY


class RecentBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    limit: Annotated[int, Field(ge=1, le=50)] = 8
    token_budget: Annotated[int, Field(ge=1, le=20_000)] = 400
    session_id: SessionIdField = None
    source: SourceField = DEFAULT_SOURCE


class TranscriptBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    reference: TranscriptReference
    turn: Annotated[
        int | Annotated[str, Field(max_length=200)] | None,
        Field(description="With a session id only: one turn, by number (1 = first) or by turn id."),
    ] = None
    max_turns: Annotated[int, Field(ge=1, le=50, description="Most turns returned for a session.")] = 10


def ledger(state: DaemonState, source: str, session_id: str | None) -> Recorder:
    """The injection ledger for what a request hands `source`'s session: a failure to record is logged and shown
    on /health, and the request it belongs to goes on."""

    def failed(exc: Exception) -> None:
        log.warning("could not record an injection in the ledger: %s", scrub(str(exc)))
        state.health.record_error(exc, "injection ledger")

    return Recorder(source, session_id, failed)


def create_router(state: DaemonState) -> APIRouter:
    """The recall endpoints over the daemon's open stores (include with `app.include_router`)."""
    bearer = HTTPBearer(auto_error=False, description="The per-install token (the middleware enforces it).")
    router = APIRouter(prefix="/memory", tags=["memory"], dependencies=[Security(bearer)])

    @router.post("/search")
    def memory_search(body: SearchBody) -> dict[str, Any]:
        """Search the project's memory with the grep-like syntax: the MCP tool memory_search's result,
        `{results: [{id, text, category, importance, tags, created_at, source, match, score, why}], degraded,
        degraded_reason, held_back}` (and `note` when nothing is returned), best first."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            found = recall_search(
                store,
                body.query,
                limit=body.limit,
                mode=body.mode,
                category=body.category,
                tags=body.tags,
                entity=body.entity,
                after=body.after,
                before=body.before,
            )
        return found.to_dict()

    @router.post("/get")
    def memory_get(body: GetBody) -> dict[str, Any]:
        """Full records with links and entities, as the MCP tool memory_get: `{memories, missing}`."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            return get_records(store, body.ids).to_dict()

    @router.post("/store")
    def memory_store(body: StoreBody) -> dict[str, Any]:
        """Store one memory, as the MCP tool memory_store: `{created, duplicate_of, duplicate_reason, embedded,
        links, memory}` (a near-identical live memory is returned with created=false)."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            added = store_memory(
                store,
                body.text,
                category=body.category,
                tags=body.tags,
                importance=body.importance,
                expires=body.expires,
                entered_by=body.entered_by,
                supersedes=body.supersedes,
                by_agent=True,  # the plugin's tool
            )
        return added.to_dict()

    @router.post("/transcript")
    def memory_transcript(body: TranscriptBody) -> dict[str, Any]:
        """What was said and done in the captured turn(s) behind a memory id, a daily-log anchor or a session
        id, as the MCP tool memory_transcript: `{reference, kind, memory_id, session_id, turns: [{source,
        session_id, turn_id, seq, started_at, ended_at, log_path, origin, fallback_reason, transcript}],
        turns_total, truncated}`. A malformed reference is a 400, one nothing captured matches a 404."""
        from codememory.operations.transcript import transcript

        with state.stores.use(state.project_root(body.project_root)) as store:
            return transcript(store, body.reference, turn=body.turn, max_turns=body.max_turns).to_dict()

    @router.post("/recent")
    def memory_recent(body: RecentBody) -> dict[str, Any]:
        """For a session's cold start: the most important live memories, then the most recent ones, without
        duplicates, within `token_budget` (estimated like /retrieve). `{memories: [{id, text, category,
        importance, created_at}], tokens, total}`; `total` counts every live memory of the project. A non-empty
        answer is recorded in the injection ledger (kind "cold_start", with `session_id` and `source`)."""
        with state.stores.use(state.project_root(body.project_root)) as store:
            chosen = recent(
                store,
                limit=body.limit,
                token_budget=body.token_budget,
                recorder=ledger(state, body.source, body.session_id),
            )
        return chosen.to_dict()

    return router
