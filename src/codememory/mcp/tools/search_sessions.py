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


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Search past coding sessions", annotations=READS)
    def search_sessions(
        query: Annotated[
            str,
            Field(
                description="What the session was about, in plain words; may name dates ('last week', 'in "
                "january', 'before march 15'), a tool ('cursor session') and file paths."
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=MAX_RESULTS, description="Maximum results (at most 5).")] = MAX_RESULTS,
        tool: Annotated[str | None, Field(description="Only sessions of this tool, e.g. claude-code.")] = None,
        scope: Annotated[
            Literal["project", "global"],
            Field(description="project: this project only; global: every project registered on this machine."),
        ] = "project",
    ) -> CallToolResult:
        """Find earlier coding sessions of this project to continue their work. Ranks sessions by
        weighted keywords (goal, decisions, todos, files, work done) and keeps only relevant ones.
        Read the file at markdown_path yourself to load a session (the content is not returned).
        scope="global" searches every project registered with `codememory init` (e.g. "how did we
        set up TEI in the other repo") and merges the results by score.

        Returns {results: [{rank, score, session_id, goal, date, tool, status, top_files,
        markdown_path, why}], query: {terms, paths, after, before, tool}}; results is empty when
        nothing is relevant enough. With scope="global" each result also has project (its root) and
        project_name, and projects: [{root, name, hits, error}] says which projects could not be read.
        """
        if scope == "global":
            from codememory.operations.global_search import search_sessions_all

            return result(search_sessions_all(query, limit=limit, tool=tool))
        return result(search_here(store(), query, limit=limit, tool=tool))
