"""Issue 5's "done when", for Claude Code: in a fresh project, `codememory init --assistants claude` and then
a Claude Code session (the real `claude` CLI, pinned in tests/clis/package.json, talking to a scripted
Anthropic API on 127.0.0.1) leave one session file (the model's MCP `checkpoint` written into the session
the hooks opened, closed at the end with the written file), the captured turn in the daily log and
memories a search finds; the next session gets the relevant memory injected by our hooks; the secret
typed in the first prompt is nowhere in the store.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from codememory.core.project import store_dir
from support.agent_cli import isolated_env as agent_isolated_env
from support.opencode import make_git_project
from support.scripted_anthropic import Reply, Script, ScriptedAnthropic, ToolUse, block_text

pytestmark = pytest.mark.slow  # the real Claude Code CLI

REPO = Path(__file__).resolve().parents[2]
CLIS_DIR = REPO / "tests" / "clis"
CLAUDE_BIN = CLIS_DIR / "node_modules" / ".bin" / "claude"
CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
SECRET_KEY = "sk-proj-" + "Rt5yU7iO9pA1sD3fG5hJ7kL9zX1cV3bN5mQ7wE9r"  # split: not a real key for scanners
NOTE = "rate limits are counted per API key, never per client IP address"
MODEL_NOTE = "the limiter's Redis counters expire after 60 seconds"
GOAL = "Add a rate limiter to the public API"
CHECKPOINT: dict[str, Any] = {
    "slug": "rate-limiter",
    "goal": GOAL,
    "decisions": ["Counters live in Redis, not Memcached: we need atomic INCR with expiry"],
    "work_completed": ["Chose the storage for the counters"],
    "work_pending": ["Write limiter.py and wire it into the API gateway"],
}
PROMPT_1 = (
    "We decided to keep the rate limiter counters in Redis instead of Memcached.\n\n"
    f"*Remember*: {NOTE}.\n\n"
    f"The staging key is {SECRET_KEY}. Please save a checkpoint, then create limiter.py."
)
T = TypeVar("T")
PROMPT_1B = "Thanks, that looks right."
PROMPT_2 = "How should the limiter count requests: per API key or per IP address?"


class ClaudeCodeMissing(RuntimeError):
    pass


def claude_bin() -> Path:
    """The pinned `claude` binary; a clear error (a failure, not a skip) when `npm ci` has not been run."""
    if not CLAUDE_BIN.exists():
        raise ClaudeCodeMissing(
            f"the claude binary is not installed at {CLAUDE_BIN}: "
            f"run `npm ci --prefix {CLIS_DIR.relative_to(REPO)}` (Node.js 20+) first"
        )
    return CLAUDE_BIN


def isolated_env(home: Path) -> dict[str, str]:
    """support.agent_cli's environment for one user (throwaway HOME and XDG folders, this codememory first on PATH,
    every CLI's telemetry and update checks off), with the key the scripted Anthropic API accepts."""
    return {**agent_isolated_env(home), "ANTHROPIC_API_KEY": "scripted-test-key"}


