"""What fixed a failed shell command, as the tool calls show it: which commands are "the same" (`command_key`), and
what was changed after the failure (a file written or edited, a command that does more than look) or run between
it and the same command passing. A lesson from a failure says what fixed it (`extract.gotchas`); when the
assistant does not say, this is what was seen."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from codememory.capture.turns import Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.compress import ToolOutcome

_RUNNER_PREFIXES = (
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("pdm", "run"),
    ("python", "-m"),
    ("python3", "-m"),
    ("npx",),
    ("bunx",),
    ("pnpx",),
    ("sudo",),
    ("time",),
    ("exec",),
)
_TWO_WORD = frozenset(
    {"npm", "yarn", "pnpm", "bun", "cargo", "go", "make", "dotnet", "mvn", "gradle", "./gradlew", "git", "docker",
     "kubectl", "deno", "mix", "bundle", "rake", "just", "task", "nox", "tox", "terraform", "helm", "swift"}
)  # fmt: skip
_ENV_ASSIGN_RE = lazy_pattern(r"^[A-Za-z_][A-Za-z0-9_]*=")


def command_key(command: str) -> str:
    """What makes two commands "the same" for gotchas: `cd x && uv run pytest -x tests/a.py` -> `pytest`,
    `npm run test -- --watch=false` -> `npm run`, `npm test` -> `npm test`."""
    segment = re.split(r"&&|\|\||;|\|", command)
    parts = [p.strip() for p in segment if p.strip()]
    main = next((p for p in parts if not re.match(r"^(?:cd|export|source|\.)\s", p)), parts[0] if parts else "")
    try:
        tokens = shlex.split(main)
    except ValueError:
        tokens = main.split()
    while tokens and _ENV_ASSIGN_RE.match(tokens[0]):
        tokens = tokens[1:]
    changed = True
    while changed and tokens:
        changed = False
        for prefix in _RUNNER_PREFIXES:
            if tuple(tokens[: len(prefix)]) == prefix and len(tokens) > len(prefix):
                tokens = tokens[len(prefix) :]
                changed = True
    if not tokens:
        return ""
    head = tokens[0].rsplit("/", 1)[-1] if tokens[0].startswith(("/", "~")) else tokens[0]
    if head in _TWO_WORD and len(tokens) > 1 and not tokens[1].startswith("-"):
        return f"{head} {tokens[1]}"
    return head


# commands that look rather than change: never the fix
_LOOKING = ("ls", "cat", "head", "tail", "grep", "rg", "find", "echo", "pwd", "which", "sed", "wc", "tree", "less")


def changed_after(calls: Sequence[tuple[int, Turn, ToolOutcome]], i: int) -> bool:
    """Whether anything was changed after the i-th call, in its turn or the next: a file written or edited, or a
    command run that does more than look."""
    turn_index = calls[i][0]
    for later_index, _turn, later in calls[i + 1 :]:
        if later_index > turn_index + 1:
            break
        if later.failed:
            continue
        if later.kind in ("write", "edit") or (
            later.kind == "shell" and later.target and command_key(later.target) not in _LOOKING
        ):
            return True
    return False


def commands_between(between: Sequence[tuple[int, Turn, ToolOutcome]], key: str) -> list[str]:
    """The commands run between a failure and the same command passing that may have fixed it: each once, none
    that only looks, and not the failing command itself."""
    commands: list[str] = []
    for _, _, o in between:
        if not (o.kind == "shell" and not o.failed and o.target) or o.target in commands:
            continue
        if command_key(o.target) not in (key, *_LOOKING) and not o.target.startswith(("git status", "git diff")):
            commands.append(o.target)
    return commands


def segments(command: str) -> list[str]:
    return [p.strip() for p in re.split(r"&&|\|\||;", command) if p.strip()]


def segment_keys(command: str) -> set[str]:
    return {command_key(p) for p in segments(command)} | {command_key(command)}


def chained_before(command: str, key: str) -> list[str]:
    """`golangci-lint cache clean && make lint` -> the fix `golangci-lint cache clean` before `make lint`."""
    out: list[str] = []
    for part in segments(command):
        k = command_key(part)
        if k == key:
            break
        if k and k not in _LOOKING and not re.match(r"^(?:cd|export|source)\b", part):
            out.append(part)
    return out
