"""MCP tool get_session_files: the files a coding session touched (codememory.operations.sessions)."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult

from codememory.mcp.tools.common import READS, SessionId, StoreOf, result
from codememory.operations.sessions import session_files

DESCRIPTION = "Files a coding session created, modified or deleted."


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Files a session touched", description=DESCRIPTION, annotations=READS)
    def get_session_files(session_id: SessionId) -> CallToolResult:
        return result(session_files(store(), session_id))
