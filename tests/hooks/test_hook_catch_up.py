"""Nothing lost at a turn's end: the end-of-turn work finishes after the hook returns (an assistant kills a hook
at its timeout), and what an earlier session's end left undone is captured when the assistant next starts a
session, with nothing captured twice. Run as the installed `codememory-hook` with recorded Claude Code payloads."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
from test_hooks import CLAUDE_SESSION, hook, log_anchors, project, recorded, transcript_lines

from codememory import Store
from codememory.operations.hook_catch_up import catch_up

__all__ = ["project"]  # the fixture, shared with test_hooks

pytestmark = pytest.mark.slow  # several hook processes each

T = TypeVar("T")
DEPLOY_RULE = (
    "Staging deploys run scripts/ship_release.sh, never a bare git push"  # standing: every session start shows it
)
OTHER_SESSION = "7f0c1d2e-0000-4000-8000-00000000b0b0"


def poll(what: str, find: Callable[[], T | None], timeout: float = 30.0) -> T:
    """What `find()` returns once it is not None: work a hook left to a process of its own; a failure after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (found := find()) is None:
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def deploy_turn(project: Path) -> list[dict[str, Any]]:
    """A turn, after the session was shown the deploy rule, in which the agent runs the make target it names."""
    base = {"sessionId": CLAUDE_SESSION, "cwd": str(project)}
    return [
        {**base, "type": "user", "uuid": "u-deploy", "promptId": "p-deploy", "timestamp": now(),
         "message": {"role": "user", "content": "ship it to staging"}},
        {**base, "type": "assistant", "timestamp": now(),
         "message": {"id": "m-deploy-1", "role": "assistant", "stop_reason": "tool_use", "content": [
             {"type": "tool_use", "id": "toolu_deploy", "name": "Bash",
              "input": {"command": "bash scripts/ship_release.sh"}}]}},
        {**base, "type": "user", "timestamp": now(),
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_deploy", "content": "deployed"}]}},
        {**base, "type": "assistant", "timestamp": now(),
         "message": {"id": "m-deploy-2", "role": "assistant", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "Deployed to staging."}]}},
    ]  # fmt: skip


def captured_turns(project: Path) -> list[tuple[str, str]]:
    with Store.open(project) as store:
        rows = store.db.conn.execute("SELECT session_id, turn_id FROM captured_turns ORDER BY turn_id").fetchall()
    return [(str(s), str(t)) for s, t in rows]


def rule_use(project: Path) -> tuple[str | None, str | None]:
    """(how, evidence) the first session used the deploy rule it was shown, from its exposure record."""
    with Store.open(project) as store:
        [shown] = [e for e in store.db.session_exposures(CLAUDE_SESSION) if e.memory_id == rule_id(store)]
    return shown.used_by, shown.evidence


def rule_id(store: Store) -> str:
    [rule] = [m for m in store.list(limit=10) if m.text == DEPLOY_RULE]
    return rule.id


def used_total(project: Path) -> int:
    with Store.open(project) as store:
        rid = rule_id(store)
        row = store.db.usefulness([rid], "2099-01-01T00:00:00.000Z").get(rid)
    return row.used_total if row is not None else 0


