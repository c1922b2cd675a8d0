"""MCP tool memory_get: full records by id, with links and entities (codememory.operations.get)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, MemoryId, StoreOf, result
from codememory.operations.get import get_records

DESCRIPTION = "Full memory records by id, with links and entities."


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Get memories by id", description=DESCRIPTION, annotations=READS)
    def memory_get(ids: Annotated[list[MemoryId], Field(min_length=1, max_length=20)]) -> CallToolResult:
        return result(get_records(store(), ids))
