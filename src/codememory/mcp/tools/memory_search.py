"""MCP tool memory_search: search this project's memory (codememory.operations.search)."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import CATEGORY_LIST, READS, DateText, StoreOf, result
from codememory.operations.search import recall_search


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Search project memory", annotations=READS)
    def memory_search(
        query: Annotated[str, Field(description="What to look for: words, a path, an identifier, an error name.")],
        limit: Annotated[int, Field(ge=1, le=50, description="Maximum results.")] = 5,
        category: Annotated[
            str | None, Field(description=f"Only this category (or several, comma-separated): {CATEGORY_LIST}.")
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Only memories with all these tags.")] = None,
        entity: Annotated[
            str | None, Field(description="Only memories mentioning this library, tool, file or error name.")
        ] = None,
        after: DateText = None,
        before: DateText = None,
        mode: Annotated[
            Literal["hybrid", "lexical", "semantic"],
            Field(description="hybrid: keywords and meaning; lexical: keywords only; semantic: meaning only."),
        ] = "hybrid",
    ) -> CallToolResult:
        """Search this project's memory: decisions, rejected alternatives, conventions, gotchas,
        preferences, facts and todos recorded by earlier sessions. Use it before choosing a library,
        pattern or approach the project may already have settled, when something looks surprising, or
        when the user refers to earlier work.

        Query syntax is grep-like and never fails: memories with all the plain words come first
        (stemmed; typos are tolerated), then those close in meaning or, with keywords only, those
        with some of the words, so a question works; `OR`, `NOT`, "exact phrase", prefix*, (groups)
        match strictly; paths and symbols are matched literally. Filters (category, tags, entity,
        after/before) narrow the results.

        Returns {results: [{id, text, category, importance, tags, created_at, source, match, score,
        why}], degraded, degraded_reason}, best first. match is exact, partial, semantic, context or
        fuzzy; why says what scored. degraded=true means meaning-based search is unavailable (reason
        given) and results come from keywords only. memory_get gives a memory's links and entities.
        """
        found = recall_search(
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
