"""MCP tool memory_retrieve: the memories for the agent's current step (codememory.operations.retrieve)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, MemoryId, StoreOf, result
from codememory.operations.retrieve import retrieve

DESCRIPTION = (
    "The few memories that matter for the step you are about to take, within a token budget. Call it when starting "
    "a task or changing direction."
)
# The plugin's HUD keeps memories across calls with it; an agent calling the tool does not need it.
UNLISTED = ("pinned_memory_ids",)


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Memories for the current step", description=DESCRIPTION, annotations=READS)
    def memory_retrieve(
        query_expansion: Annotated[list[str], Field(max_length=8, description="1-8 short phrasings of the step.")],
        entities: Annotated[Sequence[str], Field(description="Libraries, tools, files or errors involved.")] = (),
        pinned_memory_ids: Annotated[
            Sequence[MemoryId], Field(description="Ids it returned last time (kept while relevant).")
        ] = (),
        max_memories: Annotated[int, Field(ge=1, le=50)] = 8,
    ) -> CallToolResult:
        found = retrieve(
            store(), query_expansion, entities=list(entities), pinned=list(pinned_memory_ids), max_memories=max_memories
        )
        return result(found)
