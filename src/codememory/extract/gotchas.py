"""Gotchas without a model: a shell command that failed (an error line, a failing test summary or a non-zero
exit) and the same command succeeding later in that turn or the next one, with the edits or commands in between
as the fix ("`pytest` failed with ImportError: …; fixed by editing src/app.py."), plus the assistant's sentence
naming the cause when it wrote one."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from codememory.capture.turns import Turn
from codememory.extract.candidate import Candidate, entity_names
from codememory.extract.compress import ToolOutcome, analyze_tool
from codememory.extract.statements import sentences, tidy
from codememory.text.privacy import scrub

GOTCHA_IMPORTANCE = 0.7
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
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


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


_CAUSE_RE = re.compile(
    r"\b(?:the\s+(?:problem|issue|cause|bug|error)\s+(?:was|is)|caused\s+by|turns\s+out|root\s+cause|"
    r"because\s+(?:the|it|we|of))\b",
    re.IGNORECASE,
)


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def gotcha_candidates(turns: Sequence[Turn], root: str | None = None) -> list[Candidate]:
    """A failed shell command followed by the same command succeeding, in the same or the next turn."""
    calls: list[tuple[int, Turn, ToolOutcome]] = []
    for index, turn in enumerate(turns):
        for call in turn.tool_calls:
            calls.append((index, turn, analyze_tool(call, root)))
    out: list[Candidate] = []
    used: set[int] = set()
    for i, (turn_index, _turn, failed) in enumerate(calls):
        if i in used or failed.kind != "shell" or not failed.failed or not failed.target:
            continue
        if not (failed.error or failed.summary or failed.exit_code):
            continue
        key = command_key(failed.target)
        if not key:
            continue
        last_failure = i
        for j in range(i + 1, len(calls)):
            later_index, later_turn, later = calls[j]
            if later_index > turn_index + 1:
                break
            if later.kind != "shell" or command_key(later.target or "") != key:
                continue
            if later.failed:
                last_failure = j
                used.add(j)
                continue
            fix = _fix_between(calls[last_failure + 1 : j])
            if fix:
                out.append(
                    _gotcha(calls[last_failure][2], fix, turns[calls[last_failure][0] : later_index + 1], later_turn)
                )
            used.add(j)
            break
    return out


def _fix_between(between: Sequence[tuple[int, Turn, ToolOutcome]]) -> str | None:
    files: list[str] = []
    commands: list[str] = []
    for _, _, o in between:
        if o.failed or not o.target:
            continue
        if o.kind in ("edit", "write") and o.target not in files:
            files.append(o.target)
        elif o.kind == "shell" and o.target not in commands:
            commands.append(o.target)
    parts = []
    if commands:
        parts.append("running " + _join([f"`{_short_command(c)}`" for c in commands[:2]]))
    if files:
        shown = files[:3] + ([f"{len(files) - 3} more files"] if len(files) > 3 else [])
        parts.append("editing " + _join(shown))
    return " and ".join(parts) or None


def _short_command(command: str, limit: int = 80) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"


def _gotcha(failure: ToolOutcome, fix: str, span: Sequence[Turn], fixed_in: Turn) -> Candidate:
    what = failure.error or failure.summary or (f"exit code {failure.exit_code}" if failure.exit_code else "an error")
    text = f"`{_short_command(failure.target or '')}` failed with {what.rstrip('.')}; fixed by {fix}."
    for turn in span:
        for raw in turn.assistant_texts:
            cause = next((tidy(s) for s in sentences(scrub(raw)) if _CAUSE_RE.search(s) and not s.endswith("?")), "")
            if cause and len(text) + len(cause) < 400:
                text = f"{text} {cause}"
                break
        else:
            continue
        break
    return Candidate(text, "gotcha", GOTCHA_IMPORTANCE, fixed_in.seq, entity_names(text), rule="gotcha")
