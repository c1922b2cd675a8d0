"""Codex CLI (npm `@openai/codex`): the MCP server in the user's `$CODEX_HOME/config.toml` (one entry serves every
project: `codememory mcp` finds the project from its working folder), hooks in `.codex/hooks.json` (Claude Code's
layout and payloads), the rule block in AGENTS.md; transcripts in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`.
Codex 0.169 documents SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and Stop (no PreCompact or SessionEnd:
SessionStart with source "compact" marks a compaction); its edit tool is not named Write/Edit, so PostToolUse has no
matcher and the hook filters (FACTS.md; https://developers.openai.com/codex/hooks)."""

from __future__ import annotations

from codememory.assistants.spec import (
    Assistant,
    HookEvent,
    HookJson,
    McpToml,
    Payload,
    Place,
    Role,
    RuleFile,
    Transcripts,
    UserDir,
)

HOME = UserDir(".codex", env="CODEX_HOME")

ASSISTANT = Assistant(
    key="codex",
    display="Codex",
    recorded_as="codex",
    clis=("codex",),
    marks=(".codex",),
    folders=(".codex",),
    user_folders=(HOME,),
    files=(
        McpToml(Place("config.toml", user=HOME)),
        HookJson(Place(".codex/hooks.json"), fields={"type": "command", "timeout": 10}),  # seconds
        RuleFile(Place("AGENTS.md"), audience="agents"),
    ),
    events=(
        HookEvent("SessionStart", Role.START, "startup|resume|clear|compact"),
        HookEvent("UserPromptSubmit", Role.PROMPT),
        HookEvent("PostToolUse", Role.EDIT),
        HookEvent("Stop", Role.TURN_END),
    ),
    payload=Payload(
        turn_ids=("turn_id", "prompt_id"),
        edit_tools=frozenset({"apply_patch"}),
        shell_tools=frozenset({"Bash", "shell", "exec_command"}),  # it also runs apply_patch through its shell
    ),
    tool_prefix="",  # its MCP tools sit in the `mcp__codememory` namespace under their own names
    transcripts=Transcripts(HOME, "sessions/*/*/*/rollout-*.jsonl", reader="codex"),
)
