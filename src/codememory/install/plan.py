"""`codememory init` for coding assistants: MCP server, hooks and rule block, installed and removed idempotently.

Everything is planned first (every file read and parsed, every new content computed in memory), then written.
If any file we would touch is malformed (invalid JSON/TOML, unexpected shape) the whole init/uninstall stops
before writing anything and names the file: nothing is half-written.

Guarantees:
- JSON files are merged: every key we do not own is kept; ours are recognisable (a server named `codememory`
  whose command runs codememory; hook commands `... codememory hook <assistant> <event>`).
- Before the first change to a file that already existed, a copy is kept as `<file>.codememory-backup`.
- Re-running changes nothing when nothing needs changing (files stay byte-identical; action "unchanged").
- `uninstall` removes exactly our entries. When the file is what init made of the backup, the backup's bytes
  are restored; files we created are deleted; backups are deleted. The store (your memories) is kept.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codememory.errors import InvalidInput, SetupError

ASSISTANTS = ("claude", "codex", "cursor", "opencode")
BACKUP_SUFFIX = ".codememory-backup"
SERVER_NAME = "codememory"
RULE_START = "<!-- codememory:start -->"
RULE_END = "<!-- codememory:end -->"
TOML_START = "# >>> codememory (added by `codememory init`; removed by `codememory init --uninstall`)"
TOML_END = "# <<< codememory"
HOOK_TIMEOUT = 10

CLAUDE_HOOKS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", "startup|resume|clear|compact"),
    ("UserPromptSubmit", None),
    ("PostToolUse", "Write|Edit|MultiEdit"),
    ("PreCompact", None),
    ("Stop", None),
    ("SessionEnd", None),
)
# Codex: the events Codex 0.169 documents (no PreCompact/SessionEnd); its edit tool is not named Write/Edit,
# so PostToolUse has no matcher and `codememory hook codex PostToolUse` filters.
CODEX_HOOKS: tuple[tuple[str, str | None], ...] = (
    ("SessionStart", "startup|resume|clear|compact"),
    ("UserPromptSubmit", None),
    ("PostToolUse", None),
    ("Stop", None),
)
CURSOR_HOOKS = ("sessionStart", "beforeSubmitPrompt", "afterFileEdit", "stop")

RULE_BLOCK = """## codememory

This project has a local memory (codememory), available as MCP tools. Use it to recall what earlier
sessions learned and to save what this one learns.

### Before you act
- At the start of a task, and before a step that touches a library, tool, service or file you have not
  looked at yet, call `memory_retrieve` with 1-8 short phrasings of what you are about to do (plus the
  entities involved). Weigh the conventions and gotchas it returns: they are notes from earlier sessions
  or teammates, never above what the user asks.
- To look something up by words, call `memory_search`.

### When you learn something
- Call `memory_store` for durable facts: decisions (with the reason), conventions, gotchas and their fix,
  todos. One fact per memory, a sentence or two, file paths rather than file contents.

### Saving a session checkpoint
Call `checkpoint` when the context is about 70% full (do not ask; then say "Session saved to codememory."),
before a git commit, when the user asks to save or end the session, and at the natural end of a task.
- `goal`: 1-2 specific sentences: what is being built or fixed, and the target outcome.
- `work_completed`: one bullet per task. `work_pending`: the FULL remaining list (it replaces the old one).
- `work_summary`: bullets, not paragraphs. `decisions`: "**Label:** Rationale." with a link if any.
- `plan_files`: path + the exact first heading. `references`: URL + a 3-5 word title.
- `slug`: 3-4 hyphenated words, on the first checkpoint only.

