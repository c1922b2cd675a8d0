"""`codememory hook <assistant> <event>`: the coding assistants' lifecycle hooks (FACTS.md).

Claude Code and Codex CLI (`.claude/settings.json`, `.codex/hooks.json`; same payloads) and Cursor
(`.cursor/hooks.json`, version 1) run `codememory-hook <assistant> <event>` with the event's JSON on
stdin. A hook runs on every prompt and every edit, so this module imports only the standard library at
the top and loads the store's code only on the events that need it (an edit only appends one line to
the session's journal). It fails open: any error is logged to `.codememory/logs/hooks.log` and the
process exits 0 with nothing on stdout, so a broken store never blocks the assistant.

Per assistant session (`session_id` / `conversation_id`) the hook keeps, in `.codememory/journal/`:
- `<assistant>-<session>.jsonl`: the files the assistant wrote or edited, one JSON line per edit. The
  sessions core derives a session's files from `git diff` at each checkpoint and has no row for
  individual edits; an append-only file costs no database write lock on every edit and survives a
  `sessions rebuild`.
- `<assistant>-<session>.json`: state: the codememory session id it maps to and, per transcript
  file, the byte offset already scanned for `*Remember*:` notes (nothing is read twice).

The context injected at session start and on each prompt is one `<project_memory>` block rendered by
codememory.text.context_render (memories are data from an untrusted store: they cannot close the block or start
sections of their own), under a one-sentence preamble.

On Stop and SessionEnd, Claude Code and Codex transcripts (`transcript_path`) also go through turn
capture (codememory.capture.hook_transcripts): each newly finished turn is appended to the daily log
and recorded in `captured_turns`, reading only the bytes after the file's capture cursor.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.core import safe_files
from codememory.core.bounded_input import HOOK_STDIN_MAX_BYTES, decode, read_upto, size_text, valid_json_text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codememory.service.project_store import Store

ASSISTANTS = {"claude": "claude-code", "codex": "codex", "cursor": "cursor"}
EVENTS = {
    "claude": ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"),
    "codex": ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"),
    "cursor": ("sessionStart", "beforeSubmitPrompt", "afterFileEdit", "stop"),
}
EDIT_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit", "apply_patch"}
SHELL_TOOLS = {"Bash", "shell", "exec_command"}
STORE_DIR = ".codememory"
START_TOKENS = 600  # context injected at session start
PROMPT_TOKENS = 800  # context injected per prompt
MAX_TRANSCRIPT_READ = 4_000_000  # bytes scanned per hook run; the cursor picks up the rest next time
MAX_STATE_BYTES = 4_000_000  # a session's state file (transcript cursors); a bigger one is not ours
MAX_JOURNAL_BYTES = 16_000_000  # the edits journal read back at session end
MAX_TURNS = 40  # turns captured per hook run (each is an fsynced log append): a catch-up stays short
_PATCH_FILE_RE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
CHECKPOINT_REMINDER = (
    "codememory: the conversation is about to be compacted. Before details are lost, call the "
    "`checkpoint` MCP tool (codememory) with the session's goal, work completed, work pending and "
    "decisions, and save durable facts with `*Remember*: ...` notes."
)


AFTER_COMPACT = "Context was just compacted; if you have not, save progress with the `checkpoint` MCP tool."


class HookError(Exception):
    """A usage error of the hook command itself (unknown assistant or event)."""


# --------------------------------------------------------------------------- plumbing
def _project_dir(payload: dict[str, Any], explicit: str | None) -> Path:
    """--project, else the payload's cwd / workspace_roots[0], else $CLAUDE_PROJECT_DIR, else the cwd;
    then the nearest ancestor holding `.codememory/` (or the folder itself)."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    roots = payload.get("workspace_roots")
    candidates = [
        payload.get("cwd"),
        roots[0] if isinstance(roots, list) and roots else None,
        os.environ.get("CLAUDE_PROJECT_DIR"),
    ]
    start = next((Path(c) for c in candidates if isinstance(c, str) and c and Path(c).is_dir()), Path.cwd())
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / STORE_DIR / "memory.db").is_file():
            return folder
    return start


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:120] or "unknown"


# The assistant's session id in the environment of the processes it starts (Claude Code 2.1.154+ gives it
# to stdio MCP servers): the MCP server's checkpoint then writes into the hooks' session.
SESSION_ENV = {"claude": "CLAUDE_CODE_SESSION_ID"}


