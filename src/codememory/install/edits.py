"""How `codememory init` edits an assistant's files: what one edit is (`FileOp`), the JSON edits (our MCP server
and hook commands merged in, every other key kept) and the text edits (a block between markers), and how our
entries are recognised (a server named `codememory` whose command runs codememory; hook commands
`codememory-hook <assistant> <event>`, or `codememory hook ...` from older installs)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.assistants import REGISTRY
from codememory.assistants.spec import SERVER_NAME, McpJson
from codememory.core.lazy_pattern import lazy_pattern

JsonDoc = dict[str, Any]


class _Skip(Exception):
    """An edit not done, with the reason (a file or entry that is not ours is in the way). Control flow inside
    install/, reported as a skipped step; never reaches a caller."""


@dataclass
class FileOp:
    """One file init edits for an assistant: parsed as `kind`, changed by `install`, restored by `strip`."""

    assistant: str
    path: Path
    kind: str  # json | text | toml
    install: Callable[[Any], Any]
    strip: Callable[[Any], Any]
    what: str  # e.g. "MCP server", "hooks"
    backup: bool = True  # False: a file wholly ours (the OpenCode plugin): no backup, never restored
    # A file outside the project that serves every project (Codex's config.toml): kept on uninstall while
    # other projects are registered.
    shared: bool = False
    # On install, a reason to leave an existing file alone (our entry written there by the user), or None.
    refuse: Callable[[str], str | None] | None = None
    # Set when our entry here is replaced by another: install then takes it out as uninstall would (older installs
    # had it), and this says why (OpenCode's MCP server, once the plugin gives OpenCode the same tools).
    retired: str = ""


@dataclass(frozen=True)
class Skipped:
    """A file of an assistant's that init does not touch, decided before reading it."""

    file: str
    reason: str


# ------------------------------------------------------------------------------------ ownership tests
# Ours: `codememory-hook <assistant> <event>` (by name, or by an absolute path from older installs) and, from older
# installs still, the full CLI's `codememory hook ...`: any name or alias of a registered assistant.
_NAMES = "|".join(sorted((re.escape(n) for a in REGISTRY for n in a.names), key=len, reverse=True))
_OUR_HOOK = lazy_pattern(rf"codememory(-hook)?(\.exe)?['\"]?\s+(hook\s+)?({_NAMES})\s")
COMMAND_KEYS = ("command", "bash", "powershell")  # where an assistant's hook entry keeps its command


def is_our_hook(entry: Any) -> bool:
    return isinstance(entry, dict) and any(
        isinstance(entry.get(key), str) and bool(_OUR_HOOK.search(entry[key])) for key in COMMAND_KEYS
    )


def runs_codememory(server: Any) -> bool:
    if not isinstance(server, dict):
        return False
    command = server.get("command")
    parts = command if isinstance(command, list) else [command]
    return any(isinstance(p, str) and "codememory" in p for p in parts)


def hook_command(hook: str, assistant: str, event: str) -> str:
    """The hook's command line: the lean `codememory-hook`, which imports neither click nor the CLI and hands
    prompt events to a running daemon, so a prompt waits tens of milliseconds instead of a full CLI start."""
    return f"{shlex.quote(hook)} {assistant} {event}"


# ------------------------------------------------------------------------------ JSON transformations
def shape_error(what: str) -> ValueError:
    return ValueError(f"unexpected shape: {what}")


HookEntry = Callable[[str], dict[str, Any]]  # an event's name -> our command entry for it


def _hooks_object(doc: JsonDoc) -> dict[str, Any]:
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise shape_error('"hooks" is not an object')
    return hooks


def nested_hook_install(events: Iterable[tuple[str, str | None]], entry: HookEntry) -> Callable[[JsonDoc], JsonDoc]:
    """Claude Code's layout: {"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}."""
    events = tuple(events)

    def install(doc: JsonDoc) -> JsonDoc:
        doc = nested_hook_strip(doc, drop_empty=False)
        hooks = _hooks_object(doc)
        for event, matcher in events:
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [entry(event)]
            hooks.setdefault(event, []).append(group)
        return doc

    return install


def flat_hook_install(events: Iterable[str], entry: HookEntry, version: int) -> Callable[[JsonDoc], JsonDoc]:
    """Cursor's and Copilot CLI's layout: {"version": 1, "hooks": {event: [{...command...}]}}."""
    events = tuple(events)

    def install(doc: JsonDoc) -> JsonDoc:
        doc = flat_hook_strip(doc, drop_empty=False)
        if doc.setdefault("version", version) != version:
            raise shape_error(f'"version" is {doc["version"]!r}, only version {version} is supported')
        hooks = _hooks_object(doc)
        for event in events:
            hooks.setdefault(event, []).append(entry(event))
        return doc

    return install


