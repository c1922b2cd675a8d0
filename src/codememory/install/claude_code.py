"""Claude Code: the MCP server in `.mcp.json`, the hooks in `.claude/settings.json`, the rule block in
CLAUDE.md (FACTS.md: Claude Code's hook events and their stdin)."""

from __future__ import annotations

from pathlib import Path

from codememory.install.edits import (
    Assistant,
    FileOp,
    Skipped,
    nested_hook_install,
    nested_hook_strip,
    server_install,
    server_strip,
)
from codememory.install.rule_block import rule_block_op

CLAUDE_HOOKS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", "startup|resume|clear|compact"),
    ("UserPromptSubmit", None),
    ("PostToolUse", "Write|Edit|MultiEdit"),
    ("PreCompact", None),
    ("Stop", None),
    ("SessionEnd", None),
)


def file_ops(root: Path, exe: str) -> tuple[list[FileOp], list[Skipped]]:
    server = {"type": "stdio", "command": exe, "args": ["mcp"]}
    ops = [
        FileOp(
            "claude",
            root / ".mcp.json",
            "json",
            server_install("mcpServers", server),
            server_strip("mcpServers"),
            "MCP server",
        ),
        FileOp(
            "claude",
            root / ".claude" / "settings.json",
            "json",
            nested_hook_install(CLAUDE_HOOKS, "claude", exe),
            nested_hook_strip,
            "hooks",
        ),
        rule_block_op("claude", root / "CLAUDE.md"),
    ]
    return ops, []


ASSISTANT = Assistant(name="claude", clis=("claude",), marks=(".claude",), folders=(".claude",), file_ops=file_ops)