def hook_session(root: Path, env: Mapping[str, str]) -> str | None:
    """The open codememory session the hooks keep for the assistant session named in `env`, if any."""
    for assistant, var in SESSION_ENV.items():
        raw = env.get(var, "").strip()
        if not raw:
            continue
        path = root / STORE_DIR / "journal" / f"{assistant}-{_safe_name(raw)}.json"
        try:
            state = json.loads(safe_files.read_text(path, MAX_STATE_BYTES))
        except (OSError, ValueError):
            continue
        session = state.get("session") if isinstance(state, dict) else None
        if isinstance(session, str) and not state.get("closed"):
            return session
    return None


class Hook:
    """One hook invocation: the payload, the project and (opened on demand) its store."""

    def __init__(self, assistant: str, event: str, payload: dict[str, Any], root: Path) -> None:
        self.assistant = assistant
        self.event = event
        self.payload = payload
        self.root = root
        self.tool = ASSISTANTS[assistant]
        raw_id = payload.get("session_id") or payload.get("conversation_id") or "unknown"
        self.session_key = f"{assistant}-{_safe_name(str(raw_id))}"
        self.raw_session_id = str(raw_id)
        self._store: Store | None = None

    # ------------------------------------------------------------------ files
    @property
    def folder(self) -> Path:
        return self.root / STORE_DIR

    @property
    def journal_dir(self) -> Path:
        folder = self.folder / "journal"
        if not safe_files.check_dir(folder):
            safe_files.make_dirs(folder)
            safe_files.create_exclusive(folder / ".gitignore", "# codememory hook journals: local only.\n*\n")
        return folder

    @property
    def journal_path(self) -> Path:
        return self.journal_dir / f"{self.session_key}.jsonl"

    @property
    def state_path(self) -> Path:
        return self.journal_dir / f"{self.session_key}.json"

    def load_state(self) -> dict[str, Any]:
        try:
            state = json.loads(safe_files.read_text(self.state_path, MAX_STATE_BYTES))
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def save_state(self, state: dict[str, Any]) -> None:
        safe_files.write_atomic(self.state_path, json.dumps(state, sort_keys=True))

    @property
    def store(self) -> Store:
        if self._store is None:
            from codememory.service.project_store import Store

            self._store = Store.open(self.root)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    # ---------------------------------------------------------------- session
    def ensure_session(self, goal: str | None = None) -> str:
        """The codememory session this assistant session maps to, created (or reopened) when needed. The
        first prompt's text becomes its goal (SessionStart, which comes before any prompt, has none)."""
        from codememory.text.privacy import scrub

        state = self.load_state()
        session_id = state.get("session")
        goal = " ".join(scrub(goal or "").split())[:300]  # cut after scrubbing: no half secret survives
        if isinstance(session_id, str):
            changes: dict[str, Any] = {}
            if state.get("closed"):
                changes["status"] = "open"
            if goal and not state.get("goal"):
                changes["goal"] = goal
            if not changes:
                return session_id
            result = self.store.checkpoint(tool=self.tool, session_id=session_id, **changes)
        else:
            fields: dict[str, Any] = {"slug": f"hook {_safe_name(self.raw_session_id)[:8]}"}
            if goal:
                fields["goal"] = goal
            result = self.store.checkpoint(tool=self.tool, **fields)
        state.update(session=result.session_id, closed=False)
        if goal:
            state["goal"] = True
        self.save_state(state)
        return result.session_id

    def close_session(self) -> None:
        state = self.load_state()
        if not isinstance(state.get("session"), str):
            self.ensure_session()
            state = self.load_state()
        self.store.checkpoint(
            tool=self.tool,
            session_id=state["session"],
            status="closed",
            trigger="session_end",
            touched=self.journaled_paths(),
        )
        state["closed"] = True
        self.save_state(state)

    def journaled_paths(self) -> list[str]:
        """Project-relative paths the PostToolUse / afterFileEdit hooks recorded for this session."""
        try:
            lines = safe_files.read_text(self.journal_path, MAX_JOURNAL_BYTES, errors="replace").splitlines()
        except OSError:
            return []
        out: list[str] = []
        for line in lines:
            try:
                path = json.loads(line).get("path")
            except (ValueError, AttributeError):
                continue  # a line cut by a crash
            if isinstance(path, str) and path and not os.path.isabs(path):
                out.append(path)
        return out

    def record_files(self, paths: list[str]) -> None:
        from codememory.text.privacy import scrub

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        lines = []
        for path in paths:
            p = Path(path)
            absolute = p if p.is_absolute() else Path(str(self.payload.get("cwd") or self.root)) / p
            try:
                rel = absolute.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                rel = str(absolute)  # outside the project: kept as given
            lines.append(json.dumps({"at": stamp, "event": self.event, "path": scrub(rel)}, ensure_ascii=False))
        if lines:
            safe_files.append_bytes(self.journal_path, ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))

    # --------------------------------------------------------------- remember
    def remember(self, text: str) -> int:
        if not text or "remember*" not in text.lower():
            return 0
        results = self.store.remember_scan(text, entered_by=self.tool, source=f"hook:{self.session_key}")
        return sum(1 for r in results if r.created)

    def scan_transcript(self) -> int:
        """Scan the transcript's new complete lines (from the stored byte offset) for `*Remember*:` notes."""
        path_value = self.payload.get("transcript_path")
        if not isinstance(path_value, str) or not path_value:
            return 0
        path = Path(path_value).expanduser()
        if not path.is_file():
            return 0
        state = self.load_state()
        cursors = state.setdefault("transcripts", {})
        key = str(path.resolve())
        offset = int(cursors.get(key, 0))
        size = path.stat().st_size
        if size < offset:  # truncated or replaced: start again (add() skips what is already stored)
            offset = 0
        if size == offset:
            return 0
        from codememory.capture.jsonl_reader import read_lines

        lines, end, _at_end, skipped = read_lines(path, offset, MAX_TRANSCRIPT_READ)
        if skipped:
            _log(self.root, f"{self.assistant} {self.event}: skipped {skipped} transcript line(s) over the limit")
        added = 0
        for line in lines:
            for text in assistant_texts(line.data):
                added += self.remember(text)
        cursors[key] = end
        self.save_state(state)
        return added

    def capture_transcript(self, *, final: bool) -> None:
        """Capture the transcript's newly finished turns into the daily log and `captured_turns`
        (codememory.capture.hook_transcripts). The turn this Stop hook reports on counts as finished
        even before its end marker is written (Codex writes `task_complete` after the hook)."""
        path_value = self.payload.get("transcript_path")
        if self.assistant not in ("claude", "codex") or not isinstance(path_value, str) or not path_value:
            return
        path = Path(path_value).expanduser()
        if not path.is_file():
            return
        from codememory.capture.hook_transcripts import capture_transcript

        finished = [v for v in (self.payload.get("turn_id"), self.payload.get("prompt_id")) if isinstance(v, str) and v]
        report = capture_transcript(
            self.store,
            path,
            self.tool,
            finished=finished,
            final=final,
            max_bytes=MAX_TRANSCRIPT_READ,
            max_turns=MAX_TURNS,
        )
        if report.error:
            _log(self.root, f"{self.assistant} {self.event}: transcript capture: {report.error}")

    # ---------------------------------------------------------------- context
    def start_context(self) -> str:
        from codememory.text.context_render import FIELD_CHARS, context_block, memory_line, one_line

        memories = self.store.list(sort="importance", order="desc", limit=8)
        lines, shown, budget = [], [], START_TOKENS
        for mem in memories:
            line = memory_line(mem.id, mem.category, mem.text)
            cost = len(line or "") // 4 + 1
            if line is None or cost > budget:
                continue
            budget -= cost
            lines.append(line)
            shown.append(mem)
        current = self.load_state().get("session")
        # the session just opened for this one is not "the last session"; neither is one with no goal
        recent = [r for r in self.store.list_sessions(limit=5, tool=self.tool) if r.session_id != current and r.goal]
        last = ""
        if recent:
            goal, date = one_line(recent[0].goal, FIELD_CHARS), one_line(recent[0].date, 40)
            last = f"Last {self.tool} session: {goal} ({date})" if goal else ""
        if not lines and not last:
            return ""
        hint = (
            "Use the codememory MCP tools (`memory_search`, `memory_store`, `checkpoint`) for more;"
            " cite ids when you rely on one."
        )
        body = ["Most important memories:", *lines] if lines else ["No memories yet."]
        why = {"retriever": "cold_start", "by": "importance"}
        self._record("hook_start", [{"id": m.id, "text": m.text, "why": why} for m in shown], [])
        return context_block([*body, *([last] if last else []), hint])

    def prompt_context(self, prompt: str) -> str:
        from codememory.text.context_render import context_block, memory_line
        from codememory.text.privacy import scrub

        prompt = scrub(prompt)  # the query may reach an embedding model
        if not prompt.strip():
            return ""
        result = self.store.retrieve([prompt[:2000]], max_memories=6, max_new=6, token_budget=PROMPT_TOKENS)
        shown, lines = [], []
        for mem in result.memories:
            line = memory_line(mem.id, mem.category, mem.text)
            if line is not None:
                shown.append(mem.to_dict())
                lines.append(line)
        if not lines:
            return ""
        self._record("hook_prompt", shown, [prompt[:2000]])
        return context_block(lines)

    def _record(self, kind: str, memories: list[dict[str, Any]], query: list[str]) -> None:
        """The injection goes to the ledger `codememory explain` reads; a failure never costs the context."""
        try:
            from codememory.operations.explain import record_injection

            record_injection(
                self.store, kind=kind, memories=memories, query=query, source=self.tool, session_id=self.raw_session_id
            )
        except Exception as exc:
            _log(self.root, f"{self.assistant} {self.event}: injection ledger: {type(exc).__name__}: {exc}")