@pytest.fixture
def sessions_dir(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where Claude Code files this project's transcripts (the catch-up reads only those), in a test home."""
    home = tmp_path / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    folder = home / "projects" / "".join(c if c.isalnum() and c.isascii() else "-" for c in str(project))
    folder.mkdir(parents=True)
    return folder


def other_session(name: str, project: Path, folder: Path) -> str:
    """A recorded payload of another Claude Code session in the same project."""
    return recorded(name, project, folder).replace(CLAUDE_SESSION, OTHER_SESSION)


def test_a_turn_whose_end_hook_never_finished_is_captured_at_the_next_session_start(
    project: Path, sessions_dir: Path
) -> None:
    tmp_path = sessions_dir
    with Store.open(project) as store:
        store.add(DEPLOY_RULE, category="convention", importance=0.9)
    transcript = tmp_path / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    hook("claude", "SessionStart", stdin=recorded("claude_SessionStart.json", project, tmp_path))  # shows the rule
    hook("claude", "Stop", stdin=recorded("claude_Stop.json", project, tmp_path))
    assert len(log_anchors(project)) == 6
    before = captured_turns(project)

    # the next turn runs what the rule names; its Stop hook and the SessionEnd are killed before they do anything
    with transcript.open("a") as f:
        f.writelines(json.dumps(line) + "\n" for line in deploy_turn(project))
    assert rule_use(project) == (None, None)

    # another session starts in the project: it catches up, in a process of its own, after its output is out
    started = hook("claude", "SessionStart", stdin=other_session("claude_SessionStart.json", project, tmp_path))
    assert DEPLOY_RULE in started.stdout
    log = project / ".codememory" / "logs" / "hooks.log"
    poll("the catch-up", lambda: (log.is_file() and "claude catch-up: captured 1 turn(s)" in log.read_text()) or None)
    assert captured_turns(project) == sorted([*before, (CLAUDE_SESSION, "u-deploy")])
    assert log_anchors(project)[-1] == f"<!-- session:{CLAUDE_SESSION} turn:u-deploy -->"
    assert rule_use(project) == ("entity", "Bash: scripts/ship_release.sh") and used_total(project) == 1

    # the killed hooks' late runs and a third session start capture nothing twice
    hook(
        "claude",
        "Stop",
        stdin=recorded("claude_Stop.json", project, tmp_path),
        env={"CODEMEMORY_HOOK_FINISH_WAIT": "30"},
    )
    hook("claude", "SessionStart", stdin=other_session("claude_SessionStart.json", project, tmp_path))
    hook(
        "claude",
        "SessionEnd",
        stdin=recorded("claude_SessionEnd.json", project, tmp_path),
        env={"CODEMEMORY_HOOK_FINISH_WAIT": "30"},
    )
    assert len(log_anchors(project)) == 7 and len(captured_turns(project)) == 7
    assert rule_use(project) == ("entity", "Bash: scripts/ship_release.sh") and used_total(project) == 1


def test_a_session_start_with_nothing_left_behind_captures_nothing(project: Path, sessions_dir: Path) -> None:
    tmp_path = sessions_dir
    transcript = tmp_path / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    hook("claude", "Stop", stdin=recorded("claude_Stop.json", project, tmp_path))
    hook("claude", "SessionEnd", stdin=recorded("claude_SessionEnd.json", project, tmp_path))
    hook("claude", "SessionStart", stdin=other_session("claude_SessionStart.json", project, tmp_path))
    hook("claude", "Stop", stdin=other_session("claude_Stop.json", project, tmp_path))
    # what the session start ran in the background, run again here to its end: nothing was left to catch up
    assert catch_up("claude", other_session("claude_SessionStart.json", project, tmp_path), None) == 0
    assert len(log_anchors(project)) == 6
    log = project / ".codememory" / "logs" / "hooks.log"
    assert not log.exists() or "catch-up: captured" not in log.read_text()


def test_the_end_of_turn_work_finishes_after_a_hook_that_does_not_wait_for_it(project: Path, tmp_path: Path) -> None:
    """With no wait at all (an assistant that kills its hooks at once), Stop and then SessionEnd return before their
    work is done; it is done all the same, in the order they came: the turns captured, the session closed."""
    transcript = tmp_path / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    no_wait = {"CODEMEMORY_HOOK_FINISH_WAIT": "0"}
    assert hook("claude", "Stop", stdin=recorded("claude_Stop.json", project, tmp_path), env=no_wait).stdout == ""
    with transcript.open("a") as f:
        f.writelines(json.dumps(line) + "\n" for line in deploy_turn(project))
    hook("claude", "SessionEnd", stdin=recorded("claude_SessionEnd.json", project, tmp_path), env=no_wait)

    def closed() -> bool | None:
        with Store.open(project) as store:
            sessions = store.list_sessions(tool="claude-code")
        return True if sessions and sessions[0].status == "closed" and len(log_anchors(project)) == 7 else None

    poll("the session's end to be done", closed)
    assert len(captured_turns(project)) == 7


def test_a_journal_naming_a_transcript_elsewhere_is_not_caught_up(
    project: Path, sessions_dir: Path, tmp_path: Path
) -> None:
    """The journal is under .codememory/ (a clone may carry one): a path it names that is not one of this
    assistant's transcripts of this project (another project's session, any file) is never read into the store."""
    elsewhere = tmp_path / "other-project-session.jsonl"
    elsewhere.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    journal = project / ".codememory" / "journal"
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "claude-planted.json").write_text(json.dumps({"transcripts": {str(elsewhere): 0}, "closed": True}))
    start = other_session("claude_SessionStart.json", project, sessions_dir)
    assert catch_up("claude", start, None) == 0  # what the session start runs after its output, here in-process
    assert log_anchors(project) == [] and captured_turns(project) == []


WAITS = [("0", 0.0), ("2.5", 2.5), ("-3", 0.0), ("inf", 60.0), ("nan", 5.0), ("x", 5.0)]


@pytest.mark.parametrize(("given", "wait"), WAITS)
def test_the_end_of_turn_wait_is_bounded(given: str, wait: float, monkeypatch: pytest.MonkeyPatch) -> None:
    from codememory.hooks.dispatch import FINISH_WAIT_ENV, _finish_wait

    monkeypatch.setenv(FINISH_WAIT_ENV, given)
    assert _finish_wait() == wait
