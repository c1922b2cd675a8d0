"""MCP tool memory_retrieve: the memories for the agent's current step (codememory.operations.retrieve)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, MemoryId, StoreOf, result
from codememory.operations.retrieve import retrieve


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Memories for the current step", annotations=READS)
    def memory_retrieve(
        query_expansion: Annotated[
            list[str],
            Field(
                max_length=8,
                description="1 to 8 short phrases describing what you are about to do, in different wordings.",
            ),
        ],
        entities: Annotated[
            Sequence[str], Field(description="Libraries, tools, services, files or error names the step involves.")
        ] = (),
        pinned_memory_ids: Annotated[
            Sequence[MemoryId],
            Field(description="Ids this tool returned last time; kept while they are still relevant."),
        ] = (),
        max_memories: Annotated[int, Field(ge=1, le=50, description="Maximum memories returned.")] = 8,
    ) -> CallToolResult:
        """The few memories worth having in mind for your current step, within a token budget: call it
        when starting a task or changing direction. Give phrases describing the step (several wordings
        find more), the entities involved, and the ids surfaced last time so the still-relevant ones stay.

        Returns {memories: [{id, text, importance, category, why}], tokens, degraded, degraded_reason};
        why says how each was found (keywords, meaning, entity, pinned).
        """
        found = retrieve(
            store(), query_expansion, entities=list(entities), pinned=list(pinned_memory_ids), max_memories=max_memories
        )
        return result(found)
