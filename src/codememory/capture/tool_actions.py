"""A tool call as the use rules read it (text/usage_cues.Action): which tools run a command, edit or create a
file, read one, or only look, and which of their arguments hold the command, the path, the text written and the text
replaced, as each assistant (OpenCode, Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor) names them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codememory.capture.turns import ToolCall
from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.shell_lines import looks_only
from codememory.text.usage_cues import Action

MAX_ACTION_CHARS = 20_000  # of one tool call's arguments read
_SHELL_TOOLS = {"bash", "shell", "run_shell_command", "exec_command", "local_shell", "shell_command", "terminal"}
_EDIT_TOOLS = {"edit", "write", "multiedit", "apply_patch", "patch", "write_file", "replace", "create", "str_replace"}
_EDIT_TOOLS |= {"notebookedit", "edit_file", "create_file"}
_READ_TOOLS = {"read", "read_file", "view", "read_many_files", "cat", "open"}
_LOOK_TOOLS = {"grep", "glob", "list", "ls", "find", "search_file_content", "list_directory", "codebase_search"}
_LOOK_TOOLS |= {"notebookread", "webfetch", "websearch", "web_fetch", "google_web_search"}  # pages looked up
_PATH_KEYS = ("filePath", "file_path", "path", "notebook_path", "absolute_path", "target_file")
_NEW_KEYS = ("newString", "new_string", "content", "new_source", "file_text", "new_str")
_OLD_KEYS = ("oldString", "old_string", "old_str")
_PATCH_FILE_RE = lazy_pattern(r"^\*\*\* (?:Add|Update) File: (.+)$", re.MULTILINE)


def _strings(value: Any, out: list[str], budget: int) -> int:
    """Every string in a JSON value, depth first, up to `budget` characters."""
    if budget <= 0:
        return budget
    if isinstance(value, str):
        out.append(value[:budget])
        return budget - len(out[-1])
    if isinstance(value, Mapping):
        for item in value.values():
            budget = _strings(item, out, budget)
    elif isinstance(value, list | tuple):
        for item in value:
            budget = _strings(item, out, budget)
    return budget


def _added(new: str, old: str) -> str:
    """The lines of `new` that `old` does not have (what an edit adds)."""
    before = {line.strip() for line in old.splitlines()}
    return "\n".join(line for line in new.splitlines() if line.strip() not in before)


def _command(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value if isinstance(v, str))[:MAX_ACTION_CHARS]
    return value[:MAX_ACTION_CHARS] if isinstance(value, str) else ""


def action_of(call: ToolCall) -> Action:
    """A tool call as the rules read it (see text.usage_cues.Action)."""
    name = call.tool.lower().rsplit("__", 1)[-1]
    args = call.input
    paths = [args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k]]
    if name in _SHELL_TOOLS or (isinstance(args.get("command"), str | list) and not paths):
        raw = args.get("command") or args.get("cmd")
        command = _command(raw)
        # Codex writes ["bash", "-lc", "<line>"]: whether it only looks is a question about the line it runs
        line = command
        if isinstance(raw, list) and len(raw) == 3 and raw[1] in ("-c", "-lc") and isinstance(raw[2], str):
            line = raw[2]
        return Action(call.tool, shell=(command,) if command else (), look=bool(command) and looks_only(line))
    if name in _EDIT_TOOLS:
        added: list[str] = []
        replaced: list[str] = []
        removed: list[str] = []
        raw_edits = args.get("edits")
        edits: list[Any] = raw_edits if isinstance(raw_edits, list) else [args]
        for edit in edits:
            if not isinstance(edit, Mapping):
                continue
            new = next((edit[k] for k in _NEW_KEYS if isinstance(edit.get(k), str)), "")
            old = next((edit[k] for k in _OLD_KEYS if isinstance(edit.get(k), str)), "")
            added.append(_added(new[:MAX_ACTION_CHARS], old[:MAX_ACTION_CHARS]))
            replaced.append(old[:MAX_ACTION_CHARS])
            removed.append(_added(old[:MAX_ACTION_CHARS], new[:MAX_ACTION_CHARS]))
        patch = next((args[k] for k in ("input", "patch") if isinstance(args.get(k), str)), "")
        if patch:
            paths += _PATCH_FILE_RE.findall(patch)
            lines = patch.splitlines()
            added.append("\n".join(ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("++")))
            replaced.append("\n".join(ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("--")))
            removed.append(_added(replaced[-1], added[-1]))
        text = "\n".join(a for a in added if a)[:MAX_ACTION_CHARS]
        gone = "\n".join(r for r in replaced if r)[:MAX_ACTION_CHARS]
        out = "\n".join(r for r in removed if r)[:MAX_ACTION_CHARS]
        return Action(call.tool, paths=tuple(paths), edited=tuple(paths), added=text, replaced=gone, removed=out)
    if name in _READ_TOOLS:
        return Action(call.tool, paths=tuple(paths), look=True)
    texts: list[str] = []
    _strings(args, texts, MAX_ACTION_CHARS)
    return Action(call.tool, paths=tuple(paths), text="\n".join(texts), look=name in _LOOK_TOOLS)
