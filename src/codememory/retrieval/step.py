"""The step an agent is at, for the HUD: the tool call it has just made, whose result the model reads next.

An LLM call of an agent at work follows a tool call (or, the first of a turn, the user's request). What that call
touches — the file it read or edited, the command it ran — is what the step is about; the turn's request is its
context. So a step is judged on two kinds of evidence (retrieval/proactive.py):

- a memory about what the call touches: it names the file (its path, or its name with the extension), the folder
  the file is in (`internal/pdf/` for `internal/pdf/render.go`; only a memory the step's query already ranks, since
  a folder is wide), or prescribes the command the call ran (a `code span` in the memory whose leading words are the
  command's: `go test ./internal/pdf -update`, `make generate`). Such a memory is shown even when the request's
  words alone would have held it back (a gotcha about the file is needed when the agent opens the file), as long as
  it is the one memory naming that file (proactive.MAX_NAMING).
- a memory about the request: shown as before. A routine call looks around or checks (`ls`, `git status`/`diff`/
  `log`, `gofmt -l`, `go build`, running the tests, a grep or glob): its words are no question a memory answers, so
  after one, a memory that only those words found leaves (`go test` finds every memory that mentions tests). The
  request's memories stay: the step after a check is often the answer, which needs them, and the HUD's block is not
  kept in the conversation, so a memory not shown at a step is not in front of the model at that step. A call
  that failed is never routine: its error is what a memory may answer.

Cheap by design: it runs in the daemon on every LLM call of every agent (the plugin waits a few hundred ms), so it
is string work on the call's arguments plus one trigram-index lookup per needle.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from codememory.core.lazy_pattern import lazy_pattern
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.query import fold

# Tools that only look around or keep the agent's own to-do list (OpenCode's names, and Claude Code's).
LOOKING_TOOLS = {"glob", "grep", "list", "ls", "Glob", "Grep", "LS", "todoread", "todowrite", "TodoWrite"}
# Shell programs that look or check without changing what a memory would speak about, and for the ones that also do
# other things, which of their subcommands do (None: all of them).
LOOKING_PROGRAMS = (
    "ls pwd cat head tail wc find tree stat file echo which du grep rg diff sort uniq less true gofmt pytest mypy tsc "
    "eslint prettier black"
).split()
ROUTINE_COMMANDS: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(LOOKING_PROGRAMS, None),
    "git": frozenset({"status", "diff", "log", "show", "branch", "blame", "rev-parse", "ls-files", "remote"}),
    "go": frozenset({"build", "vet", "test", "fmt", "list", "version", "env"}),
    "cargo": frozenset({"build", "check", "test", "fmt", "clippy"}),
    "npm": frozenset({"test", "ls"}),
    "ruff": frozenset({"check", "format"}),
}
# Path-valued arguments of tool calls (OpenCode's and Claude Code's names).
PATH_ARGS = ("filePath", "file_path", "path", "notebook_path")
_SEGMENT_RE = lazy_pattern(r"\s*(?:&&|\|\||;|\|)\s*")
_PATHISH_RE = lazy_pattern(r"^(?:\.{0,2}/)?[\w@.-]+(?:/[\w@.*-]+)+/?$|^[\w@-]+\.[A-Za-z][A-Za-z0-9]{0,7}$")
_CODE_SPAN_RE = lazy_pattern(r"`([^`\n]{2,200})`")
COMMAND_WORDS = 3  # a prescribed command matches a call that starts with the same first words (at most this many)
MIN_NEEDLE = 5  # a shorter file name is in too many memories by chance
MAX_NEEDLE = 200  # a longer path is asked for by its end (the trigram index's cost grows with the needle)
PER_NEEDLE = 20  # memories looked at per file name: a name in more memories than that says little about each
MAX_SEGMENTS = 10  # commands of one shell line looked at (`a && b; c | d`): the call's text is the agent's, unbounded
MAX_SPANS = 20  # code spans of one memory compared with the call's commands


@dataclass(frozen=True)
class Step:
    """The agent's latest tool call: the tool, the paths it touches (relative to the project when inside it), the
    shell command's segments (as word lists), and whether it failed."""

    tool: str
    paths: tuple[str, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()
    failed: bool = False
    folders: tuple[str, ...] = field(default=())

    @property
    def routine(self) -> bool:
        """A call that only looks around or checks: its own words are no evidence for any memory."""
        if self.failed:
            return False
        if self.tool in LOOKING_TOOLS:
            return True
        if self.tool.lower() != "bash" or not self.commands:
            return False
        return all(_routine_command(words) for words in self.commands)

    def needles(self) -> list[str]:
        """The strings a memory about this call's files holds: each path, and each file name with an extension."""
        out: list[str] = []
        for path in self.paths:
            name = PurePosixPath(path).name
            if _is_file(path):  # a folder is matched on the candidates only (in_folder): it is wide
                out.extend((path, name))
        return [n for n in dict.fromkeys(out) if len(n) >= MIN_NEEDLE]

    def touches(self, text: str) -> str | None:
        """What of this call the memory's text names ("file render.go", "folder internal/pdf", "command make
        generate"), or None."""
        low = fold(text)
        for needle in self.needles():
            if _names(low, fold(needle)):
                return f"file {needle}"
        if not self.commands:
            return None
        called = {tuple(w.lower() for w in words[:n]) for words in self.commands for n in range(2, COMMAND_WORDS + 1)}
        for span in _CODE_SPAN_RE.findall(text)[:MAX_SPANS]:  # each span parsed once, whatever the call's length
            prescribed = _words(span)
            n = min(COMMAND_WORDS, len(prescribed))
            if n >= 2 and tuple(w.lower() for w in prescribed[:n]) in called:
                return f"command {' '.join(prescribed[:n])}"
        return None

    def in_folder(self, text: str) -> str | None:
        """The folder of a touched file that the memory's text names, or None."""
        low = fold(text)
        for folder in self.folders:
            if _names(low, fold(folder)):
                return f"folder {folder}"
        return None


def step_from_call(tool: str, args: Mapping[str, object], error: bool = False, root: str | None = None) -> Step:
    """The Step of a tool call as an agent's hook or plugin reports it: `args` holds the call's arguments (paths
    under PATH_ARGS, a shell command under "command"); `root`: the project's folder (paths inside it are made
    relative)."""
    paths: list[str] = []
    for key in PATH_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            paths.append(value.strip())
    commands: list[tuple[str, ...]] = []
    command = args.get("command")
    if isinstance(command, str) and command.strip():
        for segment in _SEGMENT_RE.split(command.strip())[:MAX_SEGMENTS]:
            words = _words(segment)
            while words and ("=" in words[0] or words[0] in {"cd", "sudo", "env", "time"}):
                words = words[2:] if words[0] == "cd" else words[1:]  # `cd dir &&`, `FOO=1 make`, `time go test`
            if words:
                commands.append(tuple(words))
                paths.extend(w for w in words[1:] if _PATHISH_RE.match(w) and not w.startswith("-"))
    relative = [_relative(p, root) for p in paths]
    relative = [p for p in dict.fromkeys(relative) if p]
    folders = []
    for path in relative:
        parent = PurePosixPath(path) if not _is_file(path) else PurePosixPath(path).parent
        if len(parent.parts) >= 2 and not parent.is_absolute():  # `app` or `internal` alone is half the project
            folders.append(str(parent))
    return Step(tool, tuple(relative), tuple(commands), bool(error), tuple(dict.fromkeys(folders)))


def touched_memories(db: Database, step: Step, filters: Filters) -> list[int]:
    """Row keys of memories that may name a file the call touches or hold its command's first words (through the
    trigram index, PER_NEEDLE per needle), in the order found: candidates for Step.touches, which decides."""
    found: dict[int, None] = {}
    commands = [" ".join(words[:2]) for words in step.commands if len(words) >= 2]
    for needle in [*step.needles()[:6], *(c for c in commands if len(c) >= MIN_NEEDLE)][:8]:
        quoted = '"' + fold(needle[-MAX_NEEDLE:]).replace('"', '""') + '"'
        for pk in db.substring_search(quoted, filters, PER_NEEDLE):
            found.setdefault(pk)
    return list(found)


def _routine_command(words: tuple[str, ...]) -> bool:
    program = PurePosixPath(words[0]).name
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":  # `python -m pytest`
        program, words = words[2], words[2:]
    if program not in ROUTINE_COMMANDS:
        return False
    subcommands = ROUTINE_COMMANDS[program]
    return subcommands is None or (len(words) > 1 and words[1] in subcommands)


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:  # an unbalanced quote: the words as typed
        return segment.split()


def _relative(path: str, root: str | None) -> str:
    path = path.strip().strip("'\"")
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1 :]
    return path.removeprefix("./").removesuffix("/...").rstrip("/")  # `./internal/tax/...` (Go's packages below)


def _is_file(path: str) -> bool:
    """A path whose last part has an extension (`render.go`, `nginx.conf`); the others are taken for folders."""
    return "." in PurePosixPath(path).name.strip(".")


def _names(text: str, needle: str) -> bool:
    """The text holds the needle as a whole name (not inside a longer path or word)."""
    start = text.find(needle)
    while start >= 0:
        before = text[start - 1] if start else " "
        after = text[start + len(needle)] if start + len(needle) < len(text) else " "
        if not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-"):
            return True
        start = text.find(needle, start + 1)
    return False
