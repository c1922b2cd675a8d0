"""What the hooks read out of an assistant's payloads and transcript lines: the files an edit wrote and the
assistant's own text (for `*Remember*:` notes). Pure functions over parsed JSON; which tools write files is in each
assistant's spec (codememory.assistants)."""

from __future__ import annotations

import re
from typing import Any

from codememory.assistants.spec import Payload
from codememory.core.lazy_pattern import lazy_pattern

_PATCH_FILE_RE = lazy_pattern(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def prompt_text(payload: dict[str, Any], fields: Payload) -> str:
    """The user's prompt in a payload, without the hook context an assistant put in front of it."""
    text = payload.get(fields.prompt)
    if not isinstance(text, str):
        return ""
    for tag in fields.prompt_context_tags:
        while text.lstrip().startswith(f"<{tag}>") and f"</{tag}>" in text:
            text = text.split(f"</{tag}>", 1)[1]
    return text.strip()


def assistant_texts(entry: Any) -> list[str]:
    """The assistant's text in one transcript line: Claude Code (`{"type": "assistant", "message":
    {"content": [...]}}`), Codex (`{"type": "response_item", "payload": {"type": "message", "role":
    "assistant", "content": [{"type": "output_text", ...}]}}`), Gemini CLI (`{"type": "gemini", "content": "..."}`)
    or Copilot CLI (`{"type": "assistant.message", "data": {"content": "..."}}`)."""
    if not isinstance(entry, dict):
        return []
    message: Any = None
    if entry.get("type") == "gemini" and isinstance(entry.get("content"), str):
        return [entry["content"]] if entry["content"] else []
    if entry.get("type") == "assistant.message":
        data = entry.get("data")
        content = data.get("content") if isinstance(data, dict) else None
        return [content] if isinstance(content, str) and content else []
    if entry.get("type") == "assistant":
        message = entry.get("message")
    elif entry.get("type") == "response_item":
        payload = entry.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "message" and payload.get("role") == "assistant":
            message = payload
    elif entry.get("role") == "assistant":
        message = entry
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    texts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            continue
        if block.get("type") in ("text", "output_text"):
            texts.append(block["text"])
    return texts


def edited_paths(payload: dict[str, Any], fields: Payload) -> list[str]:
    """Files written by a tool-use event (an edit tool naming its file, a patch tool's `*** Update File:` lines, a
    shell command that obviously writes: Codex runs apply_patch through its shell tool) or named by the event itself
    (Cursor's afterFileEdit)."""
    if isinstance(payload.get("file_path"), str):
        return [payload["file_path"]]
    tool_input = payload.get("tool_input")
    if payload.get("tool_name") in fields.shell_tools and isinstance(tool_input, dict):
        command = tool_input.get("command")
        if isinstance(command, str):
            from codememory.capture.codex import shell_written

            return shell_written(command)
        return []
    if payload.get("tool_name") not in fields.edit_tools:
        return []
    if isinstance(tool_input, dict):
        for key in ("file_path", "notebook_path", "path"):
            if isinstance(tool_input.get(key), str) and tool_input[key]:
                return [tool_input[key]]
        patch = tool_input.get("input") or tool_input.get("patch") or tool_input.get("command")
    else:
        patch = tool_input
    if isinstance(patch, list):
        patch = "\n".join(str(p) for p in patch)
    return [m.strip() for m in _PATCH_FILE_RE.findall(patch)] if isinstance(patch, str) else []