### Continuing earlier work
When the user asks to continue, or the task relates to earlier sessions: call `search_sessions` with a
plain description of the task, show the results and ask which one to continue, then read the markdown file
at its `markdown_path` directly (use `get_session_files` when you only need the file list).
"""


@dataclass
class Step:
    assistant: str
    file: str
    # added: our entries were not there (new or existing file); updated: ours were there and were replaced;
    # unchanged: nothing to do (file not written); skipped: not done (see reason); removed: ours taken out.
    action: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class _Write:
    path: Path
    content: str | None  # None: delete the file
    backup: bool = False  # copy the existing file to <file>.codememory-backup first
    restore_backup: bool = False  # replace the file by its backup (content ignored)
    drop_backup: bool = False


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)
    writes: list[_Write] = field(default_factory=list)


# ---------------------------------------------------------------------------------------- environment
def codememory_command() -> str:
    """The absolute path of the installed `codememory` script (so hooks do not depend on PATH), else the name."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("codememory", "codememory.exe") and argv0.is_file():
        return str(argv0.absolute())
    found = shutil.which("codememory")
    if found:
        return str(Path(found).absolute())
    beside = Path(sys.executable).parent / "codememory"
    if beside.is_file():
        return str(beside)
    return "codememory"


def codex_home() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def detect(root: Path) -> list[str]:
    """Assistants installed: their CLI is on PATH or their project folder/file exists."""
    found = []
    clis = {"claude": ["claude"], "codex": ["codex"], "cursor": ["cursor", "cursor-agent"], "opencode": ["opencode"]}
    marks = {
        "claude": [".claude"],
        "codex": [".codex"],
        "cursor": [".cursor"],
        "opencode": ["opencode.json", "opencode.jsonc", ".opencode"],
    }
    for name in ASSISTANTS:
        if any(shutil.which(c) for c in clis[name]) or any((root / m).exists() for m in marks[name]):
            found.append(name)
    return found


def parse_assistants(value: str | None, root: Path) -> list[str]:
    """`--assistants`: None → detected; 'all'; 'none'; or a comma-separated subset of ASSISTANTS."""
    if value is None:
        return detect(root)
    value = value.strip().lower()
    if value == "all":
        return list(ASSISTANTS)
    if value in ("none", ""):
        return []
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in ASSISTANTS]
    if unknown:
        raise InvalidInput(f"unknown assistant {', '.join(unknown)!s}: choose from {', '.join(ASSISTANTS)}, all, none")
    return [n for n in ASSISTANTS if n in names]


# ------------------------------------------------------------------------------------ ownership tests
# Ours: the lean `codememory-hook` and, from older installs, the full CLI's `codememory hook` (replaced on re-run).
_OUR_HOOK = re.compile(r"codememory(-hook)?(\.exe)?['\"]?\s+(hook\s+)?(claude|codex|cursor)\s")


def _is_our_hook(entry: Any) -> bool:
    return (
        isinstance(entry, dict) and isinstance(entry.get("command"), str) and bool(_OUR_HOOK.search(entry["command"]))
    )


def _runs_codememory(server: Any) -> bool:
    if not isinstance(server, dict):
        return False
    command = server.get("command")
    parts = command if isinstance(command, list) else [command]
    return any(isinstance(p, str) and "codememory" in p for p in parts)


def _hook_command(exe: str, assistant: str, event: str) -> str:
    """The lean `codememory-hook` beside the CLI: it imports neither click nor the CLI, and hands prompt events
    to a running daemon, so a prompt waits tens of milliseconds instead of a full CLI start."""
    path = Path(exe)
    for candidate in (path, path.resolve()) if path.is_absolute() else ():
        lean = candidate.with_name("codememory-hook" + candidate.suffix)
        if lean.is_file():
            return f"{shlex.quote(str(lean))} {assistant} {event}"
    return f"{shlex.quote(exe)} hook {assistant} {event}"  # no lean script beside the CLI: the CLI's own hook


# ------------------------------------------------------------------------------ JSON transformations
JsonDoc = dict[str, Any]


def _shape_error(what: str) -> ValueError:
    return ValueError(f"unexpected shape: {what}")


def _nested_hook_install(
    events: Iterable[tuple[str, str | None]], assistant: str, exe: str
) -> Callable[[JsonDoc], JsonDoc]:
    """Claude/Codex shape: {"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}."""
    events = tuple(events)

    def install(doc: JsonDoc) -> JsonDoc:
        doc = _nested_hook_strip(doc, drop_empty=False)
        hooks = doc.setdefault("hooks", {})
        for event, matcher in events:
            group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
            group["hooks"] = [
                {"type": "command", "command": _hook_command(exe, assistant, event), "timeout": HOOK_TIMEOUT}
            ]
            hooks.setdefault(event, []).append(group)
        return doc

    return install


