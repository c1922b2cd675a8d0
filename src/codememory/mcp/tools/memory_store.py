"""MCP tool memory_store: save one durable piece of project knowledge (codememory.operations.store_memory)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from codememory.mcp.tools.common import CATEGORY_LIST, MemoryId, StoreOf, client_name, result
from codememory.operations.store_memory import store_memory

DESCRIPTION = (
    "Save one durable fact for future sessions (a decision and why, a convention, a gotcha, a todo); self-contained, "
    "never secrets."
)
# A fact that stops being true on a date is rare in a session (`codememory store --expires`): accepted, not listed.
UNLISTED = ("expires",)


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(
        title="Store a memory",
        description=DESCRIPTION,
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
        ),
    )
    def memory_store(
        text: str,
        ctx: Context[ServerSession, None, Any],
        category: Annotated[str, Field(description=f"One of: {CATEGORY_LIST}.")] = "note",
        tags: Sequence[str] = (),
        importance: Annotated[float, Field(ge=0, le=1)] = 0.5,
        expires: Annotated[str | None, Field(description="When it stops being true ('in 2 weeks', a date).")] = None,
        supersedes: Annotated[Sequence[MemoryId], Field(description="Ids of memories it replaces.")] = (),
    ) -> CallToolResult:
        added = store_memory(
            store(),
            text,
            category=category,
            tags=list(tags),
            importance=importance,
            expires=expires,
            entered_by=client_name(ctx),
            supersedes=list(supersedes),
            by_agent=True,
        )
        return result(added)
