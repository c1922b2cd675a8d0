"""Cursor: the MCP server in `.cursor/mcp.json`, hooks in `.cursor/hooks.json` (its own flat layout, version 1), the
rule block in `.cursorrules`. Its sessionStart may return `{"additional_context": …}`; its prompt event takes no
context (its output may only allow or block the prompt). https://cursor.com/docs/agent/hooks (FACTS.md, docs only)."""

from __future__ import annotations

from codememory.assistants.spec import Assistant, HookEvent, HookJson, McpJson, Output, Payload, Place, Role, RuleFile

ASSISTANT = Assistant(
    key="cursor",
    display="Cursor",
    recorded_as="cursor",
    clis=("cursor", "cursor-agent"),
    marks=(".cursor",),
    folders=(".cursor",),
    files=(
        McpJson(Place(".cursor/mcp.json")),
        HookJson(Place(".cursor/hooks.json"), nested=False, version=1),
        RuleFile(Place(".cursorrules"), audience="cursor"),
    ),
    events=(
        HookEvent("sessionStart", Role.START),
        HookEvent("beforeSubmitPrompt", Role.PROMPT),
        HookEvent("afterFileEdit", Role.EDIT),
        HookEvent("stop", Role.TURN_END),
    ),
    payload=Payload(session=("conversation_id",), source=None, last_message=None),
    output=Output.SNAKE_CASE,
    context_roles=frozenset({Role.START}),
    tool_prefix="",  # Cursor calls a tool by server and tool name
)
