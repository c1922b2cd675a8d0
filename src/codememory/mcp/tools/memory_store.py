"""MCP tool memory_store: save one durable piece of project knowledge (codememory.operations.store_memory)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from codememory.core.model import MAX_TEXT
from codememory.mcp.tools.common import CATEGORY_LIST, MemoryId, StoreOf, client_name, result
from codememory.operations.store_memory import store_memory


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(
        title="Store a memory",
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
        ),
    )
    def memory_store(
        text: Annotated[
            str,
            Field(description=f"One self-contained statement with its reason (at most {MAX_TEXT:,} characters)."),
        ],
        ctx: Context[ServerSession, None, Any],
        category: Annotated[str, Field(description=f"One of: {CATEGORY_LIST}.")] = "note",
        tags: Annotated[Sequence[str], Field(description="Short topic tags, e.g. ['http', 'deps'].")] = (),
        importance: Annotated[float, Field(ge=0, le=1, description="How much this matters, 0 to 1.")] = 0.5,
        expires: Annotated[
            str | None,
            Field(description="When it stops being true: ISO date or words ('in 2 weeks', 'next month')."),
        ] = None,
        supersedes: Annotated[
            Sequence[MemoryId],
            Field(description="Ids of memories this one replaces; they drop out of search."),
        ] = (),
    ) -> CallToolResult:
        """Save one durable piece of project knowledge for future sessions: a decision and its
        reason, a rejected alternative and why, a convention, a gotcha, a user preference, a fact or a
        todo. Write it to be read without this conversation (name the libraries, files and commands
        involved). Do not store secrets, passing state, or what the code and git history already say.

        Storing text (nearly) identical to a live memory returns that memory with created=false. When
        a memory is no longer true, store the new truth with supersedes=[old id].

        Returns {created, duplicate_of, duplicate_reason, embedded, links, memory}.
        """
        added = store_memory(
            store(),
            text,
            category=category,
            tags=list(tags),
            importance=importance,
            expires=expires,
            entered_by=client_name(ctx),
            supersedes=list(supersedes),
        )
        return result(added)
