"""What codememory put into one model request, read from the body a scripted model server recorded
(support.scripted_llm for OpenCode, support.scripted_anthropic for Claude Code): the exact text the model
receives, cut into codememory's parts and counted with codememory's one token estimator.

    view = opencode_view(llm.requests[-1])
    view.tokens()          # {"tools": …, "cold_start": …, "hud": …, "instructions": …}
    view.hud_ids()         # ids the <developer_context> block(s) showed
    view.repeated_ids()    # ids found in more than one place of this request

    blocks = claude_hook_blocks(api.requests[-1])   # SessionStart / UserPromptSubmit additionalContext

The parts are found by what they are, not by how they are wired, so the same reader works whether
OpenCode offers the plugin's tools, the MCP server's or both, and wherever a block is put:

- tool definitions: every tool whose name starts with `memory_` or `codememory_` or whose description
  names codememory; and OpenCode's MCP resource tools (`list_mcp_resources`, …), which OpenCode adds only
  when an MCP server is registered (`generic`: theirs in name, ours in cost when codememory is the only
  MCP server). A tool costs the compact JSON of its definition, as the client sends it.
- `<project_memory>` blocks (the cold start) and `<developer_context>` blocks (the HUD), in any message
  but tool results.
- instructions: the rule block `codememory init` wrote between its markers in AGENTS.md / CLAUDE.md (found
  by its text, `rule_block_text`: Claude Code drops the HTML-comment markers when it shows CLAUDE.md) and
  OpenCode's `<server name="codememory">` MCP instructions.
- results of calls to codememory's tools: the memory ids they returned (`results[].id`, `memories[].id`,
  `memory.id`, not the ids of links).
- Claude Code puts a hook's additionalContext in a message after "<Event> hook additional context: ";
  the context runs to the closing tag of the element it starts with (else to the next blank line).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codememory.install.rule_block import RULE_END, RULE_START
from codememory.text.tokens import estimate_tokens

ID_RE = re.compile(r"\bmem_[0-9a-f]{8}\b")
HUD_TAG = "developer_context"
COLD_TAG = "project_memory"
MCP_RESOURCE_TOOLS = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})
_HUD_RE = re.compile(rf"<{HUD_TAG}>.*?</{HUD_TAG}>", re.S)
_COLD_RE = re.compile(rf"<{COLD_TAG}>.*?</{COLD_TAG}>", re.S)
_MCP_INSTRUCTIONS_RE = re.compile(r'<server name="codememory">.*?</server>', re.S)
_HOOK_RE = re.compile(r"(SessionStart|UserPromptSubmit) hook additional context: ")
_OPEN_TAG_RE = re.compile(r"<([A-Za-z_][\w-]*)>")


@dataclass
class Block:
    """One piece of codememory text in a request."""

    kind: str  # tool name, "cold_start", "hud", "rules", "mcp_instructions", "SessionStart", …
    text: str
    ids: list[str] = field(default_factory=list)  # memory ids in it, in order, repeats kept

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass
class ToolDef:
    name: str
    text: str  # the definition's compact JSON
    generic: bool = False  # an MCP resource tool

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of text parts / blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def ids_in(text: str) -> list[str]:
    return ID_RE.findall(text)


def result_ids(text: str) -> list[str]:
    """The memory ids a recall tool returned (JSON results/memories/memory), else every id in the text."""
    try:
        data = json.loads(text)
    except ValueError:
        return ids_in(text)
    if not isinstance(data, dict):
        return ids_in(text)
    found: list[Any] = []
    for key in ("results", "memories"):
        items = data.get(key)
        if isinstance(items, list):
            found += [item.get("id") for item in items if isinstance(item, dict)]
    memory = data.get("memory")
    if isinstance(memory, dict):
        found.append(memory.get("id"))
    return [i for i in found if isinstance(i, str) and ID_RE.fullmatch(i)]


def rule_block_text(path: Path) -> str | None:
    """The rule block between codememory's markers in an instructions file (markers left out), if any."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    start, end = text.find(RULE_START), text.find(RULE_END)
    if start < 0 or end < start:
        return None
    return text[start + len(RULE_START) : end].strip() or None


def _rules(text: str, rules: str | None) -> list[Block]:
    return [Block("rules", rules)] * text.count(rules) if rules else []


# The session tools have generic names; in OpenCode the plugin offers them with the memory tools.
SESSION_TOOLS = frozenset({"checkpoint", "search_sessions", "list_sessions", "get_session_files"})


def is_codememory_tool(name: str, description: str) -> bool:
    return name.startswith(("memory_", "codememory_")) or name in SESSION_TOOLS or "codememory" in description.lower()


