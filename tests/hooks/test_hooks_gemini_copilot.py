"""Gemini CLI and Copilot CLI through the installed `codememory-hook`, fed the payloads the real binaries sent
(tests/fixtures/hooks/recorded, Gemini CLI 0.61.0 and Copilot CLI 1.0.102): context back in the shape each reads,
the prompt (not the context the assistant put in front of it) as the session's goal, edits journaled, `*Remember*:`
notes from the last answer or the transcript, the session closed. Copilot also runs Claude Code's hooks from
`.claude/settings.json`: those calls do nothing, so a session is handled once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codememory import Store

pytestmark = pytest.mark.slow  # a hook process per event

RECORDED = Path(__file__).parents[1] / "fixtures" / "hooks" / "recorded"
HOOK = Path(sys.executable).with_name("codememory-hook")
GEMINI_SESSION = "53106a45-3324-4b4d-882f-16289b39121f"
COPILOT_SESSION = "20ea46cf-4d11-41c7-8f94-1b90693dc597"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "app.py").write_text("a = 1\n")
    store, _ = Store.init(root)
    with store:
        store.add("Staging deploys use the deploy-staging make target", category="convention", importance=0.9)
    return root


def add_after_start(root: Path) -> None:
    """A memory the session start has not shown, for the prompt to find."""
    with Store.open(root) as store:
        store.add("To greet in hello.txt, set a to 2 and greet in English and French", importance=0.3)


def recorded(name: str, root: Path, transcripts: Path) -> str:
    text = (RECORDED / name).read_text()
    return text.replace("__TRANSCRIPT_DIR__", str(transcripts)).replace("__PROJECT__", str(root))


def hook(assistant: str, event: str, stdin: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "COPILOT_CLI"} | {"CODEMEMORY_HOOK_NO_DAEMON": "1", **env}
    done = subprocess.run(
        [str(HOOK), assistant, event], input=stdin, capture_output=True, text=True, timeout=60, env=environ
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def journal(root: Path, key: str) -> list[str]:
    return [json.loads(line)["path"] for line in (root / ".codememory" / "journal" / key).read_text().splitlines()]


def hooks_log(root: Path) -> str:
    log = root / ".codememory" / "logs" / "hooks.log"
    return log.read_text() if log.exists() else ""


def carry_on(prompt_payload: str) -> str:
    """The same prompt payload with a user's reply that objects to nothing."""
    return json.dumps({**json.loads(prompt_payload), "prompt": "thanks, carry on"})


def test_a_gemini_cli_session(project: Path, tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / f"session-2026-11-27T06-26-{GEMINI_SESSION[:8]}.jsonl").write_text(
        recorded("gemini_session.jsonl", project, chats)
    )
    start = json.loads(hook("gemini", "SessionStart", recorded("gemini_SessionStart.json", project, chats)))
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "deploy-staging" in start["hookSpecificOutput"]["additionalContext"]
    add_after_start(project)
    # headless Gemini CLI puts the session-start context in front of the prompt it reports: it is not the prompt
    prompt = recorded("gemini_BeforeAgent.json", project, chats).replace("create hello.txt", "greet in hello.txt")
    out = json.loads(hook("gemini", "BeforeAgent", prompt))
    assert "greet in English and French" in out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    for name in ("gemini_AfterTool_write_file.json", "gemini_AfterTool_replace.json"):
        assert hook("gemini", "AfterTool", recorded(name, project, chats)) == ""
    assert journal(project, f"gemini-{GEMINI_SESSION}.jsonl") == ["hello.txt", "app.py"]
    assert hook("gemini", "AfterAgent", recorded("gemini_AfterAgent.json", project, chats)) == ""
    # the assistant's Remember note waits for the user's next prompt, which carries on and so accepts it
    hook("gemini", "BeforeAgent", carry_on(prompt))
    assert hook("gemini", "SessionEnd", recorded("gemini_SessionEnd.json", project, chats)) == ""
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="gemini")
        texts = [m.text for m in store.list(limit=50)]
    assert session.status == "closed" and session.goal == "greet in hello.txt and set a to 2"
    assert texts.count("the hello file is written by the greeter.") == 1  # the last answer and the transcript
    assert hooks_log(project) == ""


def test_a_copilot_cli_session(project: Path, tmp_path: Path) -> None:
    state = tmp_path / "session-state" / COPILOT_SESSION
    state.mkdir(parents=True)
    (state / "events.jsonl").write_text(recorded("copilot_events.jsonl", project, state))
    start = json.loads(hook("copilot", "SessionStart", recorded("copilot_SessionStart.json", project, state)))
    assert list(start) == ["additionalContext"] and "deploy-staging" in start["additionalContext"]
    add_after_start(project)
    prompt = recorded("copilot_UserPromptSubmit.json", project, state).replace("create hello.txt", "greet in hello.txt")
    out = json.loads(hook("copilot", "UserPromptSubmit", prompt))
    assert list(out) == ["additionalContext"] and "greet in English and French" in out["additionalContext"]
    for name in ("copilot_PostToolUse_Write.json", "copilot_PostToolUse_Edit.json"):
        assert hook("copilot", "PostToolUse", recorded(name, project, state)) == ""
    assert journal(project, f"copilot-{COPILOT_SESSION}.jsonl") == ["hello.txt", "app.py"]
    assert hook("copilot", "Stop", recorded("copilot_Stop.json", project, state)) == ""  # no last message: transcript
    hook("copilot", "UserPromptSubmit", carry_on(prompt))  # the user's next prompt accepts the assistant's note
    assert hook("copilot", "SessionEnd", recorded("copilot_SessionEnd.json", project, state)) == ""
    with Store.open(project) as store:
        texts = [m.text for m in store.list(limit=50)]
        [session] = store.list_sessions(tool="copilot")
    assert "the hello file is written by the greeter." in texts
    assert session.status == "closed" and session.goal == "greet in hello.txt and set a to 2"
    assert hooks_log(project) == ""


def test_copilot_running_claude_codes_hooks_does_nothing(project: Path, tmp_path: Path) -> None:
    """Copilot CLI reads `.claude/settings.json` too and runs its hooks with COPILOT_CLI=1 and its own payloads:
    the claude hook leaves that session to Copilot's own hooks, so nothing is injected or recorded twice."""
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        raw = recorded(f"copilot_{event}.json", project, tmp_path)
        assert hook("claude", event, raw, COPILOT_CLI="1") == ""
    assert not (project / ".codememory" / "journal").exists()
    raw = recorded("copilot_SessionStart.json", project, tmp_path)
    assert "deploy-staging" in hook("claude", "SessionStart", raw)  # the same call from Claude Code is answered
    with Store.open(project) as store:
        assert store.list_sessions(tool="claude-code") and not store.list_sessions(tool="copilot")
    assert not list((project / ".codememory" / "journal").glob("copilot-*"))
