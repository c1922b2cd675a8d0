"""MCP tool memory_transcript: the captured turn(s) behind a memory, a daily-log anchor or a session
(codememory.operations.transcript)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, StoreOf, result
from codememory.operations.transcript import MAX_REFERENCE

DESCRIPTION = (
    "What was said and done in the captured turn behind a memory, a session (ses_...) or a daily-log anchor. Secrets "
    "removed."
)
# One turn of a session, and how many: for scripts; an agent reads a session from its first turns.
UNLISTED = ("turn", "max_turns")


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Transcript behind a memory", description=DESCRIPTION, annotations=READS)
    def memory_transcript(
        reference: Annotated[str, Field(min_length=1, max_length=MAX_REFERENCE)],
        turn: Annotated[int | str | None, Field(description="For a session: turn number (1 = first) or id.")] = None,
        max_turns: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> CallToolResult:
        from codememory.operations.transcript import transcript

        return result(transcript(store(), reference, turn=turn, max_turns=max_turns))
