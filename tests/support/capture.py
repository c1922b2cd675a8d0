"""Captured turns without a coding tool: what a capture pass records, written by hand."""

from __future__ import annotations

from pathlib import Path

from codememory.capture.daily_log import MEMORY_DIR, DailyLog
from codememory.capture.turns import ToolCall, Turn
from codememory.core.project import store_dir
from codememory.service.project_store import Store
from codememory.store.capture import CapturedTurn, CaptureTables


def capture_by_hand(root: Path, source: str, session: str, texts: list[str]) -> list[Turn]:
    """What a capture pass of any source does: append each turn (one per text, a Bash tool call each) to the
    daily log and record it in the store."""
    turns = [
        Turn(
            source=source,
            session_id=session,
            turn_id=f"t{seq}",
            seq=seq,
            started_at=f"2026-11-20T10:0{seq}:00Z",
            ended_at=f"2026-11-20T10:0{seq}:30Z",
            user_text=text,
            assistant_texts=(f"answer {seq}",),
            tool_calls=(ToolCall("Bash", f"c{seq}", "completed", {"command": "make test"}),),
        )
        for seq, text in enumerate(texts, start=1)
    ]
    log = DailyLog(store_dir(root) / MEMORY_DIR, root=root)
    with Store.open(root) as store:
        tables = CaptureTables(store.db)
        for turn in turns:
            written = log.append(turn)
            row = CapturedTurn(
                source=source,
                session_id=session,
                turn_id=turn.turn_id,
                seq=turn.seq,
                started_at=turn.started_at,
                ended_at=turn.ended_at,
                log_path=written.path.relative_to(store_dir(root)).as_posix(),
                summary=written.summary,
                captured_at=turn.ended_at or "",
            )
            assert tables.record_turn(row)
    return turns
