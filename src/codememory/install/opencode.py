"""OpenCode: the MCP server in `opencode.json` (never in `opencode.jsonc`: comments are not edited), the plugin
file `.opencode/plugin/codememory.js` (wholly ours), the rule block in AGENTS.md."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from codememory.install.edits import Assistant, FileOp, Skipped, _Skip, server_install, server_strip
from codememory.install.rule_block import rule_block_op

PLUGIN_FILE = "codememory.js"
PLUGIN_ENV = "CODEMEMORY_OPENCODE_PLUGIN"
_PLUGIN_MARK = 'PLUGIN_ID = "codememory"'  # a line every version of our plugin file has


def opencode_plugin_source() -> str | None:
    """The OpenCode plugin's code: $CODEMEMORY_OPENCODE_PLUGIN, else the bundle shipped in the package
    (codememory/data/opencode/, built from integrations/opencode/src by `npm run build`)."""
    here = Path(__file__).resolve().parents[1]  # the codememory package
    candidates = [Path(p) for p in [os.environ.get(PLUGIN_ENV, "")] if p] + [here / "data" / "opencode" / PLUGIN_FILE]
    for path in candidates:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        if _PLUGIN_MARK in text:
            return text
    return None


def plugin_install(source: str) -> Callable[[str], str]:
    def install(text: str) -> str:
        if text and _PLUGIN_MARK not in text:
            raise _Skip(f"a different .opencode/plugin/{PLUGIN_FILE} exists; left alone")
        return source

    return install


def plugin_strip(text: str) -> str:
    return "" if _PLUGIN_MARK in text else text


def file_ops(root: Path, exe: str) -> tuple[list[FileOp], list[Skipped]]:
    ops: list[FileOp] = []
    skipped: list[Skipped] = []
    if (root / "opencode.jsonc").exists() and not (root / "opencode.json").exists():
        skipped.append(
            Skipped("opencode.jsonc", "JSONC (comments) is not edited automatically; add the MCP server by hand")
        )
    else:
        server = {"type": "local", "command": [exe, "mcp"]}
        ops.append(
            FileOp(
                "opencode",
                root / "opencode.json",
                "json",
                server_install("mcp", server),
                server_strip("mcp"),
                "MCP server",
            )
        )
    source = opencode_plugin_source()
    if source is None:
        skipped.append(
            Skipped(
                f".opencode/plugin/{PLUGIN_FILE}",
                "plugin: its file is not part of this install (set CODEMEMORY_OPENCODE_PLUGIN to "
                "src/codememory/data/opencode/codememory.js of a codememory checkout)",
            )
        )
    else:
        ops.append(
            FileOp(
                "opencode",
                root / ".opencode" / "plugin" / PLUGIN_FILE,
                "text",
                plugin_install(source),
                plugin_strip,
                "plugin",
                backup=False,
            )
        )
    ops.append(rule_block_op("opencode", root / "AGENTS.md"))
    return ops, skipped


ASSISTANT = Assistant(
    name="opencode",
    clis=("opencode",),
    marks=("opencode.json", "opencode.jsonc", ".opencode"),
    folders=(".opencode",),
    subfolders=("plugin",),
    file_ops=file_ops,
)