def flat_hook_strip(doc: JsonDoc, drop_empty: bool = True) -> JsonDoc:
    had_hooks = "hooks" in doc
    doc = strip_hooks(doc, drop_empty, lambda entry: None if is_our_hook(entry) else entry)
    if drop_empty and had_hooks and list(doc) == ["version"]:
        del doc["version"]  # nothing of the user's was left: the file goes
    return doc


def strip_hooks(doc: JsonDoc, drop_empty: bool, keep: Callable[[Any], Any | None]) -> JsonDoc:
    """A copy of `doc` whose `hooks.<event>` lists hold `keep(entry)` for each entry (None drops it);
    events (and `hooks`) that only held our entries disappear when `drop_empty`."""
    doc = json.loads(json.dumps(doc))
    hooks = doc.get("hooks")
    if hooks is None:
        return doc
    if not isinstance(hooks, dict):
        raise shape_error('"hooks" is not an object')
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            raise shape_error(f'"hooks.{event}" is not a list')
        kept = [k for k in (keep(e) for e in entries) if k is not None]
        if kept or not drop_empty or len(kept) == len(entries):
            hooks[event] = kept
        else:
            del hooks[event]
    if drop_empty and not hooks:
        del doc["hooks"]
    return doc


def _without_our_commands(group: Any) -> Any | None:
    """Claude Code's layout: a group {matcher?, hooks: [commands]} loses our commands (and goes if empty)."""
    inner = group.get("hooks") if isinstance(group, dict) else None
    if isinstance(inner, list) and any(is_our_hook(h) for h in inner):
        rest = [h for h in inner if not is_our_hook(h)]
        return {**group, "hooks": rest} if rest else None
    return group


def nested_hook_strip(doc: JsonDoc, drop_empty: bool = True) -> JsonDoc:
    return strip_hooks(doc, drop_empty, _without_our_commands)


def server_install(key: str, server: dict[str, Any]) -> Callable[[JsonDoc], JsonDoc]:
    def install(doc: JsonDoc) -> JsonDoc:
        doc = json.loads(json.dumps(doc))
        servers = doc.setdefault(key, {})
        if not isinstance(servers, dict):
            raise shape_error(f'"{key}" is not an object')
        current = servers.get(SERVER_NAME)
        if current is not None and not runs_codememory(current):
            raise _Skip(f'a different "{SERVER_NAME}" server is already configured in "{key}"; left alone')
        servers[SERVER_NAME] = server
        return doc

    return install


def server_strip(key: str) -> Callable[[JsonDoc], JsonDoc]:
    def strip(doc: JsonDoc) -> JsonDoc:
        doc = json.loads(json.dumps(doc))
        servers = doc.get(key)
        if isinstance(servers, dict) and runs_codememory(servers.get(SERVER_NAME)):
            del servers[SERVER_NAME]
            if not servers:
                del doc[key]
        return doc

    return strip


def mcp_server_entry(file: McpJson, cli: str) -> dict[str, Any]:
    if file.split:
        return {**file.fields, "command": cli, "args": ["mcp"]}
    return {**file.fields, "command": [cli, "mcp"]}


def mcp_json_op(assistant: str, file: McpJson, path: Path, cli: str, *, retired: str = "", what: str = "") -> FileOp:
    return FileOp(
        assistant,
        path,
        "json",
        server_install(file.key, mcp_server_entry(file, cli)),
        server_strip(file.key),
        what or "MCP server",
        retired=retired,
    )


# ------------------------------------------------------------------------------ text transformations
def block_span(text: str, start: str, end: str) -> tuple[int, int] | None:
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i)
    if j < 0:
        raise ValueError(f"found {start!r} without {end!r}")
    j += len(end)
    if text[j : j + 1] == "\n":
        j += 1
    return i, j


def text_install(block: str, start: str, end: str) -> Callable[[str], str]:
    full = f"{start}\n{block.rstrip()}\n{end}\n"

    def install(text: str) -> str:
        span = block_span(text, start, end)
        if span:
            return text[: span[0]] + full + text[span[1] :]
        if not text:
            return full
        return text + ("\n" if text.endswith("\n") else "\n\n") + full

    return install


def text_strip(start: str, end: str) -> Callable[[str], str]:
    def strip(text: str) -> str:
        span = block_span(text, start, end)
        if not span:
            return text
        before, after = text[: span[0]], text[span[1] :]
        if not after and before.endswith("\n\n"):
            before = before[:-1]
        return before + after

    return strip
