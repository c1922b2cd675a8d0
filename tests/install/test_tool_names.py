"""What each assistant is offered and told: every tool name its rule block (and the OpenCode plugin's own text)
mentions is a tool that assistant is offered, spelled as that assistant shows it to its model; the OpenCode plugin's
tools are the MCP tools of the same names, with the same descriptions and arguments as the MCP server lists them.

Offered, per assistant (each spec's `tools` and `tool_prefix`, codememory.assistants): Claude Code, the MCP server's
tools as `mcp__codememory__<tool>` (tests/e2e/test_e2e_claude.py calls one so); Codex, the MCP server's tools in its
`mcp__codememory` namespace by their own names; Cursor, the MCP server's tools by name; Gemini CLI, as
`mcp_codememory_<tool>`; Copilot CLI, as `codememory-<tool>`; OpenCode, the plugin's tools
(tests/e2e/test_e2e_tool_set.py: the real binary offers each once)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from codememory.assistants import REGISTRY, spec
from codememory.install import rule_block
from codememory.mcp.server import create_server
from conftest import Invoke
from support.plugin_tools import plugin_texts, plugin_tools

pytestmark = pytest.mark.slow  # node imports the plugin bundle


@pytest.fixture(scope="module")
def mcp_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    server = create_server(tmp_path_factory.mktemp("mcp"))  # the store opens on the first call: never here
    listed = anyio.run(server.list_tools)
    return {t.name: {"description": t.description, "parameters": t.inputSchema} for t in listed}


@pytest.fixture(scope="module")
def plugin() -> dict[str, dict[str, Any]]:
    return plugin_tools()


def offered(mcp: set[str], plugin: set[str]) -> dict[str, set[str]]:
    """The words each assistant's model reads as tool names: the prefixed names and, where the prefix is a namespace
    or is not part of the word (`codememory-memory_search`), the tools' own names."""
    out = {}
    for a in REGISTRY:
        tools = plugin if a.tools == spec.PLUGIN_TOOLS else mcp
        words = {a.tool_name(t) for t in tools}
        if not a.tool_prefix or (not a.tool_prefix[-1].isalnum() and a.tool_prefix[-1] != "_"):
            words |= tools
        out[a.key] = words
    return out


def every_spelling(names: set[str]) -> set[str]:
    """Each tool name as any assistant may show it (and as older rule blocks wrote it)."""
    forms = ("{}", "mcp__codememory__{}", "codememory_{}", "mcp_codememory_{}")
    return {form.format(name) for name in names for form in forms}


def named_tools(text: str, names: set[str]) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9_]+", text)) & every_spelling(names)


def block(path: Path) -> str:
    text = path.read_text()
    return text[text.index(rule_block.RULE_START) : text.index(rule_block.RULE_END)]


def test_the_installer_knows_both_tool_sets(mcp_tools: dict[str, Any], plugin: dict[str, Any]) -> None:
    assert set(mcp_tools) == spec.MCP_TOOLS
    assert set(plugin) == spec.PLUGIN_TOOLS


def test_each_rule_block_names_only_tools_its_assistants_are_offered(
    invoke: Invoke, tmp_path: Path, mcp_tools: dict[str, Any], plugin: dict[str, Any]
) -> None:
    result = invoke("--project", tmp_path, "init", "--assistants", "all", "--no-global")
    assert result.exit_code == 0, result.output
    available = offered(set(mcp_tools), set(plugin))
    readers: dict[str, list[str]] = {}
    for a in REGISTRY:
        for f in a.files:
            if isinstance(f, spec.RuleFile):
                readers.setdefault(f.place.path, []).append(a.key)
    assert readers["AGENTS.md"] == ["codex", "opencode", "copilot"] and readers["GEMINI.md"] == ["gemini"]
    for file, assistants in readers.items():
        text = block(tmp_path / file)
        named = named_tools(text, set(mcp_tools))
        for assistant in assistants:
            assert named <= available[assistant], (file, assistant, sorted(named - available[assistant]))
            wanted = {"memory_search", "memory_store", "checkpoint", "search_sessions"}
            spelled = {n for n in available[assistant] if any(n.endswith(w) for w in wanted)}
            assert len(named & spelled) == len(wanted), (file, assistant, sorted(named))


def test_the_plugins_own_text_names_only_its_tools(plugin: dict[str, Any], mcp_tools: dict[str, Any]) -> None:
    for name, text in plugin_texts().items():
        named = named_tools(text, set(mcp_tools))
        assert named and named <= set(plugin), (name, sorted(named - set(plugin)))


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    """What a model reads of an argument: its type, words and allowed values (not defaults: the daemon applies
    those)."""
    keep = ("type", "description", "enum", "pattern", "minimum", "maximum", "required")
    out = {k: schema[k] for k in keep if k in schema}
    if "items" in schema:
        out["items"] = _shape(schema["items"])
    if "properties" in schema:
        out["properties"] = {name: _shape(s) for name, s in schema["properties"].items()}
    if "anyOf" in schema:
        out["anyOf"] = [_shape(s) for s in schema["anyOf"]]
    return out


def test_the_plugins_tools_are_the_mcp_tools_as_listed(plugin: dict[str, Any], mcp_tools: dict[str, Any]) -> None:
    assert set(plugin) <= set(mcp_tools)
    for name, tool in plugin.items():
        listed = mcp_tools[name]
        assert tool["description"] == listed["description"], name
        assert _shape(tool["parameters"]) == _shape(listed["parameters"]), (
            name,
            json.dumps(_shape(tool["parameters"])),
            json.dumps(_shape(listed["parameters"])),
        )