def assistant_texts(entry: Any) -> list[str]:
    """The assistant's text in one transcript line: Claude Code (`{"type": "assistant", "message":
    {"content": [...]}}`) or Codex (`{"type": "response_item", "payload": {"type": "message", "role":
    "assistant", "content": [{"type": "output_text", ...}]}}`)."""
    if not isinstance(entry, dict):
        return []
    message: Any = None
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


def edited_paths(payload: dict[str, Any]) -> list[str]:
    """Files written by a PostToolUse (Write/Edit/MultiEdit, Codex apply_patch, a shell command that
    obviously writes: Codex runs apply_patch through its shell tool) or a Cursor afterFileEdit."""
    if isinstance(payload.get("file_path"), str):
        return [payload["file_path"]]
    tool_input = payload.get("tool_input")
    if payload.get("tool_name") in SHELL_TOOLS and isinstance(tool_input, dict):
        command = tool_input.get("command")
        if isinstance(command, str):
            from codememory.capture.codex import shell_written

            return shell_written(command)
        return []
    if payload.get("tool_name") not in EDIT_TOOLS:
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


# ---------------------------------------------------------------------------- events
def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _claude_context(event: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False)


def _guarded(hook: Hook, step: Callable[[], None]) -> None:
    """Run one step of a hook; its failure is logged and the hook's other steps still run."""
    try:
        step()
    except Exception as exc:
        _log(hook.root, f"{hook.assistant} {hook.event}: {type(exc).__name__}: {exc}")


