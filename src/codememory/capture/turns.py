"""The shape every capture source produces and extraction consumes: sessions made of turns, a turn
being one user message with the assistant text and tool calls that answered it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call. `status` "error" means it failed: the tool reported an error (`error` says which), or a
    shell command exited with a non-zero status (`exit_code`), which the sources record apart from the tool's
    own status: OpenCode's bash part is "completed" with `metadata.exit` 1, Claude Code's tool_result has
    `is_error` and "Exit code 1", Codex's output says "Process exited with code 1"."""

    tool: str  # the assistant's tool name: "bash", "write", "edit", "read", "Write", ...
    call_id: str
    status: str  # "completed" | "error" | "pending" | "running"
    input: dict[str, Any] = field(default_factory=dict)
    output: str = ""  # the tool result text (may be long; compress before showing a model)
    error: str | None = None  # the tool's error message, when it gave one (not the exit status: `exit_code`)
    title: str | None = None  # a one-line human summary when the tool gives one
    exit_code: int | None = None  # a shell command's exit status, when the source records it
    started_at: str | None = None  # when the call started (canonical UTC ISO), when the source records it

    @property
    def failed(self) -> bool:
        return self.status == "error"


def shell_status(status: str, exit_code: int | None) -> str:
    """A finished call's status with its exit status taken into account: "error" when it exited non-zero."""
    return "error" if status == "completed" and exit_code not in (None, 0) else status


def exit_status(value: Any) -> int | None:
    """An exit status as recorded (an int; never a bool, which JSON sources may hold by mistake)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Turn:
    """One user message and everything that answered it, up to the next user message.

    `turn_id` is stable across re-reads (OpenCode: the user message id) and `seq` is its 1-based
    position in the session; together with the session id they form the capture key."""

    source: str  # "opencode" | "claude" | "codex" | "cursor" | "raw"
    session_id: str
    turn_id: str
    seq: int
    started_at: str  # canonical UTC ISO (codememory.core.dates.to_iso)
    ended_at: str | None
    user_text: str
    assistant_texts: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    files: tuple[str, ...] = ()  # paths written or patched in this turn (project-relative when inside it)
    completed: bool = True  # False while the assistant is still answering: not captured yet
    error: str | None = None  # why the assistant stopped early (aborted, provider error), if it did
    steps: int = 0  # model steps (request/response rounds) the assistant took to answer
    # for each assistant text, how many of the turn's tool calls came before it (what a text says about a tool's
    # result follows that call); empty when the source does not keep the order
    text_calls: tuple[int, ...] = ()

    def texts_after(self, call_index: int) -> tuple[str, ...]:
        """The assistant texts that came after the call at `call_index` and before the next call; () when the
        source does not keep the order."""
        if len(self.text_calls) != len(self.assistant_texts):
            return ()
        return tuple(t for t, n in zip(self.assistant_texts, self.text_calls, strict=True) if n == call_index + 1)

    @property
    def anchor(self) -> str:
        return f"<!-- session:{self.session_id} turn:{self.turn_id} -->"

    @property
    def memory_source(self) -> str:
        """The `source` of a memory extracted from this turn (parsed by model.session_position)."""
        return f"{self.source} session:{self.session_id} turn:{self.seq}"


@dataclass(frozen=True)
class Todo:
    """An item of the agent's own todo list (OpenCode's `todo` table, written by its `todowrite` tool)."""

    content: str
    status: str = "pending"  # pending | in_progress | completed | cancelled
    priority: str = "medium"  # high | medium | low
    position: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"content": self.content, "status": self.status, "priority": self.priority, "position": self.position}


@dataclass(frozen=True)
class SessionInfo:
    source: str
    session_id: str
    project_root: str  # OpenCode: project.worktree (never session.directory)
    title: str | None
    created_at: str
    updated_at: str  # last activity: what idle detection compares against
    message_count: int = 0
    parent_id: str | None = None  # OpenCode sub-agent sessions have a parent


def project_path(path: str, root: str | Path | None) -> str:
    """`path` relative to the project root when inside it (POSIX separators), else unchanged."""
    if not path or not root or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive (Windows)
        return path
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return path
    return Path(rel).as_posix()
