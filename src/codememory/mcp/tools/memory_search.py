"""MCP tool memory_search: search this project's memory (codememory.operations.search)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.core.bounded_input import require_query
from codememory.mcp.tools.common import READS, DateText, StoreOf, result
from codememory.operations.search import org_search, recall_search

DESCRIPTION = (
    "Search project memory (decisions, conventions, gotchas, todos) by words, paths or names; a question works. OR, "
    'NOT, "phrase", prefix* are strict.'
)
# Filters an agent seldom needs: accepted, not listed (the CLI's `search` has them all).
UNLISTED = ("tags", "entity", "after", "before", "mode")


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Search project memory", description=DESCRIPTION, annotations=READS)
    def memory_search(
        query: str,
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
        category: Annotated[str | None, Field(description="Only this category (comma-separate several).")] = None,
        tags: Annotated[list[str] | None, Field(description="Only memories with all these tags.")] = None,
        entity: Annotated[str | None, Field(description="Only memories naming this library, file or error.")] = None,
        after: DateText = None,
        before: DateText = None,
        mode: Literal["hybrid", "lexical", "semantic"] = "hybrid",
        scope: Annotated[
            Literal["project", "org"],
            Field(description='"org": also the organisation\'s shared memory (other projects), when configured.'),
        ] = "project",
    ) -> CallToolResult:
        require_query(query)
        search = org_search if scope == "org" else recall_search
        found = search(
            store(),
            query,
            limit=limit,
            mode=mode,
            category=category,
            tags=tags,
            entity=entity,
            after=after,
            before=before,
        )
        return result(found)