def cm(env: dict[str, str], cwd: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([CODEMEMORY, *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def claude(
    env: dict[str, str], api: ScriptedAnthropic, project: Path, prompt: str, *tools: str, resume: str | None = None
) -> dict[str, Any]:
    """`claude -p PROMPT --output-format json` (`--resume SESSION`) in `project` against the scripted API; its
    JSON result."""
    more = ["--resume", resume] if resume else []
    done = subprocess.run(
        [str(claude_bin()), "-p", prompt, "--allowedTools", " ".join(tools), "--output-format", "json", *more],
        cwd=project,
        env={**env, "ANTHROPIC_BASE_URL": api.base_url},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, f"claude -p failed ({done.returncode})\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    result = json.loads(done.stdout)
    assert isinstance(result, dict) and not result.get("is_error"), done.stdout[-3000:]
    return result


def poll(what: str, find: Callable[[], T | None], timeout: float = 15.0) -> T:
    """What `find()` returns once it is not None (the SessionEnd hook may still be finishing as `claude`
    exits); a failure after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (found := find()) is None:
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return found


def tool_results(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use_id -> the tool_result block Claude Code sent back to the model."""
    out: dict[str, dict[str, Any]] = {}
    for body in requests:
        for message in body.get("messages") or []:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out[str(block.get("tool_use_id"))] = block
    return out


def request_text(body: dict[str, Any]) -> str:
    """Everything the model was shown in one request: the system prompt and every message's text."""
    parts = [block_text(body.get("system"))]
    parts += [block_text(m.get("content")) for m in body.get("messages") or []]
    return "\n".join(parts)


def test_init_then_claude_code_sessions_leave_session_files_turns_memories_and_inject_them(tmp_path: Path) -> None:
    claude_bin()  # fail first, with the npm command, when the CLI is not installed
    project = make_git_project(tmp_path / "api")
    env = isolated_env(tmp_path / "home")
    store = store_dir(project)

    init = cm(env, project, "init", "--assistants", "claude")
    assert init["created"] is True and init["assistants"] == ["claude"]
    assert "codememory" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} <= set(hooks)
    (store / "config.toml").write_text("[capture]\nmin_messages = 1\n", encoding="utf-8")  # one turn is enough

    # session 1: a checkpoint through our MCP server, a Write, then an answer with a Remember note
    limiter = project / "limiter.py"
    script = Script(
        [
            Reply(tool_uses=[ToolUse("mcp__codememory__checkpoint", CHECKPOINT, id="toolu_checkpoint")]),
            Reply(
                "Checkpoint saved. Now the limiter.",
                tool_uses=[ToolUse("Write", {"file_path": str(limiter), "content": "WINDOW = 60\n"}, id="toolu_write")],
            ),
            Reply(f"Created limiter.py.\n\n*Remember*: {MODEL_NOTE}."),
        ]
    )
    with ScriptedAnthropic(script) as api:
        first = claude(env, api, project, PROMPT_1, "Write", "Edit", "Bash", "mcp__codememory__checkpoint")
        requests = api.conversation_requests()
    session = str(first["session_id"])
    assert "## codememory" in request_text(requests[0])  # init's rule block in CLAUDE.md reached the model
    assert script.remaining == 0, f"Claude Code made {len(requests)} model calls, the script expected 3"
    assert limiter.read_text() == "WINDOW = 60\n"
    results = tool_results(requests)
    assert not results["toolu_write"].get("is_error"), results["toolu_write"]
    assert not results["toolu_checkpoint"].get("is_error"), results["toolu_checkpoint"]

    # the checkpoint the model wrote through our MCP server went into the session the hooks opened for
    # this conversation (Claude Code gives stdio MCP servers CLAUDE_CODE_SESSION_ID): one conversation,
    # one session file, with the goal and decision from the model and the file the Write created
    saved = json.loads(block_text(results["toolu_checkpoint"].get("content")))
    checkpoint_id, checkpoint_md = saved["session_id"], Path(saved["markdown_path"])
    assert checkpoint_md.parent == store / "sessions" and "_claude-code_hook-" in checkpoint_md.name

    def closed_session() -> dict[str, Any] | None:
        listed = cm(env, project, "sessions", "list")["sessions"]
        assert [s["session_id"] for s in listed] == [checkpoint_id], listed
        return listed[0] if listed[0]["status"] == "closed" else None

    hook_session = poll("the session to be closed", closed_session)
    assert hook_session["goal"] == GOAL
    markdown = checkpoint_md.read_text()
    assert GOAL in markdown and "Redis, not Memcached" in markdown
    files = cm(env, project, "sessions", "show", checkpoint_id, "--files")["files"]
    assert {"path": "limiter.py", "change_type": "created"} in files, files

    # the captured turn in the daily log, anchored to the Claude Code session
    logs = sorted((store / "memory").glob("*.md"))
    assert len(logs) == 1, logs
    log = logs[0].read_text()
    assert f"session:{session}" in log and "Redis instead of Memcached" in log and NOTE in log, log
    assert "[Tool: Write `limiter.py`]" in log and MODEL_NOTE in log, log

    # the user carries on in the same session: the assistant's Remember note is accepted (its next prompt)
    with ScriptedAnthropic(Script([Reply("Good.")])) as api:
        claude(env, api, project, PROMPT_1B, "Write", "Edit", "Bash", resume=session)

    # capture and extraction (what the daemon does every poll): memories from the claude-code session
    report = cm(env, project, "capture", "--idle-after", "0")
    extracted = [s for p in report["extraction"] for s in p["sessions"] if s["session_id"] == session]
    assert extracted and extracted[0]["source"] == "claude-code" and extracted[0]["status"] == "ok", report
    hits = cm(env, project, "search", "Memcached")["results"]
    assert any(h["category"] == "decision" and "Redis instead of Memcached" in h["text"] for h in hits), hits
    hits = cm(env, project, "search", "API key IP address")["results"]
    assert any(NOTE in h["text"] for h in hits), hits
    hits = cm(env, project, "search", "Redis counters expire")["results"]
    assert any(MODEL_NOTE in h["text"] for h in hits), hits

    # session 2: a prompt about the note: our hooks inject it once (the session start shows only standing
    # instructions; the prompt's block brings the note, the step being about it)
    with ScriptedAnthropic(Script([Reply("Per API key, as the project decided.")])) as api:
        claude(env, api, project, PROMPT_2, "Write", "Edit", "Bash")
        requests = api.conversation_requests()
    assert requests, "Claude Code sent no request in session 2"
    shown = request_text(requests[0])
    blocks = re.findall(r"<project_memory>\n.*?\n</project_memory>", shown, re.S)
    assert sum(b.count(NOTE) for b in blocks) == 1, shown[-4000:]

    # the hooks fail open, logging what went wrong: nothing did
    hooks_log = store / "logs" / "hooks.log"
    assert not hooks_log.exists(), hooks_log.read_text()

    # nothing codememory stored holds the key typed in session 1 (database, WAL, logs, markdown, journals)
    key = SECRET_KEY.encode()
    leaked = [p for p in store.rglob("*") if p.is_file() and key in p.read_bytes()]
    assert not leaked, leaked
