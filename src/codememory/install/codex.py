"""Codex: the MCP server in the user's `$CODEX_HOME/config.toml` (one entry serves every project: `codememory
mcp` finds the project from its working folder), the hooks in `.codex/hooks.json`, the rule block in AGENTS.md."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from codememory.install.edits import (
    SERVER_NAME,
    Assistant,
    FileOp,
    Skipped,
    block_span,
    nested_hook_install,
    nested_hook_strip,
    text_install,
    text_strip,
)
from codememory.install.rule_block import rule_block_op

TOML_START = "# >>> codememory (added by `codememory init`; removed by `codememory init --uninstall`)"
TOML_END = "# <<< codememory"
# Codex: the events Codex 0.169 documents (no PreCompact/SessionEnd); its edit tool is not named Write/Edit,
# so PostToolUse has no matcher and `codememory hook codex PostToolUse` filters.
CODEX_HOOKS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", "startup|resume|clear|compact"),
    ("UserPromptSubmit", None),
    ("PostToolUse", None),
    ("Stop", None),
)


def codex_home() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def codex_owned_elsewhere(text: str) -> bool:
    """A [mcp_servers.codememory] the user wrote themselves (outside our markers)."""
    span = block_span(text, TOML_START, TOML_END)
    outside = text if span is None else text[: span[0]] + text[span[1] :]
    servers = tomllib.loads(outside).get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def _refuse(text: str) -> str | None:
    if codex_owned_elsewhere(text):
        return f"[mcp_servers.{SERVER_NAME}] is already configured outside codememory's markers; left alone"
    return None


def file_ops(root: Path, exe: str) -> tuple[list[FileOp], list[Skipped]]:
    table = f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(exe)}\nargs = {json.dumps(['mcp'])}"
    ops = [
        FileOp(
            "codex",
            codex_home() / "config.toml",
            "toml",
            text_install(table, TOML_START, TOML_END),
            text_strip(TOML_START, TOML_END),
            "MCP server",
            shared=True,
            refuse=_refuse,
        ),
        FileOp(
            "codex",
            root / ".codex" / "hooks.json",
            "json",
            nested_hook_install(CODEX_HOOKS, "codex", exe),
            nested_hook_strip,
            "hooks",
        ),
        rule_block_op("codex", root / "AGENTS.md"),
    ]
    return ops, []


ASSISTANT = Assistant(
    name="codex",
    clis=("codex",),
    marks=(".codex",),
    folders=(".codex",),
    file_ops=file_ops,
    user_folders=lambda: (codex_home(),),
)