# ------------------------------------------------------------------------------------------ OpenCode
@dataclass
class OpenCodeView:
    tools: list[ToolDef]
    cold: list[Block]
    hud: list[Block]
    instructions: list[Block]
    tool_results: list[Block]  # what codememory's tools returned, as far as this request carries it

    def tokens(self) -> dict[str, int]:
        return {
            "tools": sum(t.tokens for t in self.tools),
            "cold_start": sum(b.tokens for b in self.cold),
            "hud": sum(b.tokens for b in self.hud),
            "instructions": sum(b.tokens for b in self.instructions),
        }

    def hud_ids(self) -> list[str]:
        return list(dict.fromkeys(i for b in self.hud for i in b.ids))

    def cold_ids(self) -> list[str]:
        return list(dict.fromkeys(i for b in self.cold for i in b.ids))

    def repeated_ids(self, *, tool_results: bool = True) -> dict[str, int]:
        """Ids that occur more than once among the injected blocks (and tool results): id -> occurrences."""
        places = [*self.cold, *self.hud, *(self.tool_results if tool_results else [])]
        counts = Counter(i for b in places for i in b.ids)
        return {i: n for i, n in counts.items() if n > 1}


def opencode_view(body: dict[str, Any], rules: str | None = None) -> OpenCodeView:
    """codememory's parts of one OpenAI-style chat request (as OpenCode sends it); `rules`: the rule block's
    text (`rule_block_text(project / "AGENTS.md")`)."""
    tools: list[ToolDef] = []
    for tool in body.get("tools") or []:
        fn = tool.get("function") or {}
        name, description = str(fn.get("name", "")), str(fn.get("description", ""))
        generic = name in MCP_RESOURCE_TOOLS
        if generic or is_codememory_tool(name, description):
            text = json.dumps(tool, separators=(",", ":"), ensure_ascii=False)
            tools.append(ToolDef(name, text, generic))
    own = {t.name for t in tools if not t.generic}
    cold: list[Block] = []
    hud: list[Block] = []
    instructions: list[Block] = []
    results: list[Block] = []
    calls: dict[str, str] = {}  # tool_call_id -> codememory tool name
    for message in body.get("messages") or []:
        role, text = message.get("role"), text_of(message.get("content"))
        for call in message.get("tool_calls") or []:
            name = str((call.get("function") or {}).get("name", ""))
            if name in own:
                calls[str(call.get("id"))] = name
        if role == "tool":
            name = calls.get(str(message.get("tool_call_id")), "")
            if name:
                results.append(Block(name, text, result_ids(text)))
            continue
        cold += [Block("cold_start", m.group(0), ids_in(m.group(0))) for m in _COLD_RE.finditer(text)]
        hud += [Block("hud", m.group(0), ids_in(m.group(0))) for m in _HUD_RE.finditer(text)]
        if role == "system":
            instructions += _rules(text, rules)
            instructions += [Block("mcp_instructions", m.group(0)) for m in _MCP_INSTRUCTIONS_RE.finditer(text)]
    return OpenCodeView(tools, cold, hud, instructions, results)


# --------------------------------------------------------------------------------------- Claude Code
@dataclass
class HookBlock(Block):
    message_index: int = -1  # where in `messages` Claude Code put it


def _hook_context(text: str, start: int) -> str:
    """The additionalContext that starts at `start`: to the closing tag of the element it opens with,
    else to the next blank line."""
    opening = _OPEN_TAG_RE.match(text, start)
    if opening:
        close = f"</{opening.group(1)}>"
        end = text.find(close, start)
        if end >= 0:
            return text[start : end + len(close)]
    end = text.find("\n\n", start)
    return text[start : end if end >= 0 else len(text)]


def claude_hook_blocks(body: dict[str, Any]) -> list[HookBlock]:
    """The hooks' additionalContext in one Anthropic Messages request, in message order (the
    conversation's history included: earlier prompts' contexts stay in the transcript)."""
    out: list[HookBlock] = []
    for index, message in enumerate(body.get("messages") or []):
        text = text_of(message.get("content"))
        for marker in _HOOK_RE.finditer(text):
            context = _hook_context(text, marker.end())
            out.append(HookBlock(marker.group(1), context, ids_in(context), message_index=index))
    return out


def claude_prompt_index(body: dict[str, Any], prompt: str) -> int:
    """Index of the last user message that holds `prompt` (-1 when none does)."""
    messages = body.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and prompt in text_of(message.get("content")):
            return index
    return -1


def claude_rule_blocks(body: dict[str, Any], rules: str | None) -> list[Block]:
    """The CLAUDE.md rule block wherever Claude Code shows it (a system-reminder in the first user message)."""
    return [b for message in body.get("messages") or [] for b in _rules(text_of(message.get("content")), rules)]
