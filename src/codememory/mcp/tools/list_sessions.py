"""MCP tool list_sessions: recent coding sessions, newest first (codememory.operations.sessions)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, StoreOf, result
from codememory.operations.sessions import list_sessions as list_recent

DESCRIPTION = "Recent coding sessions, newest first."
# Filters for scripts; an agent looking for one session asks search_sessions ("the cursor session last week").
UNLISTED = ("tool", "status")


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="List recent coding sessions", description=DESCRIPTION, annotations=READS)
    def list_sessions(
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        tool: Annotated[str | None, Field(description="Only this coding tool's, e.g. cursor.")] = None,
        status: Literal["open", "frozen", "closed"] | None = None,
    ) -> CallToolResult:
        return result(list_recent(store(), limit=limit, tool=tool, status=status))
