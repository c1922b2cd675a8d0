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
    "The few memories that matter for your next step, within a token budget: call it when starting a task or "
    "changing direction."
)
# Pinned ids keep the plugin's HUD steady across calls, and the default number of memories fits a step: an agent
# calling the tool needs neither.
UNLISTED = ("pinned_memory_ids", "max_memories")


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
