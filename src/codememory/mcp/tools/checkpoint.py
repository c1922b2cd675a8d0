"""MCP tool checkpoint: save or update this coding session (codememory.operations.checkpoint)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import CallToolResult
from pydantic import Field

from codememory.mcp.tools.common import (
    WRITES,
    Bullets,
    PlanFile,
    Reference,
    SessionId,
    StoreOf,
    client_name,
    result,
)
from codememory.operations.checkpoint import checkpoint as save_checkpoint

DESCRIPTION = (
    "Save this coding session to .codememory/sessions/ (at ~70% context, before a commit, at a task's end). Lists "
    "are appended; work_pending replaces. The first call needs a slug."
)
# Accepted, not listed: bookkeeping an agent need not think about, and sections the listed ones cover (links go in
# decisions, what happened in work_completed).
UNLISTED = ("tool", "trigger", "key_changes", "work_summary", "references")


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Save a session checkpoint", description=DESCRIPTION, annotations=WRITES)
    def checkpoint(
        ctx: Context[ServerSession, None, Any],
        slug: Annotated[str | None, Field(description="2-4 hyphenated words.")] = None,
        session_id: Annotated[SessionId | None, Field(description="Default: this conversation's.")] = None,
        goal: Annotated[str | None, Field(description="What is built or fixed, and the target.")] = None,
        work_completed: Bullets = None,
        work_pending: Annotated[Bullets, Field(description="Every task still to do.")] = None,
        work_summary: Bullets = None,
        decisions: Annotated[Bullets, Field(description="'**Label:** Rationale.' each.")] = None,
        plan_files: Annotated[list[PlanFile] | None, Field(max_length=50)] = None,
        references: Annotated[list[Reference] | None, Field(max_length=50)] = None,
        key_changes: Annotated[str | None, Field(description="One sentence.")] = None,
        status: Annotated[
            Literal["open", "frozen", "closed"] | None,
            Field(description="frozen at the context limit, closed at the end."),
        ] = None,
        trigger: Literal["manual", "context_limit", "git_commit", "session_end"] | None = None,
        tool: Annotated[str | None, Field(description="Default: this client's name.")] = None,
    ) -> CallToolResult:
        # Without a session_id, the session the assistant's hooks opened for this conversation (if any) is the
        # one written: one conversation is one session file (codememory.operations.checkpoint).
        saved = save_checkpoint(
            store(),
            tool=tool or client_name(ctx),
            session_id=session_id,
            slug=slug,
            goal=goal,
            work_completed=work_completed,
            work_pending=work_pending,
            work_summary=work_summary,
            decisions=decisions,
            plan_files=[p.model_dump() for p in plan_files] if plan_files is not None else None,
            references=[r.model_dump() for r in references] if references is not None else None,
            key_changes=key_changes,
            status=status,
            trigger=trigger,
        )
        return result(saved)