def handle(hook: Hook) -> str:
    """Do the event's work; return what to print on stdout ('' for nothing)."""
    payload, event = hook.payload, hook.event
    if hook.assistant in ("claude", "codex"):
        if event == "SessionStart":
            hook.ensure_session()
            text = hook.start_context()
            if payload.get("source") == "compact":
                text = (text + "\n\n" if text else "") + AFTER_COMPACT
            return _claude_context(event, text)
        if event == "UserPromptSubmit":
            prompt = _text(payload.get("prompt"))
            hook.ensure_session(goal=prompt)
            return _claude_context(event, hook.prompt_context(prompt))
        if event == "PostToolUse":
            hook.record_files(edited_paths(payload))
            return ""
        if event == "PreCompact":
            return CHECKPOINT_REMINDER
        if event in ("Stop", "SessionEnd"):
            message = payload.get("last_assistant_message")
            if isinstance(message, str):
                hook.remember(message)
            hook.scan_transcript()
            _guarded(hook, lambda: hook.capture_transcript(final=event == "SessionEnd"))
            hook.close_session()
            return ""
    else:
        if event == "sessionStart":
            hook.ensure_session()
            text = hook.start_context()
            return json.dumps({"additional_context": text}, ensure_ascii=False) if text else ""
        if event == "beforeSubmitPrompt":
            hook.ensure_session(goal=_text(payload.get("prompt")))
            return ""  # Cursor takes no context here; its output may only allow or block the prompt
        if event == "afterFileEdit":
            hook.record_files(edited_paths(payload))
            return ""
        if event == "stop":
            hook.scan_transcript()
            hook.close_session()
            return ""
    raise HookError(f"unsupported event {event!r} for {hook.assistant}")


