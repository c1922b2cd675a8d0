"""Live capture over HTTP: `GET /api/raw-events/status` (the plugin's preflight) and `POST /api/raw-events`
(a batch of raw events from an assistant plugin).

A batch is written to the project store's `raw_events` queue in one transaction before the answer is sent,
so an accepted batch survives a crash of the daemon right after; `(source, event_id)` is unique, so a
replayed batch is a no-op (`accepted: 0, duplicates: n`). The flush worker (`tasks.RawEventFlusher`) then
turns the queued events into captured turns: right away in a background thread, and again on every poll
(the sweep also finds batches a killed daemon had accepted but not processed). Security (Host, Origin,
bearer token, body size) is the server's middleware: both paths need the token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Query, Security
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from codememory import __version__
from codememory.capture.opencode_turns import ms_to_iso
from codememory.core.dates import from_iso, now_iso, to_iso
from codememory.core.env_switches import capture_disabled
from codememory.daemon.state import DaemonState
from codememory.errors import InvalidInput
from codememory.store.raw_events import NewRawEvent, RawEventTables
from codememory.web.request_body import RequestBody

if TYPE_CHECKING:
    from codememory.daemon.tasks import RawEventFlusher

MAX_EVENTS = 500
Id = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:-]+$")]
ProjectRoot = Annotated[
    str, Field(max_length=4096, description="Absolute path of the project (or a folder inside it) with a store.")
]


class RawEventIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    event_id: Id = Field(description="The assistant's own id of the thing (OpenCode: message or part id).")
    session_id: Id
    kind: Literal["session", "user_prompt", "assistant_message", "tool_call"]
    at: Annotated[int, Field(ge=0, le=10**14)] | Annotated[str, Field(max_length=64)] = Field(
        description="When it happened: milliseconds since the epoch, or an ISO 8601 time."
    )
    payload: dict[str, Any] = Field(default_factory=dict, description="Kind-specific fields (see the docs).")


class RawBatch(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    source: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")] = "opencode"
    batch_id: Annotated[str | None, Field(max_length=200)] = None
    events: Annotated[list[RawEventIn], Field(max_length=MAX_EVENTS)]


class RawBatchResponse(BaseModel):
    batch_id: str | None
    received: int = Field(description="Events in the batch.")
    accepted: int = Field(description="Events stored now (durably, before this answer).")
    duplicates: int = Field(description="Events already stored (a replayed batch has only duplicates).")
    pending: int = Field(description="The project's events not yet turned into captured turns.")
    project_root: str


class RawStatusResponse(BaseModel):
    accepting: bool = Field(description="False when capture is turned off (CODEMEMORY_NO_CAPTURE).")
    version: str
    max_body_bytes: int
    max_events: int
    project_root: str | None = None
    counts: dict[str, int] | None = Field(None, description="total, pending, processed, failed (with project_root).")


def _iso(at: int | str) -> str:
    if isinstance(at, int):
        return ms_to_iso(at) or ""
    try:
        return to_iso(from_iso(at))
    except ValueError:
        raise InvalidInput(f"invalid time {at[:64]!r}: send milliseconds since the epoch or ISO 8601") from None


def flusher_of(state: DaemonState) -> RawEventFlusher:
    """The daemon's flush worker (one of its tasks); a new one when the daemon runs without it."""
    from codememory.daemon.tasks import (
        RawEventFlusher,  # the capture pipeline loads on first use (`mcp --http` never needs it)
    )

    for task in state.tasks:
        if isinstance(task, RawEventFlusher):
            return task
    made = RawEventFlusher()
    state.tasks.append(made)  # a daemon without tasks has no worker thread: `kick` still flushes
    return made


def create_router(state: DaemonState) -> APIRouter:
    bearer = HTTPBearer(auto_error=False, description="The per-install token (the middleware enforces it).")
    router = APIRouter(tags=["capture"], dependencies=[Security(bearer)])

    @router.get("/api/raw-events/status", response_model=RawStatusResponse)
    def raw_status(
        project_root: Annotated[str | None, Query(max_length=4096)] = None,
    ) -> dict[str, Any]:
        """Whether raw-event ingest is available (the plugin's preflight), its limits, and with `project_root`
        the project's queue counts (404 without a store). Also starts a flush of that project's queue."""
        out: dict[str, Any] = {
            "accepting": not capture_disabled(),
            "version": __version__,
            "max_body_bytes": state.config.daemon.max_body_bytes,
            "max_events": MAX_EVENTS,
        }
        if project_root is not None:
            root = state.project_root(project_root)
            with state.stores.use(root) as store:
                out["counts"] = RawEventTables(store.db).counts()
            out["project_root"] = str(root)
            if out["counts"]["pending"] and not capture_disabled():
                flusher_of(state).kick(state, root)
        return out

    @router.post("/api/raw-events", response_model=RawBatchResponse)
    def raw_events(body: RawBatch) -> dict[str, Any]:
        """Queue a batch of raw events (durably, before answering) for capture. Events already stored are
        skipped, so sending a batch again is harmless."""
        if capture_disabled():
            raise InvalidInput("capture is turned off in this daemon (CODEMEMORY_NO_CAPTURE)")
        root = state.project_root(body.project_root)
        events = [
            NewRawEvent(body.source, e.session_id, e.event_id, e.kind, _iso(e.at), e.payload) for e in body.events
        ]
        flusher = flusher_of(state)
        flusher.remember(root)
        with state.stores.use(root) as store:
            tables = RawEventTables(store.db)
            result = tables.accept(events, batch_id=body.batch_id, received_at=now_iso())
            pending = tables.pending_count()
        if pending:
            flusher.kick(state, root)
        return {
            "batch_id": body.batch_id,
            **result.to_dict(),
            "pending": pending,
            "project_root": str(root),
        }

    return router
