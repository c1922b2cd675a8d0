"""A session's turns as a compact transcript for a model: user and assistant text verbatim, each tool
call compressed to one sentence ("Ran `npm test` (exit 1: 3 failed, 10 passed)", "Wrote src/auth.py",
"Read README.md"), everything scrubbed, split into windows of at most `max_tokens` (≈4 characters a token).

The deterministic description is the default; with `[llm] compress_tools` the extractor asks the model
instead (see `tool_prompt`), and falls back to the deterministic sentence when it cannot."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from codememory.capture.turns import ToolCall, Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.privacy import scrub
from codememory.text.tokens import CHARS_PER_TOKEN, estimate_tokens

_SCAN_CHARS = 20_000  # of a tool output, the head and tail (whole lines) that are scrubbed and analysed
_MAX_TARGET = 120
_MAX_ERROR = 160

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "exec_command",
        "run_terminal_cmd",
        "terminal",
        "local_shell",
        "run_command",
        "execute_command",
        "run_shell_command",  # Gemini CLI
    }
)
WRITE_TOOLS = frozenset({"write", "create", "create_file", "write_file"})
EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "patch",
        "apply_patch",
        "str_replace",
        "str_replace_editor",
        "edit_file",
        "search_replace",
        "replace",  # Gemini CLI
    }
)
READ_TOOLS = frozenset({"read", "view", "read_file", "open_file"})
SEARCH_TOOLS = frozenset(
    {
        "grep",
        "glob",
        "search",
        "codesearch",
        "find",
        "list",
        "ls",
        "list_dir",
        "list_directory",
        "file_search",
        "grep_search",
    }
)
FETCH_TOOLS = frozenset({"webfetch", "fetch", "web_fetch", "websearch", "web_search", "google_web_search"})
# the agents' own todo lists: OpenCode, Claude Code's older TodoWrite and its TaskCreate / TaskUpdate, Codex's
# update_plan, Gemini CLI's write_todos
TODO_TOOLS = frozenset(
    {"todowrite", "todoread", "todo_write", "update_plan", "write_todos", "taskcreate", "taskupdate"}
)
TASK_TOOLS = frozenset({"task", "agent"})

_PATH_KEYS = ("filePath", "file_path", "path", "filename", "target_file", "file", "notebook_path")
_ERROR_LINE_RE = lazy_pattern(
    r"^\s*(?:E\s+)?(?P<line>"
    r"(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure)\b.*"  # ImportError: ..., pkg.FooError
    r"|(?:error|fatal|panic)(?:\[\w+\])?:.*"  # error: ..., error[E0425]: ..., fatal: ...
    r"|FAILED\b.*|npm ERR!.*|ERR!.*|Traceback \(most recent call last\):"
    r")$",
    re.IGNORECASE | re.MULTILINE,
)
_EXCEPTION_RE = lazy_pattern(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b")
_SUMMARY_RE = lazy_pattern(
    r"\b\d+ (?:passed|failed|failing|passing|errors?|skipped|tests?)\b(?:[,;]? \d+ (?:passed|failed|failing|"
    r"passing|errors?|skipped|warnings?|deselected|xfailed|xpassed)\b)*",
    re.IGNORECASE,
)
_EXIT_RE = lazy_pattern(
    r"(?:exit(?:ed)?(?: with)?(?: (?:code|status))?|return(?:ed)? code|exit_code)\s*[:=]?\s*(-?\d+)", re.IGNORECASE
)
_FAIL_WORDS_RE = lazy_pattern(r"\b(?:failed|failing|errors?)\b", re.IGNORECASE)
_ANSI_RE = lazy_pattern(r"\x1b\[[0-9;?]*[A-Za-z]")


def _clip_lines(text: str, limit: int = _SCAN_CHARS) -> str:
    """The head and tail of a long text, cut at line breaks (never inside a line, so a secret is never
    halved into something the privacy filter no longer recognises)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    head = text[:half]
    head = head[: head.rfind("\n") + 1] if "\n" in head else ""
    tail = text[-half:]
    tail = tail[tail.find("\n") + 1 :] if "\n" in tail else ""
    return f"{head}[… {len(text) - len(head) - len(tail)} characters cut …]\n{tail}"


