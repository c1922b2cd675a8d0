"""Issue 14, item 4: within one assistant session the hooks inject a memory once (again only when its text
changed, or after a compaction), a prompt with nothing new gets no output at all, and the session-start block and
the prompt blocks never repeat each other. Driven through the installed `codememory-hook`, as the assistants run
it: in its own process, and with a running daemon answering the prompt hooks (POST /hook)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from codememory.assistants import REGISTRY
from codememory.assistants.spec import Assistant as Spec
from codememory.assistants.spec import Output, Role
from codememory.operations.hook_events import AFTER_COMPACT, CHECKPOINT_REMINDER
from support.daemon import Daemon, isolated_env, register, spawn

HOOK = Path(sys.executable).with_name("codememory-hook")
ID_RE = re.compile(r"`(mem_[0-9a-f]{8})`")

# The first three are standing instructions (conventions marked essential): they fill the session-start block; the
# others only a prompt they are relevant to can bring in.
IMPORTANT = [
    "Staging deploys use the deploy-staging make target",
    "The staging server runs Ubuntu 24.04",
    "Rate limits are counted per API key, never per client IP address",
    "Database migrations use alembic; never downgrade in production",
    "Integration tests run with pytest against a real Postgres",
    "Authentication uses short-lived JWT access tokens",
    "Logging is structured JSON with the request id on every line",
    "Dependencies are managed with uv, never pip install",
]
STANDING = IMPORTANT[:3]
FOUND_BY_PROMPTS = [
    "Roll back a staging deploy with the rollback-staging make target",
    "The staging deploy needs the VPN to reach the cluster",
    "The rate limiter keeps its counters in Redis with a 60 second expiry",
    "Rate limited requests get 429 with a Retry-After header",
    "Webhook signatures are HMAC-SHA256 over the raw request body",
]
DEPLOY = "How do we deploy the staging server, and how do we roll a staging deploy back?"
LIMITS = "Where does the rate limiter keep its counters, and what do rate limited clients get back?"
WEBHOOKS = "How are webhook signatures computed?"


@dataclass
class Assistant:
    name: str
    start: str  # the session-start event
    prompt: str  # the prompt event (Cursor's beforeSubmitPrompt takes no context)
    output: Output


def _assistant(spec: Spec) -> Assistant:
    start = next(e.name for e in spec.events if e.role is Role.START)
    prompt = next(e.name for e in spec.events if e.role is Role.PROMPT)
    return Assistant(spec.key, start, prompt, spec.output)


ASSISTANTS = {spec.key: _assistant(spec) for spec in REGISTRY if spec.events}


@dataclass
class Hooks:
    """`codememory-hook` for one project in one environment (with or without a daemon to answer it)."""

    root: Path
    env: dict[str, str]
    daemon: Daemon | None = None

    def run(self, assistant: str, event: str, session: str, **fields: Any) -> str:
        if assistant == "cursor":
            body = {"hook_event_name": event, "conversation_id": session, "workspace_roots": [str(self.root)]}
        else:
            body = {"hook_event_name": event, "session_id": session, "transcript_path": "", "cwd": str(self.root)}
        done = subprocess.run(
            [str(HOOK), assistant, event],
            input=json.dumps({**body, **fields}),
            capture_output=True,
            text=True,
            timeout=60,
            env=self.env,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def context(self, assistant: str, event: str, session: str, **fields: Any) -> str:
        """The context the hook injected ('' for an empty stdout: nothing at all was printed)."""
        out = self.run(assistant, event, session, **fields)
        if not out:
            return ""
        data = json.loads(out)
        output = ASSISTANTS[assistant].output
        if output is Output.HOOK_SPECIFIC:
            assert data["hookSpecificOutput"]["hookEventName"] == event
            text = data["hookSpecificOutput"]["additionalContext"]
        else:
            assert list(data) == [output.value]
            text = data[output.value]
        assert isinstance(text, str) and text.strip(), out  # never an empty block
        return text

    def log(self) -> str:
        path = self.root / ".codememory" / "logs" / "hooks.log"
        return path.read_text() if path.exists() else ""


def ids(text: str) -> list[str]:
    return ID_RE.findall(text)


def make_project(root: Path) -> dict[str, str]:
    """A project whose memories are the lists above; their ids by text."""
    root.mkdir(parents=True)
    store, _ = Store.init(root)
    with store:
        made = {text: store.add(text, category="convention", importance=0.9).memory.id for text in STANDING}
        made |= {text: store.add(text, importance=0.9).memory.id for text in IMPORTANT[len(STANDING) :]}
        made |= {text: store.add(text, importance=0.3).memory.id for text in FOUND_BY_PROMPTS}
    return made


def edit(root: Path, memory_id: str, text: str) -> None:
    """Change a memory's text in place, as a teammate's edit or a repair could (the API only adds memories)."""
    with sqlite3.connect(root / ".codememory" / "memory.db") as db:
        db.execute(
            "UPDATE memories SET text = ?, updated_at = '2026-11-24T00:00:00.000Z' WHERE id = ?", (text, memory_id)
        )


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    env = isolated_env(tmp_path_factory.mktemp("hook-daemon"))
    running = spawn(env)
    try:
        yield running
    finally:
        assert running.terminate() == 0


@pytest.fixture(params=["in-process", "daemon"])
def hooks(request: pytest.FixtureRequest, tmp_path: Path) -> Hooks:
    """The hooks of a fresh project, run in their own process or answered by a running daemon. With the daemon,
    the hook processes get a user config codememory refuses: only the daemon can inject anything, so a hook that
    quietly ran in its own process would fail the test instead of passing it."""
    root = tmp_path / "proj"
    if request.param == "in-process":
        return Hooks(root, {**os.environ, "CODEMEMORY_HOOK_NO_DAEMON": "1"})
    running: Daemon = request.getfixturevalue("daemon")
    broken = tmp_path / "broken-config"
    (broken / "codememory").mkdir(parents=True)
    (broken / "codememory" / "config.toml").write_text("[no_such_section]\n")
    return Hooks(root, {**running.env, "XDG_CONFIG_HOME": str(broken)}, running)


def setup(hooks: Hooks) -> dict[str, str]:
    made = make_project(hooks.root)
    if hooks.daemon is not None:
        register(hooks.daemon.env, hooks.root)
    return made


# ------------------------------------------------------------------------------------------------ a session
# Gemini CLI and Copilot CLI keep the context in the conversation as Claude Code does (their hooks' tests:
# test_hooks_gemini_copilot.py); the same session for each. Slow: every prompt is a hook process (seconds each).
@pytest.mark.slow
@pytest.mark.parametrize("assistant", ["claude", "codex", "gemini", "copilot"])
def test_a_session_of_prompts_injects_each_memory_once(hooks: Hooks, assistant: str) -> None:
    made = setup(hooks)
    a = ASSISTANTS[assistant]
    start = hooks.context(assistant, a.start, "s1", source="startup")
    assert sorted(ids(start)) == sorted(made[t] for t in STANDING)
    blocks = [start]
    deploy = hooks.context(assistant, a.prompt, "s1", prompt=DEPLOY)
    # the prompt's block holds only what the start block did not: the staging memories it found beyond them
    assert deploy and made[FOUND_BY_PROMPTS[0]] in ids(deploy)
    assert not set(ids(deploy)) & set(ids(start))
    blocks.append(deploy)
    limits = hooks.context(assistant, a.prompt, "s1", prompt=LIMITS)
    assert made[FOUND_BY_PROMPTS[2]] in ids(limits)
    blocks.append(limits)
    # the same questions again: nothing new, so nothing at all on stdout
    assert hooks.run(assistant, a.prompt, "s1", prompt=DEPLOY) == ""
    assert hooks.run(assistant, a.prompt, "s1", prompt=LIMITS) == ""
    blocks.append(hooks.context(assistant, a.prompt, "s1", prompt=WEBHOOKS))
    assert made[FOUND_BY_PROMPTS[4]] in ids(blocks[-1])
    every = [i for block in blocks for i in ids(block)]
    assert len(every) == len(set(every)), "a memory was injected twice in one session"
    # a resumed session still holds all of it: its session start has nothing to add
    assert hooks.run(assistant, a.start, "s1", source="resume") == ""
    # another session of the same assistant starts from nothing: what the first one was shown is shown again
    again = hooks.context(assistant, a.prompt, "s2", prompt=DEPLOY)
    assert made[FOUND_BY_PROMPTS[0]] in ids(again)
    assert hooks.log() == ""


@pytest.mark.slow
@pytest.mark.parametrize("assistant", ["claude", "codex"])
def test_a_changed_memory_is_injected_again_once(hooks: Hooks, assistant: str) -> None:
    made = setup(hooks)
    a = ASSISTANTS[assistant]
    start = hooks.context(assistant, a.start, "s1", source="startup")
    first = hooks.context(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY)
    rollback, deploy = made[FOUND_BY_PROMPTS[0]], made[IMPORTANT[0]]
    assert rollback in ids(first) and deploy in ids(start)
    edit(hooks.root, rollback, "Roll back a staging deploy with `make rollback-staging TAG=previous`")
    edit(hooks.root, deploy, "Staging deploys use the deploy-staging-v2 make target since November")
    changed = hooks.context(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY)
    assert rollback in ids(changed) and "TAG=previous" in changed
    assert hooks.run(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY) == ""
    # the start block's standing instruction changed too: shown again once, by whichever block comes first
    if deploy not in ids(changed):
        resumed = hooks.context(assistant, a.start, "s1", source="resume")
        assert ids(resumed) == [deploy] and "deploy-staging-v2" in resumed
    else:
        assert "deploy-staging-v2" in changed
    assert hooks.run(assistant, a.start, "s1", source="resume") == ""


@pytest.mark.slow
@pytest.mark.parametrize("assistant", ["claude", "codex"])
def test_after_a_compaction_memories_are_shown_again_once(hooks: Hooks, assistant: str) -> None:
    made = setup(hooks)
    a = ASSISTANTS[assistant]
    start = hooks.context(assistant, a.start, "s1", source="startup")
    deploy = hooks.context(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY)
    assert hooks.run(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY) == ""
    if assistant == "claude":  # Claude Code runs PreCompact; Codex is set up with SessionStart(compact) only
        assert hooks.run(assistant, "PreCompact", "s1", trigger="auto").strip() == CHECKPOINT_REMINDER
    after = hooks.context(assistant, a.start, "s1", source="compact")
    assert sorted(ids(after)) == sorted(ids(start)) and after.endswith(AFTER_COMPACT)
    again = hooks.context(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY)
    assert sorted(ids(again)) == sorted(ids(deploy)) and made[FOUND_BY_PROMPTS[0]] in ids(again)
    assert hooks.run(assistant, "UserPromptSubmit", "s1", prompt=DEPLOY) == ""


def test_claude_session_start_after_compaction_without_precompact(hooks: Hooks) -> None:
    """SessionStart(compact) alone forgets what was injected too (a PreCompact hook that did not run)."""
    setup(hooks)
    hooks.context("claude", "SessionStart", "s1", source="startup")
    deploy = hooks.context("claude", "UserPromptSubmit", "s1", prompt=DEPLOY)
    hooks.context("claude", "SessionStart", "s1", source="compact")
    assert sorted(ids(hooks.context("claude", "UserPromptSubmit", "s1", prompt=DEPLOY))) == sorted(ids(deploy))


def test_a_resumed_session_gets_only_what_is_new(hooks: Hooks) -> None:
    setup(hooks)
    hooks.context("claude", "SessionStart", "s1", source="startup")
    with Store.open(hooks.root) as store:
        new = store.add("Production deploys need a signed release tag", category="convention", importance=1.0).memory.id
    resumed = hooks.context("claude", "SessionStart", "s1", source="resume")
    assert ids(resumed) == [new]
    assert "Use the codememory MCP tools" not in resumed  # the hint is in the transcript already
    assert hooks.run("claude", "SessionStart", "s1", source="resume") == ""


def test_a_payload_without_a_session_id_is_never_held_back(hooks: Hooks) -> None:
    """Conversations the hook cannot tell apart must not hide memories from each other."""
    made = setup(hooks)
    for _ in range(2):
        shown = hooks.context("claude", "UserPromptSubmit", "", prompt=DEPLOY)
        assert made[FOUND_BY_PROMPTS[0]] in ids(shown)
    assert not list((hooks.root / ".codememory" / "journal").glob("*.injected.json"))


def test_cursor_session_start_once_per_conversation(hooks: Hooks) -> None:
    made = setup(hooks)
    start = hooks.context("cursor", "sessionStart", "c1")
    assert sorted(ids(start)) == sorted(made[t] for t in STANDING)
    assert hooks.run("cursor", "beforeSubmitPrompt", "c1", prompt=DEPLOY) == ""  # Cursor takes no context here
    assert hooks.run("cursor", "sessionStart", "c1") == ""
    edit(hooks.root, made[IMPORTANT[1]], "The staging server runs Ubuntu 26.04")
    assert ids(hooks.context("cursor", "sessionStart", "c1")) == [made[IMPORTANT[1]]]
    assert hooks.run("cursor", "sessionStart", "c1") == ""
    assert sorted(ids(hooks.context("cursor", "sessionStart", "c2"))) == sorted(ids(start))  # a new conversation


# --------------------------------------------------------------------------------------- the daemon's part
def test_a_daemon_answer_the_hook_never_got_marks_nothing_injected(daemon: Daemon, tmp_path: Path) -> None:
    """The daemon returns what it injected instead of recording it: an answer `codememory-hook` stopped waiting
    for (it then runs the event itself) must not hide those memories from the rest of the session."""
    root = tmp_path / "proj"
    made = setup(Hooks(root, {}, daemon))
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": DEPLOY}
    body = {"assistant": "claude", "event": "UserPromptSubmit", "payload": json.dumps(payload)}
    answer = daemon.client().request("POST", "/hook", body).data
    shown = ids(json.loads(answer["output"])["hookSpecificOutput"]["additionalContext"])
    assert made[FOUND_BY_PROMPTS[0]] in shown and answer["injected"]["version"] == 1
    journal = root / ".codememory" / "journal"
    assert not list(journal.glob("*.injected.json"))  # the daemon wrote no record
    # so the hook, run here, injects the same memories: nothing was lost with the answer
    local = Hooks(root, {**os.environ, "CODEMEMORY_HOOK_NO_DAEMON": "1"})
    assert ids(local.context("claude", "UserPromptSubmit", "s1", prompt=DEPLOY)) == shown
    assert local.run("claude", "UserPromptSubmit", "s1", prompt=DEPLOY) == ""
    # an answer with nothing new carries no record to save
    again = daemon.client().request("POST", "/hook", body).data
    assert again == {"output": ""}
