"""MCP tool memory_get: full records by id, with links and entities (codememory.operations.get)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, MemoryId, StoreOf, result
from codememory.operations.get import get_records


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Get memories by id", annotations=READS)
    def memory_get(
        ids: Annotated[list[MemoryId], Field(min_length=1, max_length=20, description="Memory ids (1 to 20).")],
    ) -> CallToolResult:
        """Full records of memories whose ids you have (from memory_search or memory_retrieve): every
        field (entered_by, updated_at, expires_at, access_count, superseded_by, ...), plus links to
        related memories (direction, id, type: supersedes, refines, conflicts, corroborates,
        contextualizes) and the entities mentioned (libraries, tools, files, error names).

        Returns {memories: [record + links + entities], missing: [ids that do not exist]}.
        """
        return result(get_records(store(), ids))
