"""Claude Code (npm `@anthropic-ai/claude-code`): hooks in `.claude/settings.json`, the MCP server in `.mcp.json`,
the rule block in CLAUDE.md; transcripts in `~/.claude/projects/<cwd, non-alphanumerics as ->/<session>.jsonl`.
Hook events and payloads: https://docs.anthropic.com/en/docs/claude-code/hooks (FACTS.md, checked on 2.1.330)."""

from __future__ import annotations

import glob
from pathlib import Path

from codememory.assistants.spec import (
    SERVER_NAME,
    Assistant,
    HookEvent,
    HookJson,
    McpJson,
    Payload,
    Place,
    Role,
    RuleFile,
    Transcripts,
    UserDir,
)

HOME = UserDir(".claude", env="CLAUDE_CONFIG_DIR")


def _project_sessions(root: Path) -> str:
    """Claude Code files a session under its working folder with every character but letters and digits made `-`:
    the project's own sessions, and those of its subfolders, are in folders starting with the project's name so."""
    mangled = "".join(c if c.isalnum() and c.isascii() else "-" for c in str(root))
    return f"projects/{glob.escape(mangled)}*/*.jsonl"


ASSISTANT = Assistant(
    key="claude",
    display="Claude Code",
    recorded_as="claude-code",
    aliases=("claude-code",),
    clis=("claude",),
    marks=(".claude",),
    folders=(".claude",),
    files=(
        McpJson(Place(".mcp.json"), fields={"type": "stdio"}),
        HookJson(Place(".claude/settings.json"), fields={"type": "command", "timeout": 10}),  # seconds
        RuleFile(Place("CLAUDE.md"), audience="claude"),
    ),
    events=(
        HookEvent("SessionStart", Role.START, "startup|resume|clear|compact"),
        HookEvent("UserPromptSubmit", Role.PROMPT),
        HookEvent("PostToolUse", Role.EDIT, "Write|Edit|MultiEdit"),
        HookEvent("PreCompact", Role.COMPACT),
        HookEvent("Stop", Role.TURN_END),
        HookEvent("SessionEnd", Role.END),
    ),
    payload=Payload(
        turn_ids=("turn_id", "prompt_id"),
        edit_tools=frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"}),
        shell_tools=frozenset({"Bash"}),
    ),
    compact_reminder=True,
    tool_prefix=f"mcp__{SERVER_NAME}__",
    # Claude Code 2.1.154+ gives its session id to the stdio MCP servers it starts: a checkpoint then lands in
    # the session its hooks opened.
    session_env="CLAUDE_CODE_SESSION_ID",
    # GitHub Copilot CLI runs the hooks in `.claude/settings.json` as well (with COPILOT_CLI=1 set); it has hooks of
    # its own (codememory.assistants.copilot), so those calls do nothing.
    yields_to=("COPILOT_CLI",),
    transcripts=Transcripts(HOME, "projects/*/*.jsonl", reader="claude-code", project_pattern=_project_sessions),
)
