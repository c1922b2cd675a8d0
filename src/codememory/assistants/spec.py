"""What codememory knows about one coding assistant, as plain data: its names, how to tell it is used, the files
`codememory init` edits for it, the hook events it sends (and which of them it waits on), how to read their
payloads, how it takes context back, how it spells the tools it is offered, and where its transcripts are.

Everything here is data and small pure functions: install/, the hooks, capture, operations and the CLI read it, so it
imports nothing of codememory's but `core` and `errors`. One module per assistant builds one `Assistant`; the package
lists them (codememory.assistants).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

SERVER_NAME = "codememory"  # the MCP server's name in every assistant's config

# The tools each side offers (codememory/mcp/tools/, integrations/opencode/src/tools.ts and session-tools.ts;
# tests/install/test_tool_names.py checks both against the real MCP listing and the real plugin bundle).
MCP_TOOLS = frozenset(
    {
        "memory_search",
        "memory_get",
        "memory_store",
        "memory_forget",
        "memory_retrieve",
        "memory_transcript",
        "checkpoint",
        "search_sessions",
        "list_sessions",
        "get_session_files",
    }
)
PLUGIN_TOOLS = MCP_TOOLS - {"memory_forget", "memory_retrieve"}  # its per-call memory block does the retrieving


# --------------------------------------------------------------------------------------------- events
class Role(StrEnum):
    """What codememory does on an event, whatever the assistant calls it."""

    START = "start"  # a session starts, resumes or is cleared: the session-start block
    PROMPT = "prompt"  # the user submitted a prompt: it opens the session (the first is its goal) and gets memories
    EDIT = "edit"  # a tool wrote files: appended to the session's journal
    COMPACT = "compact"  # the conversation is about to be compacted: what was injected will be gone from it
    TURN_END = "turn_end"  # the agent finished answering: `*Remember*:` notes, new transcript turns, session closed
    END = "end"  # the session ended: the same, with the transcript read to its end


BEFORE_MODEL = frozenset({Role.START, Role.PROMPT})


@dataclass(frozen=True)
class HookEvent:
    """One hook event as the assistant names it in its config and payloads, and what it means to codememory."""

    name: str
    role: Role
    matcher: str | None = None  # the config's filter for this event (tool names, start sources); None: every call

    @property
    def before_model(self) -> bool:
        """The assistant waits on this hook before its model runs: a running daemon answers it (warm imports, open
        store), so the prompt waits tens of milliseconds instead of a process start."""
        return self.role in BEFORE_MODEL


class Output(StrEnum):
    """How a hook hands context back on stdout (the JSON the assistant reads)."""

    HOOK_SPECIFIC = "hookSpecificOutput"  # {"hookSpecificOutput": {"hookEventName": E, "additionalContext": T}}
    ADDITIONAL_CONTEXT = "additionalContext"  # {"additionalContext": T}
    SNAKE_CASE = "additional_context"  # {"additional_context": T}


def render_context(output: Output, event: str, text: str) -> str:
    """The hook's stdout that puts `text` into the assistant's context ('' for no text: nothing is printed)."""
    if not text:
        return ""
    if output is Output.HOOK_SPECIFIC:
        body: dict[str, object] = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    elif output is Output.ADDITIONAL_CONTEXT:
        body = {"additionalContext": text}
    else:
        body = {"additional_context": text}
    return json.dumps(body, ensure_ascii=False)


@dataclass(frozen=True)
class Payload:
    """Where a hook payload keeps what codememory reads (the first field present wins where there are several)."""

    session: tuple[str, ...] = ("session_id",)
    prompt: str = "prompt"
    # tags the assistant wraps earlier hook context in when it puts that into the prompt it reports (Gemini CLI,
    # headless, prepends the session-start context so): taken off its front, never a session's goal or a query
    prompt_context_tags: tuple[str, ...] = ()
    source: str | None = "source"  # how a session started (startup, resume, clear, compact, new)
    last_message: str | None = "last_assistant_message"  # the agent's final answer on a turn's end
    transcript: str | None = "transcript_path"
    turn_ids: tuple[str, ...] = ()  # fields naming the turn a turn-end reports on (it counts as finished)
    edit_tools: frozenset[str] = frozenset()  # tools whose input names the file they wrote, or is a patch
    shell_tools: frozenset[str] = frozenset()  # shell tools: a command that obviously writes a file counts

    def session_id(self, payload: Mapping[str, object]) -> str | None:
        for key in self.session:
            value = payload.get(key)
            if value:
                return str(value)
        return None


# ------------------------------------------------------------------------------------------ files
@dataclass(frozen=True)
class UserDir:
    """An assistant's own folder in the user's home, which an environment variable may relocate: the variable names
    the folder itself (CODEX_HOME), or, with `env_is_home`, a home folder that holds it (GEMINI_CLI_HOME)."""

    default: str  # relative to the home folder: ".codex"
    env: str | None = None
    env_is_home: bool = False

    def path(self) -> Path:
        value = os.environ.get(self.env) if self.env else None
        if value:
            return Path(value).expanduser() / self.default if self.env_is_home else Path(value).expanduser()
        return Path.home() / self.default


@dataclass(frozen=True)
class Place:
    """Where a file is: in the project (`user` None: committed with it, shared by the team) or under a user folder
    (this machine's own). Only the latter may name this machine's paths."""

    path: str
    user: UserDir | None = None

    def resolve(self, root: Path) -> Path:
        return (self.user.path() if self.user else root) / self.path

    @property
    def committed(self) -> bool:
        return self.user is None


@dataclass(frozen=True)
class McpJson:
    """The MCP server as one entry of a JSON object: `{key: {"codememory": {**fields, command…}}}`.
    `split` commands are `"command": exe, "args": ["mcp"]`; otherwise `"command": [exe, "mcp"]` (OpenCode).
    `instead_of`: a file the assistant reads only when `place` does not exist; when it exists alone the server goes
    there (creating `place` would hide it)."""

    place: Place
    key: str = "mcpServers"
    fields: Mapping[str, object] = field(default_factory=dict)
    split: bool = True
    instead_of: Place | None = None


@dataclass(frozen=True)
class McpToml:
    """The MCP server as a `[mcp_servers.codememory]` table between markers in a TOML file (Codex's config.toml)."""

    place: Place


@dataclass(frozen=True)
class HookJson:
    """The hook commands in a JSON file. `nested` (Claude Code's layout): `{"hooks": {E: [{"matcher"?, "hooks":
    [{"type": "command", "command": …}]}]}}`; flat (Cursor's, Copilot's): `{"version": 1, "hooks": {E: [{…}]}}`.
    `command_keys`: where the command goes in an entry; `fields`: the entry's other keys (type, timeout and its
    unit: seconds or milliseconds, per assistant)."""

    place: Place
    nested: bool = True
    command_keys: tuple[str, ...] = ("command",)
    fields: Mapping[str, object] = field(default_factory=dict)
    version: int | None = None  # flat files carry {"version": 1}


@dataclass(frozen=True)
class RuleFile:
    """The instructions file whose codememory block says when to use the tools; `audience` names the block's text
    (codememory.install.rule_block): every assistant reading one file gets one text."""

    place: Place
    audience: str


@dataclass(frozen=True)
class PluginFile:
    """A plugin file wholly ours (OpenCode's), with the MCP server to register instead when it cannot be installed."""

    place: Place
    fallback: McpJson


ConfigFile = McpJson | McpToml | HookJson | RuleFile | PluginFile


# ------------------------------------------------------------------------------------------ transcripts
@dataclass(frozen=True)
class Transcripts:
    """Where the assistant keeps its session transcripts on this machine and which reader turns them into turns.

    `reader` is a key of codememory.capture.hook_transcripts.READERS (the reader's source name), or None while no
    reader exists: then the hooks capture no turns from it and nothing imports its history. To add one, write the
    reader in capture/, register it in READERS under a source name, and set `reader` to that name."""

    folder: UserDir
    pattern: str  # glob under `folder` (its subfolders included)
    reader: str | None = None
    # the glob narrowed to the sessions that may have run in one project (their cwd is still checked), when the
    # folder layout says so: a history import then reads no other project's files
    project_pattern: Callable[[Path], str] | None = None

    def files(self, project: Path | None = None) -> list[Path]:
        """The transcript files on this machine (those that may belong to `project`), sorted."""
        folder = self.folder.path()
        if not folder.is_dir():
            return []
        if project is None or self.project_pattern is None:
            return sorted(folder.glob(self.pattern))
        # the folder as given and as resolved: an assistant started in a linked folder files it under the link
        patterns = {self.project_pattern(project), self.project_pattern(project.resolve())}
        return sorted({path for pattern in patterns for path in folder.glob(pattern)})


# ------------------------------------------------------------------------------------------ the spec
@dataclass(frozen=True)
class Assistant:
    """Everything codememory knows about one coding assistant."""

    key: str  # the canonical name: `--assistants`, `codememory-hook KEY EVENT`, journal file names
    display: str  # as people write it
    recorded_as: str  # the name its sessions, memories and captured turns carry in the store
    aliases: tuple[str, ...] = ()  # other names accepted wherever the key is
    clis: tuple[str, ...] = ()  # commands whose presence on PATH means it is installed
    marks: tuple[str, ...] = ()  # files or folders in a project that mean it is used there
    folders: tuple[str, ...] = ()  # its folders in a project: removed by uninstall once empty
    subfolders: tuple[str, ...] = ()  # folders init creates inside `folders`: removed first once empty
    user_folders: tuple[UserDir, ...] = ()  # its folders outside the project: removed once empty
    files: tuple[ConfigFile, ...] = ()  # what init edits, in order
    events: tuple[HookEvent, ...] = ()  # the hook events init installs and the hook handles
    payload: Payload = Payload()
    output: Output = Output.HOOK_SPECIFIC
    context_roles: frozenset[Role] = BEFORE_MODEL  # the events whose output reaches the model
    compact_reminder: bool = False  # its COMPACT event's plain stdout is shown: a reminder to checkpoint
    fresh_sources: frozenset[str] = frozenset({"startup", "clear", "compact", "new"})  # START sources of an empty
    # conversation: what was injected before is gone from it
    tool_prefix: str = ""  # how its model sees a tool: prefix + the tool's own name
    tools: frozenset[str] = MCP_TOOLS  # the tools it is offered
    session_env: str | None = None  # the env var that gives its session id to the MCP server it starts
    yields_to: tuple[str, ...] = ()  # env vars set when ANOTHER assistant runs this one's hooks (then they do nothing)
    transcripts: Transcripts | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def event(self, name: str) -> HookEvent | None:
        return next((e for e in self.events if e.name == name), None)

    def tool_name(self, tool: str) -> str:
        """A tool as this assistant's model sees it (mcp__codememory__memory_search, mcp_codememory_…, …)."""
        if tool not in self.tools:
            raise KeyError(f"{tool} is not offered to {self.display}")
        return self.tool_prefix + tool

    def runs_elsewhere(self, environ: Mapping[str, str]) -> bool:
        """This hook call comes from another assistant reading this one's config (which has its own hooks)."""
        return any(environ.get(var) for var in self.yields_to)

    @property
    def transcript_reader(self) -> str | None:
        return self.transcripts.reader if self.transcripts else None