def shorten(text: str, limit: int) -> str:
    """The text on one line (whitespace runs as one space), cut to `limit` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def relative_path(path: str, root: str | None) -> str:
    if root and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, root)
        except ValueError:  # another drive (Windows)
            return path
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return path


def _unroot(text: str, root: str | None) -> str:
    """Absolute paths inside the project shown relative to it (shorter, and no home folder)."""
    return text.replace(root.rstrip("/") + "/", "") if root and len(root) > 1 else text


def _command(value: Any) -> str | None:
    if isinstance(value, list):  # codex: ["bash", "-lc", "pytest -x"]
        parts = [str(v) for v in value]
        if len(parts) >= 3 and parts[1] in ("-c", "-lc"):
            return parts[2]
        return " ".join(parts)
    return str(value) if value else None


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call did, read without a model. Every string is scrubbed."""

    kind: str  # shell | write | edit | read | search | fetch | todo | task | other
    tool: str
    target: str | None  # the command, path, pattern or URL
    failed: bool
    error: str | None = None  # the most telling error line
    summary: str | None = None  # a test-runner summary ("3 failed, 10 passed")
    exit_code: int | None = None


def tool_kind(tool: str) -> str:
    name = tool.lower().rsplit(".", 1)[-1]
    for kind, names in (
        ("shell", SHELL_TOOLS),
        ("write", WRITE_TOOLS),
        ("edit", EDIT_TOOLS),
        ("read", READ_TOOLS),
        ("search", SEARCH_TOOLS),
        ("fetch", FETCH_TOOLS),
        ("todo", TODO_TOOLS),
        ("task", TASK_TOOLS),
    ):
        if name in names:
            return kind
    return "other"


def _error_line(text: str) -> str | None:
    """The most telling error line: the last exception line (a traceback's last line says what went
    wrong), else the first other error line."""
    exceptions: list[str] = []
    others: list[str] = []
    for m in _ERROR_LINE_RE.finditer(text):
        line = m.group("line").strip()
        if line.startswith("Traceback"):
            continue
        (exceptions if _EXCEPTION_RE.match(line) else others).append(line)
    if exceptions:
        return shorten(exceptions[-1], _MAX_ERROR)
    if others:
        return shorten(others[0], _MAX_ERROR)
    return None


def analyze_tool(call: ToolCall, root: str | None = None) -> ToolOutcome:
    kind = tool_kind(call.tool)
    inp = call.input if isinstance(call.input, dict) else {}
    target: str | None = None
    if kind == "shell":
        target = _command(inp.get("command") or inp.get("cmd"))
    elif kind in ("write", "edit", "read"):
        path = next((str(inp[k]) for k in _PATH_KEYS if inp.get(k)), None)
        target = relative_path(path, root) if path else None
    elif kind == "search":
        target = next((str(inp[k]) for k in ("pattern", "query", "glob", "path") if inp.get(k)), None)
    elif kind == "fetch":
        target = next((str(inp[k]) for k in ("url", "query") if inp.get(k)), None)
    elif kind == "task":
        target = next((str(inp[k]) for k in ("description", "prompt") if inp.get(k)), None)
    elif kind == "todo" and call.tool.lower() == "taskcreate":  # Claude Code's tasks: one call per task
        target = next((str(inp[k]) for k in ("subject", "description") if inp.get(k)), None)
    elif kind == "todo" and call.tool.lower() == "taskupdate" and inp.get("status"):
        target = f"task #{inp.get('taskId')} {inp.get('status')}"
    if target is not None:
        target = shorten(scrub(_clip_lines(target, 4000)), _MAX_TARGET)
    output = _unroot(scrub(_ANSI_RE.sub("", _clip_lines(call.output or ""))), root)
    error_text = _unroot(scrub(_clip_lines(call.error)), root) if call.error else ""
    failed = call.failed
    exit_code = call.exit_code  # recorded by the source; else read from the output below
    error = _error_line(error_text) if error_text else None
    summary = None
    if kind in ("shell", "task", "other"):
        if exit_code is None and (m := _EXIT_RE.search(output[-2000:])):
            exit_code = int(m.group(1))
            failed = failed or exit_code != 0
        if kind == "shell":
            summaries = _SUMMARY_RE.findall(output[-4000:])
            summary = shorten(summaries[-1], 80) if summaries else None
            if summary and re.search(r"\b[1-9]\d* (?:failed|failing|errors?)\b", summary, re.IGNORECASE):
                failed = True
        if error is None and (failed or kind == "shell"):
            error = _error_line(output)
            if error and exit_code is None and kind == "shell":
                failed = True
    if failed and error is None and error_text:
        error = shorten(error_text.strip().splitlines()[0], _MAX_ERROR) if error_text.strip() else None
    return ToolOutcome(kind, call.tool, target, failed, error, summary, exit_code)