def _strip_hooks(doc: JsonDoc, drop_empty: bool, keep: Callable[[Any], Any | None]) -> JsonDoc:
    """A copy of `doc` whose `hooks.<event>` lists hold `keep(entry)` for each entry (None drops it);
    events (and `hooks`) that only held our entries disappear when `drop_empty`."""
    doc = json.loads(json.dumps(doc))
    hooks = doc.get("hooks")
    if hooks is None:
        return doc
    if not isinstance(hooks, dict):
        raise _shape_error('"hooks" is not an object')
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            raise _shape_error(f'"hooks.{event}" is not a list')
        kept = [k for k in (keep(e) for e in entries) if k is not None]
        if kept or not drop_empty or len(kept) == len(entries):
            hooks[event] = kept
        else:
            del hooks[event]
    if drop_empty and not hooks:
        del doc["hooks"]
    return doc


def _without_our_commands(group: Any) -> Any | None:
    """Claude/Codex shape: a group {matcher?, hooks: [commands]} loses our commands (and goes if empty)."""
    inner = group.get("hooks") if isinstance(group, dict) else None
    if isinstance(inner, list) and any(_is_our_hook(h) for h in inner):
        rest = [h for h in inner if not _is_our_hook(h)]
        return {**group, "hooks": rest} if rest else None
    return group


def _nested_hook_strip(doc: JsonDoc, drop_empty: bool = True) -> JsonDoc:
    return _strip_hooks(doc, drop_empty, _without_our_commands)


def _cursor_hooks_install(exe: str) -> Callable[[JsonDoc], JsonDoc]:
    def install(doc: JsonDoc) -> JsonDoc:
        doc = _cursor_hooks_strip(doc, drop_empty=False)
        if doc.setdefault("version", 1) != 1:
            raise _shape_error(f'"version" is {doc["version"]!r}, only version 1 is supported')
        hooks = doc.setdefault("hooks", {})
        for event in CURSOR_HOOKS:
            hooks.setdefault(event, []).append({"command": _hook_command(exe, "cursor", event)})
        return doc

    return install


def _cursor_hooks_strip(doc: JsonDoc, drop_empty: bool = True) -> JsonDoc:
    had_hooks = "hooks" in doc
    doc = _strip_hooks(doc, drop_empty, lambda entry: None if _is_our_hook(entry) else entry)
    if drop_empty and had_hooks and doc == {"version": 1}:
        del doc["version"]  # nothing of the user's was left: the file goes
    return doc


def _server_install(key: str, server: dict[str, Any]) -> Callable[[JsonDoc], JsonDoc]:
    def install(doc: JsonDoc) -> JsonDoc:
        doc = json.loads(json.dumps(doc))
        servers = doc.setdefault(key, {})
        if not isinstance(servers, dict):
            raise _shape_error(f'"{key}" is not an object')
        current = servers.get(SERVER_NAME)
        if current is not None and not _runs_codememory(current):
            raise _Skip(f'a different "{SERVER_NAME}" server is already configured in "{key}"; left alone')
        servers[SERVER_NAME] = server
        return doc

    return install


def _server_strip(key: str) -> Callable[[JsonDoc], JsonDoc]:
    def strip(doc: JsonDoc) -> JsonDoc:
        doc = json.loads(json.dumps(doc))
        servers = doc.get(key)
        if isinstance(servers, dict) and _runs_codememory(servers.get(SERVER_NAME)):
            del servers[SERVER_NAME]
            if not servers:
                del doc[key]
        return doc

    return strip


class _Skip(Exception):
    """Control flow inside this module (a file init leaves alone, reported as a skipped step); never reaches a
    caller."""


# ------------------------------------------------------------------------------ text transformations
def _block_span(text: str, start: str, end: str) -> tuple[int, int] | None:
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


