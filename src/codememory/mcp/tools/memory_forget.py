"""MCP tool memory_forget: delete memories for good (codememory.operations.forget)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from codememory.mcp.tools.common import MemoryId, StoreOf, result
from codememory.operations.forget import forget


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(
        title="Forget memories",
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False),
    )
    def memory_forget(
        ids: Annotated[list[MemoryId], Field(min_length=1, max_length=100, description="Memory ids to delete.")],
    ) -> CallToolResult:
        """Delete memories for good (also scrubbed from the search indexes): ones that are wrong or
        were stored by mistake. When a memory was replaced by a newer truth, prefer memory_store with
        supersedes, which keeps the history.

        Returns {forgotten: [ids deleted], unknown: [ids that did not exist]}.
        """
        return result(forget(store(), ids))
