"""The hook entry point, run as the installed `codememory-hook` script with the assistants' payloads."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codememory import Store
from codememory.operations.explain import explain_last

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"
HOOK = Path(sys.executable).with_name("codememory-hook")


def _git(root: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args]
    return subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("a = 1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    store, _ = Store.init(root)
    with store:
        store.add("Staging deploys use the deploy-staging make target", category="convention", importance=0.9)
        store.add("The staging server runs Ubuntu 24.04")
    return root


STORED = {"Staging deploys use the deploy-staging make target", "The staging server runs Ubuntu 24.04"}


def payload(name: str, root: Path, transcript: Path | None = None) -> str:
    text = (FIXTURES / name).read_text()
    return text.replace("__PROJECT__", str(root)).replace("__TRANSCRIPT__", str(transcript or root / "none.jsonl"))


def hook(
    *args: str, stdin: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **(env or {})}
    done = subprocess.run(
        [str(HOOK), *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=30, env=environ
    )
    assert done.returncode == 0, done.stderr
    return done


def context(out: str, event: str) -> str:
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == event
    text = data["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def test_claude_session_start_and_prompt_inject_memories(project: Path) -> None:
    start = context(
        hook("claude", "SessionStart", stdin=payload("claude_SessionStart.json", project)).stdout, "SessionStart"
    )
    assert "deploy-staging" in start and "`mem_" in start
    with Store.open(project) as store:  # the session start showed both memories: the prompt gets the new one only
        store.add("Deploy the staging server only after the smoke tests pass")
    out = hook("claude", "UserPromptSubmit", stdin=payload("claude_UserPromptSubmit.json", project)).stdout
    prompt = context(out, "UserPromptSubmit")
    assert prompt.startswith("<project_memory>\n") and "smoke tests" in prompt and "deploy-staging" not in prompt
    with Store.open(project) as store:
        sessions = store.list_sessions(tool="claude-code")
    assert len(sessions) == 1 and sessions[0].status == "open"
    # both injections are in the ledger `codememory explain` reads, under the assistant's session id
    with Store.open(project) as store:
        explained = explain_last(store, last=5).to_dict()
    assert explained["session_id"] == "0b7c9a4e-1111-4c1e-9d7a-5f0e2a3b4c5d"
    kinds = [i["kind"] for i in explained["injections"]]
    assert kinds == ["hook_start", "hook_prompt"]
    shown = [m["id"] for m in explained["injections"][1]["memories"]]
    assert shown and all(f"`{i}`" in prompt or i in prompt for i in shown)


@pytest.mark.slow
def test_first_prompt_is_the_goal_and_the_next_session_hears_of_it(project: Path) -> None:
    hook("claude", "SessionStart", stdin=payload("claude_SessionStart.json", project))
    hook("claude", "UserPromptSubmit", stdin=payload("claude_UserPromptSubmit.json", project))
    later = payload("claude_UserPromptSubmit.json", project).replace("How do we deploy", "Why did we move")
    hook("claude", "UserPromptSubmit", stdin=later)  # the first prompt stays the goal
    hook("claude", "SessionEnd", stdin=payload("claude_SessionEnd.json", project))
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="claude-code")
    assert session.goal == "How do we deploy the staging server?"
    other = payload("claude_SessionStart.json", project).replace("0b7c9a4e-1111", "0b7c9a4e-2222")
    start = context(hook("claude", "SessionStart", stdin=other).stdout, "SessionStart")
    assert "Last claude-code session: How do we deploy the staging server?" in start


def test_hooks_do_nothing_inside_the_summarisers_own_agent_run(project: Path) -> None:
    """The extractor runs an agent CLI with CODEMEMORY_NO_HOOKS: a hook that CLI still runs neither injects nor opens
    or captures a session (extract/agent_cli.py)."""
    quiet = {"CODEMEMORY_NO_HOOKS": "1"}
    for event, name in (
        ("SessionStart", "claude_SessionStart.json"),
        ("UserPromptSubmit", "claude_UserPromptSubmit.json"),
    ):
        done = hook("claude", event, stdin=payload(name, project), env=quiet)
        assert done.stdout == "" and done.stderr == ""
    with Store.open(project) as store:
        assert store.list_sessions(tool="claude-code") == []
    assert not (project / ".codememory" / "logs" / "hooks.log").exists()
    # "0" leaves the hooks on, as every switch reads it
    assert hook(
        "claude", "SessionStart", stdin=payload("claude_SessionStart.json", project), env={"CODEMEMORY_NO_HOOKS": "0"}
    ).stdout


def test_prompt_without_matches_prints_nothing(project: Path) -> None:
    raw = payload("claude_UserPromptSubmit.json", project).replace("How do we deploy the staging server?", "zebra")
    assert hook("claude", "UserPromptSubmit", stdin=raw).stdout == ""


def test_files_touched_are_journaled(project: Path) -> None:
    hook("claude", "PostToolUse", stdin=payload("claude_PostToolUse_Edit.json", project))
    hook("claude", "PostToolUse", stdin=payload("claude_PostToolUse_Bash.json", project))
    hook("codex", "PostToolUse", stdin=payload("codex_PostToolUse_apply_patch.json", project))
    hook("cursor", "afterFileEdit", stdin=payload("cursor_afterFileEdit.json", project))
    journal = project / ".codememory" / "journal"

    def paths(name: str) -> list[str]:
        return [json.loads(line)["path"] for line in (journal / name).read_text().splitlines()]

    assert paths("claude-0b7c9a4e-1111-4c1e-9d7a-5f0e2a3b4c5d.jsonl") == ["src/app.py"]
    assert paths("codex-019a2b3c-2222-7d8e-9f00-aabbccddeeff.jsonl") == ["docs/notes.md", "src/app.py"]
    assert paths("cursor-7f3e0c2a-3333-4b5c-8d9e-001122334455.jsonl") == ["src/app.py"]
    assert (journal / ".gitignore").read_text().strip().endswith("*")


@pytest.mark.slow
def test_stop_closes_session_with_end_sha_and_remembers_once(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((FIXTURES / "claude_transcript.jsonl").read_text())
    hook("claude", "SessionStart", stdin=payload("claude_SessionStart.json", project, transcript))
    (project / "src" / "app.py").write_text("a = 2\n")
    _git(project, "commit", "-qam", "change")
    sha = _git(project, "rev-parse", "HEAD")
    stop = payload("claude_Stop.json", project, transcript)
    assert hook("claude", "Stop", stdin=stop).stdout == ""
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="claude-code")
        assert session.status == "closed"
        markdown = store.show_session(session.session_id).markdown
        assert f"git_sha_end: {sha}" in markdown
        assert {m.text for m in store.list(limit=50)} == STORED  # the assistant's notes wait for the next prompt
    # the user carries on: the notes are stored now, accepted by the user
    hook("claude", "UserPromptSubmit", stdin=payload("claude_UserPromptSubmit.json", project, transcript))
    with Store.open(project) as store:
        stored = [m for m in store.list(limit=50) if m.text not in STORED]
    texts = sorted(m.text for m in stored)
    assert any("make deploy-staging" in t for t in texts)
    assert any("Postgres 16 on port 5433" in t for t in texts)
    assert all(m.source and m.source.endswith("said_by:assistant_accepted") for m in stored)
    # Again, plus a new transcript line: the old lines are not re-read (cursor), nothing is stored twice; a note
    # the session ends on, unanswered, is dropped.
    with transcript.open("a") as f:
        line = {"type": "assistant", "message": {"content": [{"type": "text", "text": "*Remember*: use uv."}]}}
        f.write(json.dumps(line) + "\n")
    hook("claude", "Stop", stdin=stop)
    hook("claude", "SessionEnd", stdin=payload("claude_SessionEnd.json", project, transcript))
    with Store.open(project) as store:
        again = sorted(m.text for m in store.list(limit=50) if m.text not in STORED)
        [session] = store.list_sessions(tool="claude-code")
    assert again == texts
    assert session.status == "closed"
    state = json.loads((project / ".codememory/journal/claude-0b7c9a4e-1111-4c1e-9d7a-5f0e2a3b4c5d.json").read_text())
    assert state["transcripts"][str(transcript.resolve())] == transcript.stat().st_size


def test_an_objecting_prompt_drops_the_assistants_notes(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((FIXTURES / "claude_transcript.jsonl").read_text())
    hook("claude", "Stop", stdin=payload("claude_Stop.json", project, transcript))
    objection = payload("claude_UserPromptSubmit.json", project, transcript).replace(
        "How do we deploy the staging server?", "No, that is wrong: staging runs Postgres 15."
    )
    hook("claude", "UserPromptSubmit", stdin=objection)
    with Store.open(project) as store:
        assert {m.text for m in store.list(limit=50)} == STORED


def test_journaled_files_join_git_in_the_closed_session(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    hook("claude", "SessionStart", stdin=payload("claude_SessionStart.json", project, transcript))
    # an edit the journal saw but git cannot (the file ends as it began), and a file only git sees
    hook("claude", "PostToolUse", stdin=payload("claude_PostToolUse_Edit.json", project))
    (project / "notes.txt").write_text("x\n")
    hook("claude", "Stop", stdin=payload("claude_Stop.json", project, transcript))
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="claude-code")
        files = store.session_files(session.session_id)
        markdown = store.show_session(session.session_id).markdown
    assert {f.path: f.change_type for f in files} == {"src/app.py": "modified", "notes.txt": "created"}
    assert "src/app.py" in markdown


@pytest.mark.slow
def test_prompt_hooks_are_answered_by_a_running_daemon(project: Path, tmp_path: Path) -> None:
    """With a daemon up, UserPromptSubmit is forwarded to it: the hook process here has a broken user
    config, so only the daemon (with a good one) can answer; without the daemon the hook fails open."""
    from support.daemon import isolated_env, register, spawn

    daemon_env = isolated_env(tmp_path / "d")
    register(daemon_env, project)  # the daemon runs hooks only for projects registered in its user's registry
    daemon = spawn(daemon_env)
    try:
        broken = tmp_path / "broken-config"
        (broken / "codememory").mkdir(parents=True)
        (broken / "codememory" / "config.toml").write_text("[no_such_section]\n")
        env = {**daemon_env, "XDG_CONFIG_HOME": str(broken)}
        prompt = payload("claude_UserPromptSubmit.json", project)

        def run_hook(**extra: str) -> str:
            done = subprocess.run(
                [str(HOOK), "claude", "UserPromptSubmit"],
                input=prompt,
                capture_output=True,
                text=True,
                timeout=30,
                env={**env, **extra},
            )
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert "deploy-staging" in context(run_hook(), "UserPromptSubmit")
        assert run_hook(CODEMEMORY_HOOK_NO_DAEMON="1") == ""
    finally:
        assert daemon.terminate() == 0
    assert run_hook() == ""  # daemon gone: the hook runs here (and fails open on the broken config)


def test_codex_events(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text(payload("codex_transcript.jsonl", project))
    out = hook("codex", "UserPromptSubmit", stdin=payload("codex_UserPromptSubmit.json", project, transcript)).stdout
    assert "deploy-staging" in context(out, "UserPromptSubmit")
    hook("codex", "Stop", stdin=payload("codex_Stop.json", project, transcript))
    with Store.open(project) as store:
        assert not any("gpu-2" in m.text for m in store.list(limit=50))  # the assistant's note waits
        [session] = store.list_sessions(tool="codex")
    assert session.status == "closed" and session.goal == "How do we deploy the staging server?"
    hook("codex", "UserPromptSubmit", stdin=payload("codex_UserPromptSubmit.json", project, transcript))
    with Store.open(project) as store:
        assert any("gpu-2" in m.text for m in store.list(limit=50))  # the next prompt carried on: accepted


def test_cursor_events(project: Path) -> None:
    out = json.loads(hook("cursor", "sessionStart", stdin=payload("cursor_sessionStart.json", project)).stdout)
    assert list(out) == ["additional_context"] and "deploy-staging" in out["additional_context"]
    assert hook("cursor", "beforeSubmitPrompt", stdin=payload("cursor_beforeSubmitPrompt.json", project)).stdout == ""
    hook("cursor", "stop", stdin=payload("cursor_stop.json", project))
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="cursor")
    assert session.status == "closed"


def test_precompact_reminds_to_checkpoint(project: Path) -> None:
    out = hook("claude", "PreCompact", stdin=payload("claude_PreCompact.json", project)).stdout
    assert "`checkpoint` MCP tool" in out


def test_fail_open(project: Path, tmp_path: Path) -> None:
    log = project / ".codememory" / "logs" / "hooks.log"
    done = hook("claude", "UserPromptSubmit", "--project", str(project), stdin="{not json")
    assert done.stdout == "" and "not a JSON object" in log.read_text()
    done = hook("claude", "NoSuchEvent", stdin=payload("claude_PreCompact.json", project))
    assert done.stdout == "" and "NoSuchEvent" in log.read_text()
    (project / ".codememory" / "memory.db").write_bytes(b"this is not a database" * 100)
    done = hook("claude", "SessionStart", stdin=payload("claude_SessionStart.json", project))
    assert done.stdout == "" and "SessionStart" in log.read_text().splitlines()[-1]
    empty = tmp_path / "nostore"
    empty.mkdir()
    raw = payload("claude_SessionStart.json", empty)
    assert hook("claude", "SessionStart", stdin=raw, cwd=empty).stdout == ""
    assert not (empty / ".codememory").exists()


def test_cli_hook_command(project: Path) -> None:
    from click.testing import CliRunner

    from codememory.cli.hook_cmd import hook as hook_cmd

    result = CliRunner().invoke(hook_cmd, ["claude", "PreCompact"], input=payload("claude_PreCompact.json", project))
    assert result.exit_code == 0 and "checkpoint" in result.output
    result = CliRunner().invoke(hook_cmd, ["claude", "SessionStart", "--project", str(project)], input="[]")
    assert result.exit_code == 0 and result.output == ""


# ------------------------------------------------------------ transcript capture (recorded CLIs)
RECORDED = FIXTURES / "recorded"
TRANSCRIPTS = Path(__file__).parents[1] / "fixtures" / "transcripts"
CLAUDE_SESSION = "528bc694-980c-40c8-b942-618b1b6cb9dd"
CODEX_ROLLOUT = "rollout-2026-11-23T12-20-46-01a2085a-0176-7773-a954-fb989b486aef.jsonl"


def recorded(name: str, root: Path, folder: Path) -> str:
    """A payload recorded from the real CLI (fixtures/hooks/recorded), pointed at this test's folders."""
    text = (RECORDED / name).read_text()
    return text.replace("__TRANSCRIPT_DIR__", str(folder)).replace("__PROJECT__", str(root))


