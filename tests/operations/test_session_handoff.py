"""The session-start block hands the last session over, whichever assistant had it: a Codex session's goal, work
done, what is still to do, its decisions and files reach the next Claude Code (or Gemini, Copilot...) session, a few
of each, one line each; the session just opened is never "the last one"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codememory import assistants
from codememory.assistants.spec import Role
from codememory.errors import InvalidInput
from codememory.operations import hook_events
from codememory.operations.checkpoint import checkpoint
from codememory.operations.cold_start import HANDOFF_FILES, HANDOFF_ITEMS, session_start_context
from codememory.operations.explain import Recorder
from codememory.service.project_store import Store
from support.opencode import make_git_project


def start_block(store: Store, tool: str = "claude", current: str | None = None) -> str:
    recorder = Recorder(tool, "ses_1", lambda exc: (_ for _ in ()).throw(exc))
    return session_start_context(store, tool=tool, current_session=current, recorder=recorder)


def test_the_next_tool_gets_the_last_sessions_state(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    store, _ = Store.init(tmp_path / "app")
    with store:
        store.checkpoint(tool="claude-code", slug="older", goal="Older work nobody continues")
        codex = store.checkpoint(
            tool="codex",
            slug="limiter",
            goal="Add per-key rate limiting",
            work_completed=[f"step {i}" for i in range(1, 6)],
            work_pending=["Wire the limiter into the API gateway"],
            decisions=["**Redis:** atomic INCR with expiry"],
        ).session_id
        lines = start_block(store).splitlines()
        assert any(line.startswith("Last codex session: Add per-key rate limiting (") for line in lines)
        done = next(line for line in lines if line.startswith("  Done: "))
        assert done == f"  Done: step 3; step 4; step 5 (+{5 - HANDOFF_ITEMS} more)"  # the latest few
        assert "  Still to do: Wire the limiter into the API gateway" in lines
        assert "  Decided: **Redis:** atomic INCR with expiry" in lines
        assert not any("Older work" in line for line in lines)

        # the session being started is not the one handed over: the one before it is
        own = start_block(store, "codex", current=codex).splitlines()
        assert any(line.startswith("Last claude-code session: Older work nobody continues") for line in own)
        assert not any(line.startswith("  Still to do: ") for line in own)


def test_files_touched_are_listed_a_few(tmp_path: Path) -> None:
    root = make_git_project(tmp_path / "app")
    store, _ = Store.init(root)
    with store:
        start = store.checkpoint(tool="gemini", slug="files", goal="Split the parser").session_id
        paths = [f"part{i}.py" for i in range(HANDOFF_FILES + 2)]
        for path in paths:
            (root / path).write_text("x = 1\n", encoding="utf-8")
        store.checkpoint(tool="gemini", session_id=start, status="closed")  # the files since the session began
        line = next(x for x in start_block(store).splitlines() if x.startswith("  Files touched: "))
        shown = line.removeprefix("  Files touched: ").removesuffix(" (+2 more)").split(", ")
        assert len(shown) == HANDOFF_FILES and set(shown) <= set(paths) and line.endswith(" (+2 more)")


def prompt(root: Path, assistant: str, session: str, text: str) -> None:
    spec = assistants.find(assistant)
    assert spec is not None
    event = next(e.name for e in spec.events if e.role is Role.PROMPT)
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": event, "prompt": text}
    hook_events.run(assistant, event, json.dumps(payload), str(root))


def test_a_checkpoint_from_an_assistant_that_names_no_session_lands_in_its_hooks_session(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    Store.init(root)[0].close()
    prompt(root, "codex", "019a-codex-1", "Add per-key rate limiting")  # Codex's hooks open the session
    with Store.open(root) as store:
        (opened,) = store.list_sessions()
        saved = checkpoint(store, tool="codex", work_pending=["Wire the limiter into the gateway"], env={})
        assert saved.session_id == opened.session_id  # Codex gives its MCP server no session id: the open one
        assert store.sessions.record(opened.session_id).pending == ["Wire the limiter into the gateway"]

    prompt(root, "gemini", "gemini-2", "Something else at the same time")  # two open at once: never a guess
    with Store.open(root) as store, pytest.raises(InvalidInput, match="slug is required"):
        checkpoint(store, tool="codex", work_pending=["x"], env={})
