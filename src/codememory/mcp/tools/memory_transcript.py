"""MCP tool memory_transcript: the captured turn(s) behind a memory, a daily-log anchor or a session
(codememory.operations.transcript)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import READS, StoreOf, result
from codememory.operations.transcript import TranscriptReference


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Transcript behind a memory", annotations=READS)
    def memory_transcript(
        reference: TranscriptReference,
        turn: Annotated[
            int | str | None,
            Field(description="With a session id only: one turn, by number (1 = first) or by turn id."),
        ] = None,
        max_turns: Annotated[int, Field(ge=1, le=50, description="Most turns returned for a session.")] = 10,
    ) -> CallToolResult:
        """What was actually said and done in the captured coding-session turn a memory came from:
        the user's request, the assistant's answers and its tool calls with their input and output.
        Use it when a memory (from memory_search, memory_get or memory_retrieve) is too terse to act
        on, or to read a turn named by an anchor in .codememory/memory/*.md. A session id gives its
        captured turns in order (at most max_turns; ask for others with turn).

        Secrets and <private> spans are removed. The transcript comes from the coding tool's own
        record when it is still there (origin "opencode"); otherwise from the turn's daily-log entry
        (origin "daily_log") or the summary kept at capture (origin "summary"), with fallback_reason.

        Returns {reference, kind (memory, anchor or session), memory_id, session_id, turns: [{source,
        session_id, turn_id, seq, started_at, ended_at, log_path, origin, fallback_reason,
        transcript}], turns_total, truncated}. A memory that did not come from a captured turn, or a
        reference nothing captured matches, is an error saying so.
        """
        from codememory.operations.transcript import transcript

        return result(transcript(store(), reference, turn=turn, max_turns=max_turns))
