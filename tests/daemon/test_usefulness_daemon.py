"""Feedback through the real daemon, as the OpenCode plugin drives it: each session's HUD comes from `/retrieve`
(which records what it showed the session), the session's turn reaches the daemon as the plugin's raw events
(`/api/raw-events`), the daemon captures it and reads the use signals from it (capture/usage.py); then a new
session's `/retrieve` ranks with the record. A memory shown and ignored across sessions ranks lower than before;
the one the sessions acted on does not sink."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codememory.core.project import db_path
from support.daemon import Daemon, codememory, isolated_env, make_project, spawn, wait_for

QUERY = "webhook retries"
IGNORED = "Webhook retries back off exponentially, see retry_policy in app/webhooks.py"
USED = "Webhook retries stop after five attempts; the dead letters go to WEBHOOK_DLQ"
SESSIONS = 6


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Daemon, Path, str, str]]:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project)
    ignored = codememory(env, "--project", project, "store", IGNORED, "--importance", "0.9", "--quiet").strip()
    used = codememory(env, "--project", project, "store", USED, "--importance", "0.5", "--quiet").strip()
    d = spawn(env)
    yield d, project.resolve(), ignored, used
    d.terminate()


def hud(d: Daemon, project: Path, session: str | None) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"query_expansion": [QUERY], "entities": [], "project_root": str(project)}
    if session is not None:
        body |= {"session_id": session, "source": "opencode"}
    resp = d.client().request("POST", "/retrieve", body)
    assert resp.status == 200, resp.data
    return list(resp.data["memories"])


def turn_events(session: str, at: int, command: str) -> list[dict[str, Any]]:
    """One OpenCode turn as the plugin streams it: the prompt, a step that runs `command`, the final answer."""
    user, step, final = f"{session}_user", f"{session}_step", f"{session}_final"
    return [
        {"event_id": user, "session_id": session, "kind": "user_prompt", "at": at,
         "payload": {"text": "turn the dead letters on for staging"}},
        {"event_id": step, "session_id": session, "kind": "assistant_message", "at": at + 10,
         "payload": {"parent_id": user, "completed": at + 500, "finish": "tool-calls", "texts": [], "steps": 1}},
        {"event_id": f"{session}_tool", "session_id": session, "kind": "tool_call", "at": at + 20,
         "payload": {"message_id": step, "tool": "bash", "call_id": f"{session}_call", "status": "completed",
                     "input": {"command": command}, "output": "", "title": command, "exit": 0}},
        {"event_id": final, "session_id": session, "kind": "assistant_message", "at": at + 600,
         "payload": {"parent_id": user, "completed": at + 900, "finish": "stop", "texts": ["Done."], "steps": 1}},
    ]  # fmt: skip


def used_in(project: Path, session: str) -> set[str]:
    conn = sqlite3.connect(f"file:{db_path(project)}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT memory_id FROM memory_exposures WHERE session_id = ? AND used_at IS NOT NULL", (session,)
        ).fetchall()
    finally:
        conn.close()
    return {r[0] for r in rows}


def captured(project: Path, session: str) -> bool:
    conn = sqlite3.connect(f"file:{db_path(project)}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT 1 FROM captured_turns WHERE session_id = ?", (session,)).fetchone() is not None
    finally:
        conn.close()


@pytest.mark.slow
def test_the_hud_ranks_a_memory_ignored_across_sessions_lower_and_keeps_the_used_one(
    daemon: tuple[Daemon, Path, str, str],
) -> None:
    d, project, ignored, used = daemon
    before = [m["id"] for m in hud(d, project, None)]
    assert before[:2] == [ignored, used]
    for n in range(SESSIONS):
        session = f"ses_feedback_{n}"
        assert {m["id"] for m in hud(d, project, session)} >= {ignored, used}  # shown to the session, recorded
        at = int(time.time() * 1000) + 1000  # the turn comes after the showing
        # only `used` names WEBHOOK_DLQ; nothing in the turn says retry_policy or app/webhooks.py
        events = turn_events(session, at, "sed -i s/WEBHOOK_DLQ=0/WEBHOOK_DLQ=1/ .env.staging")
        batch = {"project_root": str(project), "source": "opencode", "batch_id": session, "events": events}
        assert d.client().request("POST", "/api/raw-events", batch).data["accepted"] == len(events)
        wait_for(f"{session}'s turn captured", lambda s=session: captured(project, s))
        assert wait_for(f"{session}'s use", lambda s=session: used_in(project, s), timeout=20) == {used}
    after = hud(d, project, "ses_feedback_new")
    ids = [m["id"] for m in after]
    assert ids.index(ignored) > before.index(ignored) and ids[0] == used  # ranks lower than before
    why = {m["id"]: m["why"]["usefulness"] for m in after}
    assert why[ignored]["factor"] < 1.0 < why[used]["factor"]  # the used one does not sink: it rises
    assert why[ignored]["shown"] == pytest.approx(SESSIONS, abs=0.05) and why[ignored]["used"] == 0
