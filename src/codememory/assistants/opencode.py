"""OpenCode (npm `opencode-ai`): the codememory plugin in `.opencode/plugin/codememory.js` gives it the memory tools
(over the daemon), the per-call memory block and live capture, so it has no hooks and no MCP server (every tool would
be offered twice); the MCP server goes in `opencode.json` only when the plugin cannot be installed. Its rule block is
in AGENTS.md. Its sessions are read from its own database (codememory.capture.opencode_db), not from transcripts."""

from __future__ import annotations

from codememory.assistants.spec import PLUGIN_TOOLS, Assistant, McpJson, Place, PluginFile, RuleFile

ASSISTANT = Assistant(
    key="opencode",
    display="OpenCode",
    recorded_as="opencode",
    clis=("opencode",),
    marks=("opencode.json", "opencode.jsonc", ".opencode"),
    folders=(".opencode",),
    subfolders=("plugin",),
    files=(
        PluginFile(
            Place(".opencode/plugin/codememory.js"),
            fallback=McpJson(Place("opencode.json"), key="mcp", fields={"type": "local"}, split=False),
        ),
        RuleFile(Place("AGENTS.md"), audience="agents"),
    ),
    tools=PLUGIN_TOOLS,
)
