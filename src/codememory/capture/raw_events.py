"""Live capture: raw events streamed by the OpenCode plugin (queued in the store's `raw_events` by
`POST /api/raw-events`) become captured turns through the same pipeline as the database poller
(`opencode_capture.capture_turn`: the daily log entry, then `captured_turns`, under the project's capture
lock).

Event kinds and payloads (ids are OpenCode's own, so an event is the same whichever path sees it):

| kind | event_id | at | payload |
|---|---|---|---|
| `session` | session id | created | `{title, parent_id}` |
| `user_prompt` | user message id | created | `{text, compaction}` (text without synthetic parts) |
| `assistant_message` | assistant message id | created | `{parent_id, completed, finish, error, mode, agent,` |
| | | | `summary, texts, steps, files}` |
| `tool_call` | tool part id | start | `{message_id, tool, call_id, status, input, output, error, title, exit}` |

The plugin sends a message once it is settled (an assistant message once completed, a tool call once it has
its result), so the first copy stored is the final one.

Turns are rebuilt as `OpenCodeDB` builds them: a user prompt starts a turn (turn id = its message id);
assistant messages join the turn of their `parent_id` (an answer to a prompt not streamed waits for it, and is
dropped when the session goes idle: the poller captures that turn); tool calls join their message's turn;
compaction turns are not turns. A turn is complete by the poller's rule: its last assistant message ended with
an error or a finish reason other than "tool-calls"/"unknown", or a later prompt has superseded it. Turns are
captured in order, stopping at the first incomplete one; once the session has been quiet for
`[capture] idle_after`, an incomplete turn is captured marked as stopped (as the poller does).

Seq (the turn's number in the session): its position among the session's turns known to either path,
ordered by start time then id: the prompts streamed (processed or not; they stay in the table) together with
the turns `captured_turns` already holds for the session. That is the poller's number whenever every earlier
turn reached one path or the other (the usual case: the plugin streams from the session's first prompt, or
the poller caught up first). A turn whose prompt neither path has seen (plugin loaded mid-session, daemon
down and poller off) would shift later numbers down by one; the key both paths deduplicate on is the
turn id, never the seq, so a turn is still stored once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from codememory.capture.daily_log import MEMORY_DIR, DailyLog
from codememory.capture.opencode import UNFINISHED, CaptureReport, ProjectReport, capture_turn, project_lock
from codememory.capture.opencode_db import DbStatus
from codememory.capture.opencode_turns import (
    answer_finished,
    error_text,
    is_compaction,
    ms_to_iso,
    strip_developer_context,
    written_file,
)
from codememory.capture.turns import SessionInfo, ToolCall, Turn, exit_status, project_path, shell_status
from codememory.core.dates import from_iso, now_utc, to_iso
from codememory.core.project import store_dir
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables
from codememory.store.raw_events import RawEvent, RawEventTables

log = logging.getLogger("codememory.capture")

KINDS = frozenset({"session", "user_prompt", "assistant_message", "tool_call"})
GIVE_UP_AFTER = 5  # failed attempts before an event is closed with its error
ORPHAN = "dropped: no turn to attach it to before the session went idle"


@dataclass
class RawTurn:
    turn: Turn
    event_ids: list[int]
    pending: bool  # some of its events are not processed yet
    compaction: bool = False


@dataclass
class FlushReport:
    root: str
    sessions: int = 0
    turns_captured: int = 0  # new captured turns (daily log + captured_turns)
    turns_already: int = 0  # turns the database poller had captured first (events closed, nothing written)
    events_processed: int = 0
    events_waiting: int = 0  # still pending: their turn is not complete yet
    errors: list[str] = field(default_factory=list)
    newest_turn_at: str | None = None
    max_lag_seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "sessions": self.sessions,
            "turns_captured": self.turns_captured,
            "turns_already": self.turns_already,
            "events_processed": self.events_processed,
            "events_waiting": self.events_waiting,
            "errors": list(self.errors),
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _tool_call(payload: dict[str, Any]) -> ToolCall:
    raw_input = payload.get("input")
    title = payload.get("title")
    code = exit_status(payload.get("exit"))
    return ToolCall(
        tool=_text(payload.get("tool")) or "?",
        call_id=_text(payload.get("call_id")),
        status=shell_status(_text(payload.get("status")) or "pending", code),
        input=raw_input if isinstance(raw_input, dict) else {},
        output=_text(payload.get("output")),
        error=error_text(payload.get("error")),
        title=title if isinstance(title, str) and title else None,
        exit_code=code,
    )


def session_info(events: list[RawEvent], root: str) -> SessionInfo | None:
    for e in events:
        if e.kind == "session":
            parent = e.payload.get("parent_id")
            title = e.payload.get("title")
            return SessionInfo(
                source=e.source,
                session_id=e.session_id,
                project_root=root,
                title=title if isinstance(title, str) and title else None,
                created_at=e.at,
                updated_at=e.at,
                parent_id=parent if isinstance(parent, str) and parent else None,
            )
    return None


def build_turns(
    events: list[RawEvent], captured: dict[str, str], root: str | None = None
) -> tuple[list[RawTurn], list[int]]:
    """The session's turns from its raw events (all of them, processed ones too), in order, and the ids of
    events that belong to no turn yet. `captured` maps the turn ids already in captured_turns to their start
    (for seq numbers)."""
    users = sorted((e for e in events if e.kind == "user_prompt"), key=lambda e: (e.at, e.event_id))
    user_ids = {u.event_id for u in users}
    answers: dict[str, list[RawEvent]] = {u.event_id: [] for u in users}
    orphans: list[int] = []
    assistants = sorted((e for e in events if e.kind == "assistant_message"), key=lambda e: (e.at, e.event_id))
    message_turn: dict[str, str] = {}
    for a in assistants:
        parent = a.payload.get("parent_id")
        if isinstance(parent, str) and parent:
            # OpenCode names the prompt answered; not seen (yet): wait for it, never guess another turn
            key = parent if parent in user_ids else None
        else:
            earlier = [u for u in users if (u.at, u.event_id) <= (a.at, a.event_id)]
            key = earlier[-1].event_id if earlier else None
        if key is None:
            orphans.append(a.id)
            continue
        answers[key].append(a)
        message_turn[a.event_id] = key
    tools: dict[str, list[RawEvent]] = {}
    for t in sorted((e for e in events if e.kind == "tool_call"), key=lambda e: (e.at, e.event_id)):
        message = _text(t.payload.get("message_id"))
        if message in message_turn:
            tools.setdefault(message, []).append(t)
        else:
            orphans.append(t.id)

    compaction = {u.event_id for u in users if u.payload.get("compaction") is True}
    compaction |= {key for key, group in answers.items() if any(is_compaction(a.payload) for a in group)}
    known = dict(captured)
    for u in users:
        if u.event_id not in compaction:
            known.setdefault(u.event_id, u.at)
    order = sorted(known, key=lambda turn_id: (known[turn_id], turn_id))
    seq_of = {turn_id: i + 1 for i, turn_id in enumerate(order)}

    pending_ids = {e.id for e in events if e.pending}
    out: list[RawTurn] = []
    real_users = [u for u in users if u.event_id not in compaction]
    for u in users:
        group = answers[u.event_id]
        ids = [u.id] + [a.id for a in group] + [t.id for a in group for t in tools.get(a.event_id, [])]
        pending = any(i in pending_ids for i in ids)
        if u.event_id in compaction:
            out.append(RawTurn(_empty_turn(u), ids, pending, compaction=True))
            continue
        superseded = any((v.at, v.event_id) > (u.at, u.event_id) for v in real_users)
        turn = _turn(u, group, tools, seq_of[u.event_id], superseded, root)
        out.append(RawTurn(turn, ids, pending))
    return out, orphans


def _empty_turn(user: RawEvent) -> Turn:
    return Turn(user.source, user.session_id, user.event_id, 0, user.at, None, "")


def _turn(
    user: RawEvent,
    group: list[RawEvent],
    tools: dict[str, list[RawEvent]],
    seq: int,
    superseded: bool,
    root: str | None,
) -> Turn:
    texts: list[str] = []
    calls: list[ToolCall] = []
    files: list[str] = []
    steps = 0
    for a in group:
        for text in a.payload.get("texts") or []:
            clean = strip_developer_context(_text(text)).strip()
            if clean:
                texts.append(clean)
        raw_steps = a.payload.get("steps")
        steps += raw_steps if isinstance(raw_steps, int) and not isinstance(raw_steps, bool) else 0
        for f in a.payload.get("files") or []:
            if isinstance(f, str) and f:
                files.append(project_path(f, root))
        for t in tools.get(a.event_id, []):
            call = replace(_tool_call(t.payload), started_at=t.at)  # a tool_call event is stamped at its start
            calls.append(call)
            path = written_file(call)
            if path:
                files.append(project_path(path, root))
    completed, ended_at, error = False, None, None
    if group:
        last = group[-1].payload
        finished, error = answer_finished(last)
        completed = finished or superseded
        ended_at = ms_to_iso(last.get("completed")) if completed else None
    else:
        completed = superseded
    return Turn(
        source=user.source,
        session_id=user.session_id,
        turn_id=user.event_id,
        seq=seq,
        started_at=user.at,
        ended_at=ended_at,
        user_text=strip_developer_context(_text(user.payload.get("text"))).strip(),
        assistant_texts=tuple(texts),
        tool_calls=tuple(calls),
        files=tuple(dict.fromkeys(files)),
        completed=completed,
        error=error,
        steps=steps,
    )


KEEP_PROCESSED = timedelta(days=7)  # processed events kept this long (a replay is a no-op at the queue)
PRUNE_EVERY = 3600.0  # seconds


def flush_project(store: Store, *, now: Callable[[], datetime] = now_utc, locked: bool = False) -> FlushReport:
    """Turn every pending raw event of the project's store into captured turns (see the module docstring),
    under the project's capture lock (`locked`: the caller holds it already). Never raises for one session's
    failure: that session's pending events count an attempt and the error is in the report."""
    root = store.root
    report = FlushReport(str(root))
    raw = RawEventTables(store.db)
    if not raw.pending_sessions():
        return report
    tables = CaptureTables(store.db)
    daily = DailyLog(store_dir(root) / MEMORY_DIR, root=root)
    idle_after = store.config.capture.idle_after
    with nullcontext() if locked else project_lock(root):
        for source, session in raw.pending_sessions():  # again, under the lock
            report.sessions += 1
            events = raw.session_events(source, session)
            try:
                _flush_session(raw, tables, daily, str(root), source, session, events, idle_after, now, report)
            except Exception as exc:  # one session's failure must not stop the others
                log.exception("raw events of %s could not be processed", session)
                report.errors.append(f"{session}: {type(exc).__name__}: {exc}")
                closed = raw.fail(
                    [e.id for e in events if e.pending],
                    f"{type(exc).__name__}: {exc}",
                    to_iso(now()),
                    give_up_after=GIVE_UP_AFTER,
                )
                if closed:
                    report.errors.append(f"{session}: {closed} events given up after {GIVE_UP_AFTER} attempts")
    _prune(raw, str(root), now())
    return report