def _text_install(block: str, start: str, end: str) -> Callable[[str], str]:
    full = f"{start}\n{block.rstrip()}\n{end}\n"

    def install(text: str) -> str:
        span = _block_span(text, start, end)
        if span:
            return text[: span[0]] + full + text[span[1] :]
        if not text:
            return full
        return text + ("\n" if text.endswith("\n") else "\n\n") + full

    return install


def _text_strip(start: str, end: str) -> Callable[[str], str]:
    def strip(text: str) -> str:
        span = _block_span(text, start, end)
        if not span:
            return text
        before, after = text[: span[0]], text[span[1] :]
        if not after and before.endswith("\n\n"):
            before = before[:-1]
        return before + after

    return strip


# ---------------------------------------------------------------------------------- OpenCode plugin
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


def _plugin_install(source: str) -> Callable[[str], str]:
    def install(text: str) -> str:
        if text and _PLUGIN_MARK not in text:
            raise _Skip(f"a different .opencode/plugin/{PLUGIN_FILE} exists; left alone")
        return source

    return install


def _plugin_strip(text: str) -> str:
    return "" if _PLUGIN_MARK in text else text


# ------------------------------------------------------------------------------------------ planner
@dataclass
class _FileOp:
    assistant: str
    path: Path
    kind: str  # json | text | toml
    install: Callable[[Any], Any]
    strip: Callable[[Any], Any]
    what: str  # e.g. "MCP server", "hooks"
    backup: bool = True  # False: a file wholly ours (the OpenCode plugin): no backup, never restored


def _ops(assistant: str, root: Path, exe: str) -> tuple[list[_FileOp], list[Step]]:
    """The file operations for one assistant, and steps skipped up front."""
    mcp_args = ["mcp"]
    ops: list[_FileOp] = []
    skipped: list[Step] = []
    if assistant == "claude":
        server = {"type": "stdio", "command": exe, "args": mcp_args}
        ops.append(
            _FileOp(
                assistant,
                root / ".mcp.json",
                "json",
                _server_install("mcpServers", server),
                _server_strip("mcpServers"),
                "MCP server",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / ".claude" / "settings.json",
                "json",
                _nested_hook_install(CLAUDE_HOOKS, "claude", exe),
                _nested_hook_strip,
                "hooks",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / "CLAUDE.md",
                "text",
                _text_install(RULE_BLOCK, RULE_START, RULE_END),
                _text_strip(RULE_START, RULE_END),
                "rule block",
            )
        )
    elif assistant == "codex":
        table = f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(exe)}\nargs = {json.dumps(mcp_args)}"
        ops.append(
            _FileOp(
                assistant,
                codex_home() / "config.toml",
                "toml",
                _text_install(table, TOML_START, TOML_END),
                _text_strip(TOML_START, TOML_END),
                "MCP server",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / ".codex" / "hooks.json",
                "json",
                _nested_hook_install(CODEX_HOOKS, "codex", exe),
                _nested_hook_strip,
                "hooks",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / "AGENTS.md",
                "text",
                _text_install(RULE_BLOCK, RULE_START, RULE_END),
                _text_strip(RULE_START, RULE_END),
                "rule block",
            )
        )
    elif assistant == "cursor":
        server = {"command": exe, "args": mcp_args}
        ops.append(
            _FileOp(
                assistant,
                root / ".cursor" / "mcp.json",
                "json",
                _server_install("mcpServers", server),
                _server_strip("mcpServers"),
                "MCP server",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / ".cursor" / "hooks.json",
                "json",
                _cursor_hooks_install(exe),
                _cursor_hooks_strip,
                "hooks",
            )
        )
        ops.append(
            _FileOp(
                assistant,
                root / ".cursorrules",
                "text",
                _text_install(RULE_BLOCK, RULE_START, RULE_END),
                _text_strip(RULE_START, RULE_END),
                "rule block",
            )
        )
    elif assistant == "opencode":
        if (root / "opencode.jsonc").exists() and not (root / "opencode.json").exists():
            skipped.append(
                Step(
                    assistant,
                    "opencode.jsonc",
                    "skipped",
                    "JSONC (comments) is not edited automatically; add the MCP server by hand",
                )
            )
        else:
            server = {"type": "local", "command": [exe, *mcp_args]}
            ops.append(
                _FileOp(
                    assistant,
                    root / "opencode.json",
                    "json",
                    _server_install("mcp", server),
                    _server_strip("mcp"),
                    "MCP server",
                )
            )
        source = opencode_plugin_source()
        if source is None:
            skipped.append(
                Step(
                    assistant,
                    f".opencode/plugin/{PLUGIN_FILE}",
                    "skipped",
                    "plugin: its file is not part of this install (set CODEMEMORY_OPENCODE_PLUGIN to "
                    "src/codememory/data/opencode/codememory.js of a codememory checkout)",
                )
            )
        else:
            ops.append(
                _FileOp(
                    assistant,
                    root / ".opencode" / "plugin" / PLUGIN_FILE,
                    "text",
                    _plugin_install(source),
                    _plugin_strip,
                    "plugin",
                    backup=False,
                )
            )
        ops.append(
            _FileOp(
                assistant,
                root / "AGENTS.md",
                "text",
                _text_install(RULE_BLOCK, RULE_START, RULE_END),
                _text_strip(RULE_START, RULE_END),
                "rule block",
            )
        )
    return ops, skipped


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