def _log(root: Path | None, message: str) -> None:
    """Append one line to .codememory/logs/hooks.log when the project has a store; otherwise stay silent.
    The message is one line whatever it holds (control characters escaped), and a link anywhere on the
    way to the log (committed to trick us into writing elsewhere) means no log, never following it."""
    if root is None or not (root / STORE_DIR).is_dir():
        return
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        from codememory.text.privacy import scrub_message  # scrubbed, one line, long echoed arguments cut

        line = f"{stamp} {safe_files.one_line(scrub_message(message))}\n"
        safe_files.append_bytes(root / STORE_DIR / "logs" / "hooks.log", line.encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def read_stdin(assistant: str, event: str, project: str | None) -> str | None:
    """The JSON payload on stdin as valid text; None for one over HOOK_STDIN_MAX_BYTES, which is logged
    and ignored (the rest of it is read and dropped, so the assistant's write to us does not fail)."""
    try:
        data, more = read_upto(sys.stdin.buffer, HOOK_STDIN_MAX_BYTES)
        while more and sys.stdin.buffer.read(1 << 20):
            pass
    except (OSError, ValueError, AttributeError):
        return ""
    if more:
        with contextlib.suppress(Exception):  # _project_dir needs a working directory that still exists
            limit = size_text(HOOK_STDIN_MAX_BYTES)
            _log(_project_dir({}, project), f"{assistant} {event}: stdin is over the {limit} limit; ignored")
        return None
    return decode(data)


def run(assistant: str, event: str, raw: str, project: str | None = None) -> str:
    """Handle one hook call; return stdout text. Never raises: errors are logged and give ''."""
    root: Path | None = None
    hook: Hook | None = None
    try:
        raw = valid_json_text(raw)  # no lone surrogate reaches the store, a journal or the output
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except ValueError:
            payload = None
        root = _project_dir(payload if isinstance(payload, dict) else {}, project)
        if not isinstance(payload, dict):
            raise HookError(f"stdin is not a JSON object ({len(raw)} characters)")  # the text may hold secrets
        if assistant not in ASSISTANTS:
            raise HookError(f"unknown assistant {assistant!r}; choose one of: {', '.join(ASSISTANTS)}")
        if event not in EVENTS[assistant]:
            raise HookError(f"unknown {assistant} event {event!r}; choose one of: {', '.join(EVENTS[assistant])}")
        if not (root / STORE_DIR / "memory.db").is_file():
            return ""  # no store in this project: nothing to do
        hook = Hook(assistant, event, payload, root)
        return handle(hook)
    except Exception as exc:
        import traceback

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        _log(root, f"{assistant} {event}: {detail}")
        return ""
    finally:
        if hook is not None:
            with contextlib.suppress(Exception):
                hook.close()


# The events an assistant waits on before the model runs: forwarded to a running daemon (see
# daemon/hook_api.py), which has codememory imported and the store open.
DAEMON_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "sessionStart", "beforeSubmitPrompt"})
DAEMON_TIMEOUT = 2.0  # seconds; then the hook runs here instead (its steps are idempotent)


def _via_daemon(assistant: str, event: str, raw: str, project: str | None) -> str | None:
    """The hook's output from the daemon's POST /hook, or None when there is no daemon or it failed (the
    caller then runs the hook in this process)."""
    if project is None and not raw.strip():
        return None
    from codememory.core.loopback import (
        post_json,  # a plain socket: http.client's imports cost more than the round trip
    )

    body = {"assistant": assistant, "event": event, "payload": raw, "project": _absolute(project)}
    answer = post_json("/hook", body, DAEMON_TIMEOUT)
    output = answer.get("output") if answer is not None else None
    return output if isinstance(output, str) else None


def _absolute(project: str | None) -> str | None:
    """--project as given is relative to this process's folder, not the daemon's."""
    return str(Path(project).resolve()) if project else None


USAGE = "usage: codememory-hook {claude,codex,cursor} EVENT [--project DIR] < payload.json"


def main(argv: list[str] | None = None) -> int:
    """Console entry point `codememory-hook`. Always exits 0 (exit 2 would block the prompt in Claude Code);
    wrong arguments only print the usage on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    project = None
    if "--project" in args:
        i = args.index("--project")
        if i + 1 >= len(args):
            print(USAGE, file=sys.stderr)
            return 0
        project = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0
    raw = read_stdin(args[0], args[1], project)
    if raw is None:
        return 0
    out = _via_daemon(args[0], args[1], raw, project) if args[1] in DAEMON_EVENTS else None
    if out is None:
        out = run(args[0], args[1], raw, project)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
