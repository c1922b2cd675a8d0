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


def register(server: FastMCP[None], store: StoreOf) -> None:
    @server.tool(title="Save a session checkpoint", annotations=WRITES)
    def checkpoint(
        ctx: Context[ServerSession, None, Any],
        slug: Annotated[
            str | None,
            Field(description="Session topic, at most 4 words hyphenated (e.g. 'tei-migration'); first checkpoint."),
        ] = None,
        session_id: Annotated[
            SessionId | None, Field(description="Update this session instead of finding it by tool and slug.")
        ] = None,
        goal: Annotated[
            str | None, Field(description="1-2 specific sentences: what is being built or fixed, and the target.")
        ] = None,
        work_completed: Annotated[
            Bullets, Field(description="Tasks finished since the last checkpoint (appended).")
        ] = None,
        work_pending: Annotated[
            Bullets, Field(description="The FULL current list of remaining tasks (replaces the previous list).")
        ] = None,
        work_summary: Annotated[
            Bullets, Field(description="What happened since the last checkpoint, as bullets (appended).")
        ] = None,
        decisions: Annotated[
            Bullets, Field(description="New decisions as '**Label:** Rationale. [Link](url)' (appended).")
        ] = None,
        plan_files: Annotated[
            list[PlanFile] | None, Field(max_length=50, description="Plan/design files written (appended).")
        ] = None,
        references: Annotated[
            list[Reference] | None, Field(max_length=50, description="URLs or documents consulted (appended).")
        ] = None,
        key_changes: Annotated[
            str | None, Field(description="One sentence on the key changes, shown under the git diff summary.")
        ] = None,
        status: Annotated[
            Literal["open", "frozen", "closed"] | None,
            Field(description="'frozen' when the context limit is hit, 'closed' at session end; omit otherwise."),
        ] = None,
        trigger: Annotated[
            Literal["manual", "context_limit", "git_commit", "session_end"] | None,
            Field(description="What prompted this checkpoint."),
        ] = None,
        tool: Annotated[
            str | None, Field(description="The coding tool (default: this MCP client's name, e.g. claude-code).")
        ] = None,
    ) -> CallToolResult:
        """Save or update this coding session's state for future sessions, and re-render its markdown
        file (.codememory/sessions/<YYYY-MM-DD_HH-MM>_<tool>_<slug>.md). Call it at about 70% context,
        before a git commit, when asked to save, and at the end of a task. Give only what is new:
        work_completed, work_summary, decisions, plan_files and references are appended; work_pending
        replaces the pending list. The first checkpoint needs a slug (and should give the goal); later
        ones find the open session by tool and slug, or take its session_id. Files touched and git SHAs
        are recorded from git. Paths must be inside the project.

        Returns {session_id, markdown_path, status, created, files_touched}.
        """
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