class _View:
    """Files as planned so far: later steps see earlier steps' results (AGENTS.md is shared)."""

    def __init__(self) -> None:
        self.content: dict[Path, str | None] = {}

    def read(self, path: Path) -> str | None:
        if path not in self.content:
            try:
                self.content[path] = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                self.content[path] = None
            except (OSError, UnicodeDecodeError) as exc:
                raise SetupError(f"{path}: cannot be read ({exc}); nothing was changed") from exc
        return self.content[path]


def _parse(op: _FileOp, text: str | None) -> Any:
    if op.kind == "json":
        if text is None or not text.strip():
            return {}
        data = json.loads(text)
        if not isinstance(data, dict):
            raise _shape_error("the top level is not an object")
        return data
    if op.kind == "toml" and text:
        tomllib.loads(text)
    return text or ""


def _render(op: _FileOp, data: Any) -> str:
    if op.kind == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if op.kind == "toml":
        tomllib.loads(data)  # never write a config.toml Codex cannot read
    return str(data)


def _empty(op: _FileOp, data: Any) -> bool:
    return data == {} if op.kind == "json" else not str(data).strip()


def _codex_owned_elsewhere(text: str) -> bool:
    """A [mcp_servers.codememory] the user wrote themselves (outside our markers)."""
    span = _block_span(text, TOML_START, TOML_END)
    outside = text if span is None else text[: span[0]] + text[span[1] :]
    servers = tomllib.loads(outside).get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def plan(
    root: Path,
    assistants: list[str],
    *,
    uninstall: bool = False,
    exe: str | None = None,
    other_projects: int = 0,
) -> Plan:
    """Compute every step and every file change; raises SetupError (writing nothing) on a malformed file.

    `other_projects`: how many other projects are registered; on uninstall the user-level Codex MCP server
    (one entry serves every project: `codememory mcp` finds the project from its working folder) is kept
    while there are any.
    """
    exe = exe or codememory_command()
    result = Plan()
    view = _View()
    for assistant in assistants:
        ops, skipped = _ops(assistant, root, exe)
        result.steps.extend(skipped)
        for op in ops:
            shown = _display(op.path, root)
            if uninstall and op.kind == "toml" and other_projects:
                reason = f"user-level; still serves {other_projects} other registered project(s)"
                result.steps.append(Step(assistant, shown, "skipped", reason))
                continue
            text = view.read(op.path)
            try:
                data = _parse(op, text)
                if op.kind == "toml" and text and not uninstall and _codex_owned_elsewhere(text):
                    raise _Skip(
                        f"[mcp_servers.{SERVER_NAME}] is already configured outside codememory's markers; left alone"
                    )
                step, write = (_plan_uninstall if uninstall else _plan_install)(op, shown, text, data)
            except _Skip as skip:
                result.steps.append(Step(assistant, shown, "skipped", str(skip)))
                continue
            except (ValueError, tomllib.TOMLDecodeError) as exc:
                kind = {"json": "JSON", "toml": "TOML", "text": "text"}[op.kind]
                raise SetupError(
                    f"{op.path}: cannot be updated, invalid {kind} ({exc}); fix it and run "
                    "`codememory init` again. Nothing was changed."
                ) from exc
            result.steps.append(step)
            if write is not None:
                result.writes.append(write)
                view.content[op.path] = (
                    None
                    if write.content is None and not write.restore_backup
                    else _backup_path(op.path).read_text(encoding="utf-8")
                    if write.restore_backup
                    else write.content
                )
    return result


