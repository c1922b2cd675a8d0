"""Turns, tool calls and store queries shared by the extraction tests (with and without a model)."""

from __future__ import annotations

from typing import Any

from codememory.capture.turns import SessionInfo, ToolCall, Turn
from codememory.service.project_store import Store

ROOT = "/home/dev/shop"
SESSION = SessionInfo(
    source="opencode",
    session_id="ses_shop1",
    project_root=ROOT,
    title="Add a shopping cart",
    created_at="2026-11-20T10:00:00.000Z",
    updated_at="2026-11-20T11:00:00.000Z",
)


def bash(command: str, output: str = "", status: str = "completed", call_id: str = "call") -> ToolCall:
    return ToolCall("bash", call_id, status, {"command": command, "description": "run"}, output)


def edit(path: str) -> ToolCall:
    return ToolCall("edit", "e", "completed", {"filePath": f"{ROOT}/{path}", "oldString": "a", "newString": "b"}, "ok")


def turn(
    seq: int,
    user: str,
    assistant: tuple[str, ...] = (),
    tools: tuple[ToolCall, ...] = (),
    files: tuple[str, ...] = (),
    *,
    session_id: str = "ses_shop1",
    completed: bool = True,
) -> Turn:
    return Turn(
        source="opencode",
        session_id=session_id,
        turn_id=f"msg_{seq:03d}",
        seq=seq,
        started_at=f"2026-11-20T10:{seq:02d}:00.000Z",
        ended_at=f"2026-11-20T10:{seq:02d}:30.000Z",
        user_text=user,
        assistant_texts=assistant,
        tool_calls=tools,
        files=files,
        completed=completed,
    )


def stored_memories(store: Store) -> list[dict[str, Any]]:
    """Every memory of the store, oldest first, as `to_dict()`."""
    return [m.to_dict() for m in store.list(limit=200, sort="created", order="asc")]


def extraction_rows(store: Store) -> list[tuple[Any, ...]]:
    """(first_seq, last_seq, method, status, memory_count) of each extraction span, in order."""
    return store.db.conn.execute(
        "SELECT first_seq, last_seq, method, status, memory_count FROM extractions ORDER BY id"
    ).fetchall()