def transcript_lines(name: str, root: Path) -> list[str]:
    return (TRANSCRIPTS / name).read_text().replace("__PROJECT__", str(root)).splitlines(keepends=True)


def log_anchors(root: Path) -> list[str]:
    text = "".join(p.read_text() for p in sorted((root / ".codememory" / "memory").glob("*.md")))
    return [line for line in text.splitlines() if line.startswith("<!-- session:")]


@pytest.mark.slow
def test_claude_stop_captures_new_turns_once(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    stop = recorded("claude_Stop.json", project, tmp_path)
    hook("claude", "Stop", stdin=stop)
    assert len(log_anchors(project)) == 6
    hook("claude", "Stop", stdin=stop)
    assert len(log_anchors(project)) == 6  # nothing read twice
    new_turn = [
        {"type": "user", "uuid": "u-new", "promptId": "p-new", "timestamp": "2026-11-23T13:00:00Z",
         "sessionId": CLAUDE_SESSION, "cwd": str(project), "message": {"role": "user", "content": "add a test"}},
        {"type": "assistant", "timestamp": "2026-11-23T13:00:02Z", "sessionId": CLAUDE_SESSION,
         "message": {"id": "m-new", "role": "assistant", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "Added tests/test_hello.py."}]}},
    ]  # fmt: skip
    with transcript.open("a") as f:
        f.writelines(json.dumps(line) + "\n" for line in new_turn)
    hook("claude", "SessionEnd", stdin=recorded("claude_SessionEnd.json", project, tmp_path))
    anchors = log_anchors(project)
    assert len(anchors) == 7 and anchors[-1] == f"<!-- session:{CLAUDE_SESSION} turn:u-new -->"
    log = (project / ".codememory" / "memory").glob("*.md")
    text = "".join(p.read_text() for p in log)
    assert "- User: add a test" in text and "codememory:" not in text
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="claude-code")
    assert session.status == "closed"


