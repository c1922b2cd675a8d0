"""Cursor: the MCP server in `.cursor/mcp.json`, the hooks in `.cursor/hooks.json` (Cursor's own flat shape,
version 1), the rule block in `.cursorrules`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codememory.install.edits import (
    Assistant,
    FileOp,
    JsonDoc,
    Skipped,
    hook_command,
    is_our_hook,
    server_install,
    server_strip,
    shape_error,
    strip_hooks,
)
from codememory.install.rule_block import rule_block_op

CURSOR_HOOKS = ("sessionStart", "beforeSubmitPrompt", "afterFileEdit", "stop")


def cursor_hooks_install(exe: str) -> Callable[[JsonDoc], JsonDoc]:
    def install(doc: JsonDoc) -> JsonDoc:
        doc = cursor_hooks_strip(doc, drop_empty=False)
        if doc.setdefault("version", 1) != 1:
            raise shape_error(f'"version" is {doc["version"]!r}, only version 1 is supported')
        hooks = doc.setdefault("hooks", {})
        for event in CURSOR_HOOKS:
            hooks.setdefault(event, []).append({"command": hook_command(exe, "cursor", event)})
        return doc

    return install


def cursor_hooks_strip(doc: JsonDoc, drop_empty: bool = True) -> JsonDoc:
    had_hooks = "hooks" in doc
    doc = strip_hooks(doc, drop_empty, lambda entry: None if is_our_hook(entry) else entry)
    if drop_empty and had_hooks and doc == {"version": 1}:
        del doc["version"]  # nothing of the user's was left: the file goes
    return doc


def file_ops(root: Path, exe: str) -> tuple[list[FileOp], list[Skipped]]:
    server = {"command": exe, "args": ["mcp"]}
    ops = [
        FileOp(
            "cursor",
            root / ".cursor" / "mcp.json",
            "json",
            server_install("mcpServers", server),
            server_strip("mcpServers"),
            "MCP server",
        ),
        FileOp(
            "cursor", root / ".cursor" / "hooks.json", "json", cursor_hooks_install(exe), cursor_hooks_strip, "hooks"
        ),
        rule_block_op("cursor", root / ".cursorrules"),
    ]
    return ops, []


ASSISTANT = Assistant(
    name="cursor", clis=("cursor", "cursor-agent"), marks=(".cursor",), folders=(".cursor",), file_ops=file_ops
)
