"""MCP tool memory_forget: delete memories for good (codememory.operations.forget)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from codememory.mcp.tools.common import MemoryId, StoreOf, result
from codememory.operations.forget import forget

DESCRIPTION = "Delete wrong memories for good (to replace one, memory_store with supersedes)."


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(
        title="Forget memories",
        description=DESCRIPTION,
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False),
    )
    def memory_forget(ids: Annotated[list[MemoryId], Field(min_length=1, max_length=100)]) -> CallToolResult:
        return result(forget(store(), ids))