def test_codex_stop_captures_the_turn_before_codex_marks_it_complete(project: Path, tmp_path: Path) -> None:
    lines = transcript_lines("codex-0.169.0.jsonl", project)
    last_done = max(i for i, line in enumerate(lines) if '"task_complete"' in line)
    (tmp_path / CODEX_ROLLOUT).write_text("".join(lines[:last_done]))  # what the file held when Stop ran
    hook("codex", "Stop", stdin=recorded("codex_Stop.json", project, tmp_path))
    anchors = log_anchors(project)
    assert len(anchors) == 3 and "turn:01a2085a-3da5-78c3-aac3-c9a6db493093" in anchors[-1]
    with (tmp_path / CODEX_ROLLOUT).open("a") as f:
        f.writelines(lines[last_done:])
    hook("codex", "Stop", stdin=recorded("codex_Stop.json", project, tmp_path))
    assert len(log_anchors(project)) == 3


def test_recorded_edits_are_journaled(project: Path, tmp_path: Path) -> None:
    hook("claude", "PostToolUse", stdin=recorded("claude_PostToolUse_Write.json", project, tmp_path))
    hook("codex", "PostToolUse", stdin=recorded("codex_PostToolUse_Bash.json", project, tmp_path))  # echo … > greet.py
    journal = project / ".codememory" / "journal"
    claude = (journal / f"claude-{CLAUDE_SESSION}.jsonl").read_text().splitlines()
    codex = (journal / "codex-01a2085a-0176-7773-a954-fb989b486aef.jsonl").read_text().splitlines()
    assert [json.loads(x)["path"] for x in claude] == ["hello.py"]
    assert [json.loads(x)["path"] for x in codex] == ["greet.py"]


def test_failed_transcript_capture_fails_open(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text("".join(transcript_lines("claude-code-2.1.197.jsonl", project)))
    (project / ".codememory" / "capture.lock").mkdir()  # the capture lock cannot be taken
    assert hook("claude", "Stop", stdin=recorded("claude_Stop.json", project, tmp_path)).stdout == ""
    log = project / ".codememory" / "logs" / "hooks.log"
    assert "claude Stop: IsADirectoryError" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600  # the owner's only, like daemon.log
    assert log_anchors(project) == []
    with Store.open(project) as store:
        [session] = store.list_sessions(tool="claude-code")
    assert session.status == "closed"  # the rest of the Stop hook still ran
