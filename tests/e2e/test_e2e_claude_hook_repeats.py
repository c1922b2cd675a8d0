"""Issue 14, item 4, with the real Claude Code CLI (pinned in tests/clis) against the scripted Anthropic API: one
session of four prompts (`claude -p --session-id`, then `--resume` of it, so SessionStart runs as `startup` and then
`resume`) in a project set up by `codememory init --assistants claude`. Claude Code keeps every hook's context in
the session, so what the model is sent at the last prompt holds everything injected in the session: no memory id
may be in it twice, the session-start block and the prompt blocks must not repeat each other, and the prompt that
asks the same question again must add no block at all. The session's JSONL transcript on disk says the same.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_e2e_claude import claude_bin, cm, isolated_env

from support.opencode import make_git_project
from support.scripted_anthropic import Reply, Script, ScriptedAnthropic, block_text

pytestmark = pytest.mark.slow  # the real Claude Code CLI

BLOCK_RE = re.compile(
    r"(SessionStart|UserPromptSubmit) hook additional context: (<project_memory>\n.*?</project_memory>)", re.S
)
ID_RE = re.compile(r"^- `(mem_[0-9a-f]{8})`", re.M)
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
OTHERS = [
    "Roll back a staging deploy with the rollback-staging make target",
    "The staging deploy needs the VPN to reach the cluster",
    "The rate limiter keeps its counters in Redis with a 60 second expiry",
    "Rate limited requests get 429 with a Retry-After header",
    "Webhook signatures are HMAC-SHA256 over the raw request body",
]
DEPLOY = "How do we deploy the staging server, and how do we roll a staging deploy back?"
PROMPTS = [
    DEPLOY,
    "Where does the rate limiter keep its counters, and what do rate limited clients get back?",
    DEPLOY,  # nothing new: no block at all
    "How are webhook signatures computed?",
]


def run(env: dict[str, str], project: Path, prompt: str, session: str, first: bool) -> dict[str, Any]:
    """One prompt of the session; the last request Claude Code sent to the model for it."""
    resume = ["--session-id", session] if first else ["--resume", session]
    with ScriptedAnthropic(Script([Reply("Noted.")])) as api:
        done = subprocess.run(
            [str(claude_bin()), "-p", prompt, *resume, "--output-format", "json"],
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": api.base_url},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        requests = api.conversation_requests()
    assert done.returncode == 0, f"claude -p failed ({done.returncode})\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert json.loads(done.stdout)["session_id"] == session
    assert requests, "Claude Code sent the model nothing"
    return requests[-1]


def blocks(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(hook event, block) for each hook context the request carries, in conversation order."""
    text = "\n".join(block_text(m.get("content")) for m in body.get("messages") or [])
    return BLOCK_RE.findall(text)


def transcript_blocks(home: Path, session: str) -> list[tuple[str, str]]:
    """(hook event, block) for each hook context Claude Code saved in the session's JSONL transcript."""
    [path] = list((home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        attachment = entry.get("attachment") if entry.get("type") == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "hook_additional_context":
            out += [(str(attachment.get("hookName")), c) for c in attachment.get("content") or [] if "mem_" in c]
    return out


def test_one_claude_code_session_never_gets_a_memory_twice(tmp_path: Path) -> None:
    claude_bin()  # fail first, with the npm command, when the CLI is not installed
    project = make_git_project(tmp_path / "api")
    home = tmp_path / "home"
    env = isolated_env(home)
    cm(env, project, "init", "--assistants", "claude")
    standing = IMPORTANT[:3]
    ids = {
        text: cm(env, project, "store", text, "--importance", "0.9", "--category", "convention")["memory"]["id"]
        for text in standing
    }
    ids |= {text: cm(env, project, "store", text, "--importance", "0.9")["memory"]["id"] for text in IMPORTANT[3:]}
    ids |= {text: cm(env, project, "store", text, "--importance", "0.2")["memory"]["id"] for text in OTHERS}

    session = str(uuid.uuid4())
    seen: list[tuple[str, str]] = []
    added = []
    for n, prompt in enumerate(PROMPTS):
        now = blocks(run(env, project, prompt, session, first=n == 0))
        assert now[: len(seen)] == seen, "the session's earlier context changed"
        added.append(now[len(seen) :])
        seen = now

    # what the model was sent with the last prompt holds the whole session: each memory at most once
    every = [i for _event, block in seen for i in ID_RE.findall(block)]
    assert len(every) == len(set(every)), f"a memory was injected twice in one session: {every}"
    assert [[event for event, _ in blocks_of] for blocks_of in added] == [
        ["SessionStart", "UserPromptSubmit"],
        ["UserPromptSubmit"],
        [],  # the repeated question: no block, not even an empty one
        ["UserPromptSubmit"],
    ]
    start, *prompts = (block for _event, block in seen)
    assert sorted(ID_RE.findall(start)) == sorted(ids[t] for t in standing)
    found = {i for block in prompts for i in ID_RE.findall(block)}
    # the prompts brought what the start block did not hold: the memories about each question
    assert {ids[OTHERS[0]], ids[OTHERS[2]], ids[OTHERS[4]]} <= found
    assert not found & set(ID_RE.findall(start))

    # the transcript Claude Code keeps on disk holds the same blocks, each memory once
    saved = [i for _event, block in transcript_blocks(home, session) for i in ID_RE.findall(block)]
    assert sorted(saved) == sorted(every)
    hooks_log = project / ".codememory" / "logs" / "hooks.log"
    assert not hooks_log.exists(), hooks_log.read_text()
