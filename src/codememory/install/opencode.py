"""OpenCode's plugin file `.opencode/plugin/codememory.js` (wholly ours; codememory.assistants.opencode).

One tool set: the plugin's tools (memory_search/get/store/transcript and the session tools, over the warm daemon) are
the ones OpenCode gets, so the MCP server is not registered as well (every tool would be offered twice, on every
call); a `mcp.codememory` of ours in `opencode.json` from an older init is taken out. Only when the plugin cannot be
installed (another file of that name is in the way, or the bundle is not part of this install) is the MCP server
registered instead, so the agent still has the tools (never in `opencode.jsonc`: comments are not edited)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from codememory.assistants.spec import SERVER_NAME, PluginFile
from codememory.install.edits import FileOp, Skipped, _Skip, mcp_json_op

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


def plugin_blocked(path: Path, source: str | None) -> str | None:
    """Why the plugin cannot be installed at `path`, or None when it can."""
    if source is None:
        return "its file is not part of this install"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return f"{path.name} cannot be read"
    return None if not text or _PLUGIN_MARK in text else f"a different .opencode/plugin/{PLUGIN_FILE} is in the way"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def plugin_ops(assistant: str, file: PluginFile, root: Path, cli: str) -> tuple[list[FileOp], list[Skipped]]:
    ops: list[FileOp] = []
    skipped: list[Skipped] = []
    source = opencode_plugin_source()
    plugin = file.place.resolve(root)
    shown = file.place.path
    blocked = plugin_blocked(plugin, source)
    config = file.fallback.place.resolve(root)
    jsonc = config.with_suffix(".jsonc")
    if jsonc.exists() and not config.exists():
        if blocked:
            skipped.append(
                Skipped(jsonc.name, "JSONC (comments) is not edited automatically; add the MCP server by hand")
            )
        elif f'"{SERVER_NAME}"' in _read(jsonc):
            why = "not edited automatically: if it registers the codememory MCP server, remove that by hand (the "
            skipped.append(Skipped(jsonc.name, why + "plugin's tools replace it)"))
    else:
        what = f"MCP server (instead of the plugin's tools: {blocked})" if blocked else "MCP server"
        retired = "" if blocked else "the plugin's tools replace it"
        ops.append(mcp_json_op(assistant, file.fallback, config, cli, retired=retired, what=what))
    if source is None:
        skipped.append(
            Skipped(
                shown,
                "plugin: its file is not part of this install (set CODEMEMORY_OPENCODE_PLUGIN to "
                "src/codememory/data/opencode/codememory.js of a codememory checkout)",
            )
        )
    else:
        ops.append(FileOp(assistant, plugin, "text", plugin_install(source), plugin_strip, "plugin", backup=False))
    return ops, skipped