def describe_outcome(o: ToolOutcome) -> str:
    """One deterministic sentence for a tool call."""
    t = o.target
    if o.kind == "shell":
        text = f"Ran `{t}`" if t else "Ran a shell command"
        body = "; ".join(x for x in (o.summary, o.error if o.failed else None) if x)
        if o.exit_code is not None and o.exit_code != 0:
            body = f"exit {o.exit_code}" + (f": {body}" if body else "")
        elif o.failed:
            body = "failed" + (f": {body}" if body else "")
        if body:
            text += f" ({body})"
        return text + "."
    text = {
        "write": f"Wrote {t}" if t else "Wrote a file",
        "edit": f"Edited {t}" if t else "Edited a file",
        "read": f"Read {t}" if t else "Read a file",
        "search": f"Searched for `{t}`" if t else "Searched the project",
        "fetch": f"Fetched {t}" if t else "Fetched a web page",
        "todo": f"Updated the todo list ({t})" if t else "Updated the todo list",
        "task": f"Delegated to a sub-agent: {t}" if t else "Delegated to a sub-agent",
    }.get(o.kind, f"Called {o.tool}" + (f" on {t}" if t else ""))
    if o.failed:
        verb = {"write": "write", "edit": "edit", "read": "read", "fetch": "fetch"}.get(o.kind)
        if verb and t:
            text = f"Failed to {verb} {t}"
        text += f" (failed: {o.error})" if o.error and not verb else (f": {o.error}" if o.error else " (failed)")
    return text + "."


def describe_tool(call: ToolCall, root: str | None = None) -> str:
    return describe_outcome(analyze_tool(call, root))


def tool_prompt(call: ToolCall, root: str | None = None, *, max_chars: int = 4000) -> str:
    """The compression prompt's user part for one tool call: scrubbed arguments and (clipped) result."""
    args = json.dumps(call.input, ensure_ascii=False, default=str) if call.input else "{}"
    result = call.output or ""
    if call.failed:
        exit_part = f" (exit {call.exit_code})" if call.exit_code is not None else ""
        result = f"[failed{exit_part}] {call.error or ''}\n{result}"
    args = _unroot(scrub(_clip_lines(args, max_chars)), root)
    result = _unroot(scrub(_ANSI_RE.sub("", _clip_lines(result, max_chars))), root)
    status = call.status if call.exit_code is None else f"{call.status} (exit {call.exit_code})"
    return f"Tool: {call.tool}\nStatus: {status}\nArguments: {args}\nResult:\n{result}"


Describe = Callable[[ToolCall], str]


@dataclass(frozen=True)
class RenderedTurn:
    seq: int
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


@dataclass(frozen=True)
class Window:
    first_seq: int
    last_seq: int
    text: str
    seqs: tuple[int, ...]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def render_turn(turn: Turn, *, root: str | None = None, describe: Describe | None = None) -> RenderedTurn:
    lines = [f"[turn {turn.seq}]"]
    user = scrub(turn.user_text).strip()
    if user:
        lines.append("User: " + user)
    for call in turn.tool_calls:
        sentence = describe(call) if describe else describe_tool(call, root)
        lines.append("Tool: " + scrub(sentence).strip())
    texts = [t for t in (scrub(a).strip() for a in turn.assistant_texts) if t]
    if texts:
        lines.append("Assistant: " + "\n".join(texts))
    return RenderedTurn(turn.seq, "\n".join(lines))


def compact_transcript(
    turns: Iterable[Turn], *, root: str | None = None, describe: Describe | None = None
) -> list[RenderedTurn]:
    """The turns as the extraction model reads them: per turn the prompt, one sentence per tool call and the
    assistant's text, scrubbed. Not the full record of a turn (`capture.opencode_turns.render_full_turn`,
    for a person): tool outputs are left out so that many turns fit one window."""
    return [render_turn(t, root=root, describe=describe) for t in turns]


def _cut(text: str, limit: int) -> str:
    """A turn longer than a whole window keeps its head and tail."""
    if len(text) <= limit:
        return text
    marker = f"\n[… {len(text) - limit} characters cut …]\n"
    half = max((limit - len(marker)) // 2, 0)
    return text[:half] + marker + text[len(text) - half :] if half else text[:limit]


def split_windows(rendered: Sequence[RenderedTurn], max_tokens: int) -> list[Window]:
    """Consecutive turns packed into windows of at most `max_tokens` (a single longer turn is cut)."""
    limit = max(max_tokens, 1) * CHARS_PER_TOKEN
    windows: list[Window] = []
    parts: list[RenderedTurn] = []
    size = 0

    def flush() -> None:
        if parts:
            text = "\n\n".join(p.text for p in parts)
            windows.append(Window(parts[0].seq, parts[-1].seq, text, tuple(p.seq for p in parts)))

    for turn in rendered:
        text = _cut(turn.text, limit)
        extra = len(text) + (2 if parts else 0)
        if parts and size + extra > limit:
            flush()
            parts, size = [], 0
            extra = len(text)
        parts.append(RenderedTurn(turn.seq, text))
        size += extra
    flush()
    return windows
