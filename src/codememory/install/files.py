"""The edits `codememory init` makes for one assistant, built from its spec's files (codememory.assistants.spec):
one builder per kind of file, so an assistant whose files are of these kinds needs no code here.

Commands: a file committed with the project names codememory as every teammate can run it, `codememory` and
`codememory-hook` found on PATH; only a file of the user's own (Codex's config.toml) names this machine's absolute
path, which also works when codememory is not on PATH there."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.assistants.spec import (
    SERVER_NAME,
    Assistant,
    ConfigFile,
    HookJson,
    McpJson,
    McpToml,
    Place,
    PluginFile,
    RuleFile,
)
from codememory.install.edits import (
    FileOp,
    Skipped,
    block_span,
    flat_hook_install,
    flat_hook_strip,
    hook_command,
    mcp_json_op,
    nested_hook_install,
    nested_hook_strip,
    text_install,
    text_strip,
)
from codememory.install.opencode import plugin_ops
from codememory.install.rule_block import rule_block_op

CLI = "codememory"  # as committed files name the commands: found on PATH on every teammate's machine
HOOK = "codememory-hook"
TOML_START = "# >>> codememory (added by `codememory init`; removed by `codememory init --uninstall`)"
TOML_END = "# <<< codememory"


@dataclass(frozen=True)
class Commands:
    """How the files name codememory: by name in committed files, by this install's path in the user's own."""

    local_cli: str  # this machine's `codememory` (absolute when known)

    def cli(self, place: Place) -> str:
        return CLI if place.committed else self.local_cli

    def hook(self, place: Place) -> str:
        if place.committed:
            return HOOK
        local = Path(self.local_cli)
        lean = local.with_name(HOOK + local.suffix)
        return str(lean) if local.is_absolute() and lean.is_file() else HOOK


def file_ops(spec: Assistant, root: Path, commands: Commands) -> tuple[list[FileOp], list[Skipped]]:
    """Every edit init makes for `spec` in the project at `root`, and the files it leaves alone (with why)."""
    ops: list[FileOp] = []
    skipped: list[Skipped] = []
    for file in spec.files:
        built, left = _build(spec, file, root, commands)
        for op in built:
            if ops and _mergeable(ops[-1], op):
                ops[-1] = _merged(ops[-1], op)
            else:
                ops.append(op)
        skipped += left
    return ops, skipped


def _mergeable(a: FileOp, b: FileOp) -> bool:
    """Two edits of one file (Gemini CLI's settings.json holds its MCP server and its hooks): planned as one, so the
    file gets one backup and one restore."""
    plain = not (a.retired or b.retired or a.refuse or b.refuse or a.shared or b.shared)
    return a.path == b.path and a.kind == b.kind and a.backup == b.backup and plain


def _merged(a: FileOp, b: FileOp) -> FileOp:
    def install(doc: Any) -> Any:
        return b.install(a.install(doc))

    def strip(doc: Any) -> Any:
        return b.strip(a.strip(doc))

    return FileOp(a.assistant, a.path, a.kind, install, strip, f"{a.what}, {b.what}", backup=a.backup)


def _build(spec: Assistant, file: ConfigFile, root: Path, commands: Commands) -> tuple[list[FileOp], list[Skipped]]:
    if isinstance(file, McpJson):
        return mcp_json_ops(spec.key, file, root, commands.cli(file.place)), []
    if isinstance(file, McpToml):
        return [mcp_toml_op(spec.key, file.place.resolve(root), commands.cli(file.place))], []
    if isinstance(file, HookJson):
        return [hook_json_op(spec, file, root, commands.hook(file.place))], []
    if isinstance(file, RuleFile):
        return [rule_block_op(spec.key, file.place.resolve(root), file.audience)], []
    if isinstance(file, PluginFile):
        return plugin_ops(spec.key, file, root, commands.cli(file.fallback.place))
    raise TypeError(f"no installer for {type(file).__name__}")


# ------------------------------------------------------------------------------------------ MCP server (JSON)
def mcp_json_ops(assistant: str, file: McpJson, root: Path, cli: str) -> list[FileOp]:
    """The server in `file.place`; or, when the assistant would read `instead_of` and that file exists alone, there
    (creating `place` would hide every server in it). Our entry in the file not chosen is taken out."""
    path = file.place.resolve(root)
    other = file.instead_of.resolve(root) if file.instead_of else None
    if other is None:
        return [mcp_json_op(assistant, file, path, cli)]
    if other.exists() and not path.exists():
        path, other = other, path
    why = f"{path.relative_to(root) if path.is_relative_to(root) else path} holds it"
    return [mcp_json_op(assistant, file, path, cli), mcp_json_op(assistant, file, other, cli, retired=why)]


# ------------------------------------------------------------------------------------------ MCP server (TOML)
def codex_owned_elsewhere(text: str) -> bool:
    """A [mcp_servers.codememory] the user wrote themselves (outside our markers)."""
    span = block_span(text, TOML_START, TOML_END)
    outside = text if span is None else text[: span[0]] + text[span[1] :]
    servers = tomllib.loads(outside).get("mcp_servers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def _refuse_toml(text: str) -> str | None:
    if codex_owned_elsewhere(text):
        return f"[mcp_servers.{SERVER_NAME}] is already configured outside codememory's markers; left alone"
    return None


def mcp_toml_op(assistant: str, path: Path, cli: str) -> FileOp:
    """A user-level config.toml: one entry serves every project (`codememory mcp` finds the project from its working
    folder), so uninstall keeps it while other projects are registered."""
    # `required`: Codex waits for it before a turn. An optional server gets one second to list its tools and is
    # otherwise left out of that turn's tools without a word; the MCP SDK's import alone can take longer.
    table = f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(cli)}\nargs = {json.dumps(['mcp'])}\nrequired = true"
    return FileOp(
        assistant,
        path,
        "toml",
        text_install(table, TOML_START, TOML_END),
        text_strip(TOML_START, TOML_END),
        "MCP server",
        shared=True,
        refuse=_refuse_toml,
    )


# ------------------------------------------------------------------------------------------ hooks
def hook_entry(spec: Assistant, file: HookJson, hook: str, event: str) -> dict[str, Any]:
    """Our command for one event, keys in the order the assistant documents them (type, command, the rest)."""
    command = hook_command(hook, spec.key, event)
    entry: dict[str, Any] = {k: v for k, v in file.fields.items() if k == "type"}
    entry |= {key: command for key in file.command_keys}
    entry |= {k: v for k, v in file.fields.items() if k != "type"}
    return entry


def hook_json_op(spec: Assistant, file: HookJson, root: Path, hook: str) -> FileOp:
    def entry(event: str) -> dict[str, Any]:
        return hook_entry(spec, file, hook, event)

    if file.nested:
        install = nested_hook_install(((e.name, e.matcher) for e in spec.events), entry)
        return FileOp(spec.key, file.place.resolve(root), "json", install, nested_hook_strip, "hooks")
    install = flat_hook_install((e.name for e in spec.events), entry, file.version or 1)
    return FileOp(spec.key, file.place.resolve(root), "json", install, flat_hook_strip, "hooks")
