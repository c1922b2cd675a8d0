"""MCP tool search_sessions: earlier coding sessions of this project, or of every registered project
(codememory.operations.sessions, .global_search)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, StoreOf, result
from codememory.operations.sessions import search_sessions as search_here
from codememory.sessions.service import MAX_RESULTS

DESCRIPTION = "Find earlier coding sessions; to continue one, read the file at its markdown_path."
# At most MAX_RESULTS anyway; the query itself can name a tool ("the cursor session").
UNLISTED = ("limit", "tool")


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Search past coding sessions", description=DESCRIPTION, annotations=READS)
    def search_sessions(
        query: Annotated[
            str, Field(description="What the session was about; may name dates ('last week'), a tool, paths.")
        ],
        limit: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = MAX_RESULTS,
        tool: Annotated[str | None, Field(description="Only this coding tool's, e.g. cursor.")] = None,
        scope: Annotated[
            Literal["project", "global"], Field(description="global: every project on this machine.")
        ] = "project",
    ) -> CallToolResult:
        if scope == "global":
            from codememory.operations.global_search import search_sessions_all

            return result(search_sessions_all(query, limit=limit, tool=tool))
        return result(search_here(store(), query, limit=limit, tool=tool))
