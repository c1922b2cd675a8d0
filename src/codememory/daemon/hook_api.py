"""`POST /hook`: the hook entry point run inside the daemon, whose imports, config and embedding model are
already loaded. `codememory-hook` forwards the events an assistant waits on (session start and every
prompt: they retrieve memories to inject) here when the daemon runs, which saves the ~60 ms a fresh
process spends importing codememory; when the daemon is down or slow the hook runs in its own process.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from .. import hooks
from .request_body import RequestBody


class HookBody(RequestBody):
    model_config = ConfigDict(extra="forbid")

    assistant: Annotated[str, Field(max_length=20)]
    event: Annotated[str, Field(max_length=40)]
    payload: str = Field(description="The hook's stdin, as the assistant sent it (JSON text).")
    project: Annotated[str | None, Field(max_length=4096)] = None


class HookResult(BaseModel):
    output: str = Field(description="What the hook prints on stdout ('' for nothing).")


def create_router() -> APIRouter:
    router = APIRouter()

    @router.post("/hook", response_model=HookResult)
    def run_hook(body: HookBody) -> HookResult:
        """Run one hook exactly as `codememory-hook ASSISTANT EVENT` would (fail-open: errors are logged
        in the project's hooks.log and give no output)."""
        return HookResult(output=hooks.run(body.assistant, body.event, body.payload, body.project))

    return router
