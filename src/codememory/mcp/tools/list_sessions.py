"""MCP tool list_sessions: recent coding sessions, newest first (codememory.operations.sessions)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, StoreOf, result
from codememory.operations.sessions import list_sessions as list_recent


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="List recent coding sessions", annotations=READS)
    def list_sessions(
        limit: Annotated[int, Field(ge=1, le=100, description="Maximum sessions.")] = 10,
        tool: Annotated[str | None, Field(description="Only sessions of this tool, e.g. cursor.")] = None,
        status: Annotated[Literal["open", "frozen", "closed"] | None, Field(description="Only this status.")] = None,
    ) -> CallToolResult:
        """Recent coding sessions of this project, newest first, to browse rather than search (or to
        find the session_id of the session to continue).

        Returns {sessions: [{session_id, goal, date, started_at, updated_at, tool, status,
        markdown_path}]}.
        """
        return result(list_recent(store(), limit=limit, tool=tool, status=status))