_last_prune: dict[str, float] = {}


def _prune(raw: RawEventTables, root: str, now: datetime) -> None:
    """At most hourly per project: drop events processed more than KEEP_PROCESSED ago."""
    if time.monotonic() - _last_prune.get(root, float("-inf")) < PRUNE_EVERY:
        return
    _last_prune[root] = time.monotonic()
    raw.prune(to_iso(now - KEEP_PROCESSED))


def _flush_session(
    raw: RawEventTables,
    tables: CaptureTables,
    daily: DailyLog,
    root: str,
    source: str,
    session: str,
    events: list[RawEvent],
    idle_after: float,
    now: Callable[[], datetime],
    report: FlushReport,
) -> None:
    stamp = to_iso(now())
    done: list[int] = [e.id for e in events if e.pending and (e.kind == "session" or e.kind not in KINDS)]
    captured = {t.turn_id: t.started_at for t in tables.turns(source, session)}
    turns, orphans = build_turns(events, captured, root)
    last_activity = max((e.received_at for e in events), default=stamp)
    idle = (now() - from_iso(last_activity)).total_seconds() >= idle_after
    info = session_info(events, root) or SessionInfo(
        source=source,
        session_id=session,
        project_root=root,
        title=None,
        created_at=turns[0].turn.started_at if turns else "",
        updated_at=last_activity,
    )
    project = ProjectReport(root)
    capture = CaptureReport(db=DbStatus("ok", None), started_at=stamp)  # only its counters are read
    for raw_turn in turns:
        if raw_turn.compaction:
            if raw_turn.pending and raw_turn.turn.turn_id not in captured:
                done += raw_turn.event_ids
            continue
        turn = raw_turn.turn
        if not raw_turn.pending:
            continue
        if turn.turn_id in captured or tables.is_captured(source, session, turn.turn_id):
            report.turns_already += 1
            done += raw_turn.event_ids
            continue
        if not turn.completed:
            if not idle:
                break  # later turns wait for this one (captured turns stay a prefix of the session)
            turn = replace(turn, completed=True, error=turn.error or UNFINISHED)
        before = project.turns_captured
        capture_turn(tables, daily, info, turn, now, project, capture)
        if project.turns_captured == before:
            report.turns_already += 1
        done += raw_turn.event_ids
    pending_ids = {e.id for e in events if e.pending}
    finished = pending_ids & set(done)
    if finished:
        report.events_processed += raw.mark_processed(finished, stamp)
    dropped = (pending_ids & set(orphans)) - finished if idle else set()
    if dropped:
        report.events_processed += raw.mark_processed(dropped, stamp, note=ORPHAN)
    report.events_waiting += len(pending_ids - finished - dropped)
    report.turns_captured += project.turns_captured
    if capture.newest_turn_at and (report.newest_turn_at is None or capture.newest_turn_at > report.newest_turn_at):
        report.newest_turn_at = capture.newest_turn_at
    if capture.max_lag_seconds is not None:
        report.max_lag_seconds = max(report.max_lag_seconds or 0.0, capture.max_lag_seconds)