def _backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _plan_install(op: _FileOp, shown: str, text: str | None, data: Any) -> tuple[Step, _Write | None]:
    new = _render(op, op.install(data))
    if text is not None and (new == text or (op.kind == "json" and json.loads(new) == data)):
        return Step(op.assistant, shown, "unchanged", f"{op.what} already installed"), None
    backup = op.backup and text is not None and not os.path.lexists(_backup_path(op.path))
    reason = op.what + (f"; backup: {_backup_path(op.path).name}" if backup else "")
    action = "added" if text is None or op.strip(data) == data else "updated"
    return Step(op.assistant, shown, action, reason), _Write(op.path, new, backup=backup)


def _plan_uninstall(op: _FileOp, shown: str, text: str | None, data: Any) -> tuple[Step, _Write | None]:
    if text is None:
        return Step(op.assistant, shown, "unchanged", "not present"), None
    backup = _backup_path(op.path)
    has_backup = backup.exists()
    if has_backup:
        original_text = backup.read_text(encoding="utf-8")
        try:
            original = _parse(op, original_text)
            untouched = _same(op, op.install(original), data)
        except (ValueError, tomllib.TOMLDecodeError, _Skip):
            untouched = False
        if untouched:
            return Step(op.assistant, shown, "removed", f"{op.what}: original restored from backup"), _Write(
                op.path, None, restore_backup=True
            )
    stripped = op.strip(data)
    if _same(op, stripped, data):
        drop = _Write(op.path, text, drop_backup=True) if has_backup else None
        return Step(op.assistant, shown, "unchanged", f"{op.what} not installed"), drop
    if not has_backup and _empty(op, stripped):
        return Step(op.assistant, shown, "removed", f"{op.what}: file created by init deleted"), _Write(op.path, None)
    return Step(op.assistant, shown, "removed", op.what), _Write(op.path, _render(op, stripped), drop_backup=has_backup)


def _same(op: _FileOp, a: Any, b: Any) -> bool:
    return bool(a == b)


# ------------------------------------------------------------------------------------------- writing
def apply(result: Plan) -> None:
    """Write the planned changes (each file atomically; backups before the first change)."""
    for write in result.writes:
        path, backup = write.path, _backup_path(write.path)
        if write.restore_backup:
            os.replace(backup, path)
            _prune_dirs(path.parent)
            continue
        if write.backup and path.exists() and not os.path.lexists(backup):
            _write_new(backup, path.read_bytes())
            shutil.copystat(path, backup)
        if write.content is None:
            path.unlink(missing_ok=True)
            _prune_dirs(path.parent)
        elif not path.exists() or path.read_text(encoding="utf-8") != write.content:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.codememory-tmp")
            _write_new(tmp, write.content.encode("utf-8"))
            if path.exists():
                shutil.copymode(path, tmp)
            os.replace(tmp, path)
        if write.drop_backup:
            backup.unlink(missing_ok=True)


def _write_new(path: Path, data: bytes) -> None:
    """Create `path` (O_EXCL, never through a link: a clone may commit `settings.json.codememory-backup ->
    ~/.bashrc` to have our JSON, its keys included, written over the user's shell start-up file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


_OUR_DIRS = (".claude", ".codex", ".cursor", ".opencode")


def _prune_dirs(folder: Path) -> None:
    """Remove an assistant folder init may have created, only when it is now empty."""
    if folder.name == "plugin" and folder.parent.name == ".opencode" and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
    if (folder.name in _OUR_DIRS or folder == codex_home()) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
