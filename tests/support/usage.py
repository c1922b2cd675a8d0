"""Turns recorded as every capture path records them, and the exposures they leave, for the use-signal tests
(capture/usage.py)."""

from __future__ import annotations

from typing import Any

from codememory.capture.daily_log import MEMORY_DIR, DailyLog
from codememory.capture.opencode import write_turn
from codememory.capture.turns import SessionInfo, ToolCall, Turn
from codememory.core.project import store_dir
from codememory.operations.explain import record_injection
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables

SESSION = "ses_use1"


def add(store: Store, text: str) -> str:
    return store.add(text, category="gotcha").memory.id


def shown(store: Store, *ids: str, at_query: str = "raise the photo limit to 25 MB", session: str = SESSION) -> None:
    memories = [{"id": i, "text": store.get(i, touch=False).text, "why": {}} for i in ids]
    record_injection(store, kind="hud", memories=memories, query=[at_query], session_id=session)


def call(tool: str, seq: int = 0, output: str = "", **args: Any) -> ToolCall:
    return ToolCall(tool, f"call_{seq}_{tool}", "completed", args, output, started_at=f"2099-01-01T00:00:0{seq}.000Z")


def turn(
    *calls: ToolCall,
    texts: tuple[str, ...] = (),
    session: str = SESSION,
    turn_id: str = "msg_1",
    user: str = "raise the photo limit",
) -> Turn:
    return Turn(
        "opencode",
        session,
        turn_id,
        1,
        "2099-01-01T00:00:00.000Z",
        "2099-01-01T00:00:09.000Z",
        user,
        assistant_texts=texts,
        tool_calls=calls,
        text_calls=(len(calls),) * len(texts),  # the texts come after the calls: the answer
    )


def capture(store: Store, t: Turn) -> None:
    """The turn recorded as every capture path records one."""
    info = SessionInfo("opencode", t.session_id, str(store.root), None, t.started_at, t.ended_at or t.started_at)
    log = DailyLog(store_dir(store.root) / MEMORY_DIR, root=store.root)
    assert write_turn(CaptureTables(store.db), log, info, t, "2099-01-01T00:00:10.000Z") is not None


def exposure(store: Store, memory_id: str, session: str = SESSION) -> dict[str, Any]:
    found = [e for e in store.db.session_exposures(session) if e.memory_id == memory_id]
    assert len(found) == 1
    return found[0].to_dict()
