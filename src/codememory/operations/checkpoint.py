"""`checkpoint` (the MCP tool): save or update a coding session's state and re-render its markdown file.

An agent's checkpoint without a session id goes into the session the assistant's hooks already opened for this
conversation, when there is one (Claude Code names its session to the MCP server it starts; for the others it is the
one session their hooks hold open in the project: `hook_session`), so one conversation is one session file; the hooks
add the files touched and close it at the end."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from codememory.operations.hook_journal import hook_session
from codememory.sessions.results import CheckpointResult

if TYPE_CHECKING:
    from codememory.service.project_store import Store


def checkpoint(
    store: Store,
    *,
    tool: str,
    session_id: str | None = None,
    slug: str | None = None,
    goal: str | None = None,
    work_completed: Sequence[str] | None = None,
    work_pending: Sequence[str] | None = None,
    work_summary: Sequence[str] | None = None,
    decisions: Sequence[str] | None = None,
    plan_files: Sequence[Mapping[str, Any]] | None = None,
    references: Sequence[Mapping[str, Any]] | None = None,
    key_changes: str | None = None,
    status: str | None = None,
    trigger: str | None = None,
    env: Mapping[str, str] = os.environ,
) -> CheckpointResult:
    """Create or update a session (see `Sessions.checkpoint`); `env` is the agent's environment, where its
    assistant may name the conversation (then the hooks' open session is the one updated, and `slug` is moot)."""
    if session_id is None:
        session_id = hook_session(store.root, env)
        slug = None if session_id else slug
    return store.checkpoint(
        tool=tool,
        session_id=session_id,
        slug=slug,
        goal=goal,
        work_completed=work_completed,
        work_pending=work_pending,
        work_summary=work_summary,
        decisions=decisions,
        plan_files=plan_files,
        references=references,
        key_changes=key_changes,
        status=status,
        trigger=trigger,
    )
