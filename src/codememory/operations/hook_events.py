"""What an assistant's lifecycle hook does (`codememory-hook <assistant> <event>`, FACTS.md): run in the hook's own
process (codememory.hooks.dispatch) or inside the daemon (its POST /hook, for the events an assistant waits on).

Claude Code and Codex CLI (`.claude/settings.json`, `.codex/hooks.json`; same payloads) and Cursor
(`.cursor/hooks.json`, version 1) send the event's JSON. A hook runs on every prompt and every edit, so this module
imports only the standard library and codememory's safe file I/O at the top and loads the store's code only on the
events that need it (an edit only appends one line to the session's journal, codememory.operations.hook_journal).
It fails open: any error is logged to `.codememory/logs/hooks.log` and the hook prints nothing, so a broken store
never blocks the assistant.

The context injected at session start and on each prompt is one `<project_memory>` block rendered by
codememory.text.context_render (memories are data from an untrusted store: they cannot close the block or start
sections of their own), under a one-sentence preamble: codememory.operations.cold_start and .retrieve.

Claude Code and Codex keep that context in the transcript, so each assistant session remembers what it was given
(codememory.operations.hook_injected, in the session's journal folder): a memory already injected, at session
start or with an earlier prompt, is not injected again unless its text changed, and a prompt with nothing new
gets no block at all. A compaction drops the old context from the transcript, so PreCompact and a SessionStart
after a compaction (also after `/clear` and at a fresh start) forget it: the session-start block and the memories
the next prompts find are shown once more. When the daemon runs the hook (its POST /hook), it does not write that
record itself: it returns it with the output and `codememory-hook` saves it once the output is in hand
(`commit_injected`). An answer the hook gave up waiting for then marks nothing as injected that never was.

The assistant's `*Remember*:` notes (its last message, the transcript's new lines) wait in the session's journal
for the user's next prompt, which stores them unless it objects (codememory.extract.speakers); a session that ends
first drops them: what the assistant alone said is not the user's to remember.

On Stop and SessionEnd, Claude Code and Codex transcripts (`transcript_path`) also go through turn capture
(codememory.capture.hook_transcripts): each newly finished turn is appended to the daily log and recorded in
`captured_turns`, reading only the bytes after the file's capture cursor.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.core import safe_files
from codememory.core.bounded_input import valid_json_text
from codememory.errors import HookError
from codememory.operations.hook_journal import STORE_DIR, Journal
from codememory.operations.hook_payloads import assistant_texts, edited_paths

if TYPE_CHECKING:
    from codememory.operations.explain import Recorder
    from codememory.operations.hook_injected import Injected
    from codememory.service.project_store import Store

ASSISTANTS = {"claude": "claude-code", "codex": "codex", "cursor": "cursor"}
EVENTS = {
    "claude": ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"),
    "codex": ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop", "SessionEnd"),
    "cursor": ("sessionStart", "beforeSubmitPrompt", "afterFileEdit", "stop"),
}
# The events an assistant waits on before the model runs: `codememory-hook` forwards them to a running daemon
# (daemon/hook_api.py), which has codememory imported and the store open.
DAEMON_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "sessionStart", "beforeSubmitPrompt"})
MAX_TRANSCRIPT_READ = 4_000_000  # bytes scanned per hook run; the cursor picks up the rest next time
MAX_TURNS = 40  # turns captured per hook run (each is an fsynced log append): a catch-up stays short
MAX_PENDING_NOTES = 20  # the assistant's notes waiting for the user's next prompt
CHECKPOINT_REMINDER = (
    "codememory: the conversation is about to be compacted. Before details are lost, call the "
    "`checkpoint` MCP tool (codememory) with the session's goal, work completed, work pending and "
    "decisions, and save durable facts with `*Remember*: ...` notes."
)
AFTER_COMPACT = "Context was just compacted; if you have not, save progress with the `checkpoint` MCP tool."
# SessionStart sources whose conversation does not hold what was injected before (`resume` keeps it all).
FRESH_CONTEXT_SOURCES = frozenset({"startup", "clear", "compact"})
Outcome = tuple[str, dict[str, Any] | None]  # stdout text; the injected record the caller is to save, if any
UNKNOWN_SESSION = "unknown"  # the session key of a payload that names none


def session_key(payload: dict[str, Any]) -> str:
    """The assistant's own session id: Claude Code's and Codex's `session_id`, Cursor's `conversation_id`."""
    return str(payload.get("session_id") or payload.get("conversation_id") or UNKNOWN_SESSION)


def project_dir(payload: dict[str, Any], explicit: str | None) -> Path:
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


def log(root: Path | None, message: str) -> None:
    """Append one line to .codememory/logs/hooks.log when the project has a store; otherwise stay silent.
    The message is one line whatever it holds (control characters escaped), and a link anywhere on the
    way to the log (committed to trick us into writing elsewhere) means no log, never following it."""
    if root is None or not (root / STORE_DIR).is_dir():
        return
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        from codememory.text.privacy import scrub_message  # scrubbed, one line, long echoed arguments cut

        line = f"{stamp} {scrub_message(message)}\n"
        safe_files.append_bytes(root / STORE_DIR / "logs" / "hooks.log", line.encode("utf-8", "backslashreplace"))
    except OSError:
        pass


class Hook:
    """One hook invocation: the payload, the project, the assistant session's journal and (opened on demand) the
    project's store."""

    def __init__(self, assistant: str, event: str, payload: dict[str, Any], root: Path) -> None:
        self.assistant = assistant
        self.event = event
        self.payload = payload
        self.root = root
        self.tool = ASSISTANTS[assistant]
        self.journal = Journal(root, assistant, session_key(payload))
        self._store: Store | None = None
        self._injected: Injected | None = None

    @property
    def injected(self) -> Injected:
        """What this assistant session's context already holds from the hooks (loaded on first use). A payload
        that names no session gets an empty record that is never saved: conversations we cannot tell apart must
        not hide memories from each other."""
        if self._injected is None:
            if self.journal.raw_session_id == UNKNOWN_SESSION:
                from codememory.operations.hook_injected import Injected

                self._injected = Injected()
            else:
                self._injected = self.journal.load_injected()
        return self._injected

    def forget_injected(self) -> None:
        """The transcript no longer holds what was injected (a compaction, `/clear`, a new conversation)."""
        self.injected.clear()

    def changed_injected(self) -> Injected | None:
        """The injected record when this hook changed it (then it is to be saved), else None."""
        if self._injected is None or not self._injected.changed or self.journal.raw_session_id == UNKNOWN_SESSION:
            return None
        return self._injected

    @property
    def store(self) -> Store:
        if self._store is None:
            from codememory.service.project_store import Store

            self._store = Store.open(self.root)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def note(self, message: str) -> None:
        log(self.root, f"{self.assistant} {self.event}: {message}")

    @property
    def recorder(self) -> Recorder:
        """The injection ledger, for what this hook injects; a failure to record is logged, never raised."""
        from codememory.operations.explain import Recorder

        def failed(exc: Exception) -> None:
            self.note(f"injection ledger: {type(exc).__name__}: {exc}")

        return Recorder(self.tool, self.journal.raw_session_id, failed)

    # ---------------------------------------------------------------- session
    def ensure_session(self, goal: str | None = None) -> str:
        return self.journal.ensure_session(self.store, self.tool, goal)

    def close_session(self) -> None:
        self.journal.close_session(self.store, self.tool)

    # ---------------------------------------------------------------- context
    def start_context(self) -> str:
        from codememory.operations.cold_start import session_start_context

        current = self.journal.load_state().get("session")
        session = current if isinstance(current, str) else None
        return session_start_context(
            self.store, tool=self.tool, current_session=session, recorder=self.recorder, injected=self.injected
        )

    def prompt_context(self, prompt: str) -> str:
        from codememory.operations.retrieve import prompt_context

        return prompt_context(self.store, prompt, self.recorder, self.injected)

    # --------------------------------------------------------------- remember
    def hold_notes(self, text: str) -> int:
        """The assistant's `*Remember*:` notes wait for the user's next prompt: a note the assistant wrote is the
        user's to accept (codememory.extract.speakers), and never one that claims what the user wants, relays a
        page or file, or would weaken security. Returns how many notes now wait."""
        if not text or "remember*" not in text.lower():
            return 0
        from codememory.extract.speakers import not_the_speakers, risky
        from codememory.text.remember import extract_remember_notes

        state = self.journal.load_state()
        pending: list[str] = [n for n in state.get("pending_notes", []) if isinstance(n, str)]
        for note in extract_remember_notes(text):
            body = note.text.strip()
            if body and not (not_the_speakers(body) or risky(body)) and body not in pending:
                pending.append(body)
        state["pending_notes"] = pending[-MAX_PENDING_NOTES:]
        self.journal.save_state(state)
        return len(state["pending_notes"])

    def accept_notes(self, prompt: str) -> int:
        """Store the notes the assistant left when the user's next prompt carries on (objects to nothing); drop
        them when it objects. Returns how many were stored."""
        state = self.journal.load_state()
        pending = [n for n in state.pop("pending_notes", []) if isinstance(n, str)]
        if not pending:
            return 0
        self.journal.save_state(state)
        from codememory.core.model import source_said_by
        from codememory.extract.speakers import objects

        if objects(prompt):
            return 0
        source = source_said_by(f"hook:{self.journal.key}", "assistant_accepted")
        text = "\n".join(f"*Remember*: {note}" for note in pending)
        return sum(1 for r in self.store.remember_scan(text, entered_by=self.tool, source=source) if r.created)

    def drop_notes(self) -> None:
        """The session ended with the assistant's notes unanswered: they are not the user's."""
        state = self.journal.load_state()
        if state.pop("pending_notes", None) is not None:
            self.journal.save_state(state)

    def scan_transcript(self) -> int:
        """Scan the transcript's new complete lines (from the stored byte offset) for the assistant's `*Remember*:`
        notes, which then wait for the user's next prompt (`hold_notes`)."""
        path_value = self.payload.get("transcript_path")
        if not isinstance(path_value, str) or not path_value:
            return 0
        path = Path(path_value).expanduser()
        if not path.is_file():
            return 0
        state = self.journal.load_state()
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
            self.note(f"skipped {skipped} transcript line(s) over the limit")
        cursors[key] = end
        self.journal.save_state(state)
        held = 0
        for line in lines:
            for text in assistant_texts(line.data):
                held = self.hold_notes(text) or held
        return held

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
            self.note(f"transcript capture: {report.error}")


# ---------------------------------------------------------------------------- events
def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _claude_context(event: str, text: str) -> str:
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}, ensure_ascii=False)


def _guarded(hook: Hook, step: Callable[[], object]) -> None:
    """Run one step of a hook; its failure is logged and the hook's other steps still run."""
    try:
        step()
    except Exception as exc:
        hook.note(f"{type(exc).__name__}: {exc}")


def handle(hook: Hook) -> str:
    """Do the event's work; return what to print on stdout ('' for nothing)."""
    payload, event = hook.payload, hook.event
    if hook.assistant in ("claude", "codex"):
        if event == "SessionStart":
            hook.ensure_session()
            if payload.get("source") in FRESH_CONTEXT_SOURCES:
                hook.forget_injected()
            text = hook.start_context()
            if payload.get("source") == "compact":
                text = (text + "\n\n" if text else "") + AFTER_COMPACT
            return _claude_context(event, text)
        if event == "UserPromptSubmit":
            prompt = _text(payload.get("prompt"))
            hook.ensure_session(goal=prompt)
            _guarded(hook, lambda: hook.accept_notes(prompt))
            return _claude_context(event, hook.prompt_context(prompt))
        if event == "PostToolUse":
            hook.journal.record_files(edited_paths(payload), event, payload.get("cwd"))
            return ""
        if event == "PreCompact":
            hook.forget_injected()  # the summary replaces what was injected; SessionStart(compact) follows
            return CHECKPOINT_REMINDER
        if event in ("Stop", "SessionEnd"):
            message = payload.get("last_assistant_message")
            if isinstance(message, str):
                hook.hold_notes(message)
            hook.scan_transcript()
            if event == "SessionEnd":
                hook.drop_notes()
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
            _guarded(hook, lambda: hook.accept_notes(_text(payload.get("prompt"))))
            return ""  # Cursor takes no context here; its output may only allow or block the prompt
        if event == "afterFileEdit":
            hook.journal.record_files(edited_paths(payload), event, payload.get("cwd"))
            return ""
        if event == "stop":
            hook.scan_transcript()
            hook.close_session()
            return ""
    raise HookError(f"unsupported event {event!r} for {hook.assistant}")


def run(assistant: str, event: str, raw: str, project: str | None = None) -> str:
    """Handle one hook call; return stdout text. Never raises: errors are logged and give ''."""
    return _run(assistant, event, raw, project, deferred=False)[0]


def run_deferred(assistant: str, event: str, raw: str, project: str | None = None) -> Outcome:
    """`run` for the daemon: (stdout text, the session's injected record to save once that text is delivered, or
    None when it did not change). The record is not written here: the hook may have stopped waiting for this
    answer and be running the event itself (`commit_injected` saves it on the hook's side)."""
    return _run(assistant, event, raw, project, deferred=True)


def commit_injected(assistant: str, raw: str, project: str | None, record: object) -> None:
    """Save the injected record a daemon returned for this hook call, in the session the payload names. Never
    raises (the output is printed all the same: at worst a memory is shown again later)."""
    root: Path | None = None
    try:
        payload = json.loads(valid_json_text(raw)) if raw.strip() else {}
        if not isinstance(payload, dict) or assistant not in ASSISTANTS:
            return
        root = project_dir(payload, project)
        if (root / STORE_DIR / "memory.db").is_file() and session_key(payload) != UNKNOWN_SESSION:
            from codememory.operations.hook_injected import Injected

            Journal(root, assistant, session_key(payload)).save_injected(Injected.from_json(record))
    except Exception as exc:
        log(root, f"{assistant}: saving what the daemon injected: {type(exc).__name__}: {exc}")


def _run(assistant: str, event: str, raw: str, project: str | None, *, deferred: bool) -> Outcome:
    root: Path | None = None
    hook: Hook | None = None
    try:
        raw = valid_json_text(raw)  # no lone surrogate reaches the store, a journal or the output
        try:
            payload = json.loads(raw) if raw.strip() else {}
        except ValueError:
            payload = None
        root = project_dir(payload if isinstance(payload, dict) else {}, project)
        if not isinstance(payload, dict):
            raise HookError(f"stdin is not a JSON object ({len(raw)} characters)")  # the text may hold secrets
        if assistant not in ASSISTANTS:
            raise HookError(f"unknown assistant {assistant!r}; choose one of: {', '.join(ASSISTANTS)}")
        if event not in EVENTS[assistant]:
            raise HookError(f"unknown {assistant} event {event!r}; choose one of: {', '.join(EVENTS[assistant])}")
        if not (root / STORE_DIR / "memory.db").is_file():
            return "", None  # no store in this project: nothing to do
        hook = Hook(assistant, event, payload, root)
        output = handle(hook)
        injected = hook.changed_injected()
        if injected is None:
            return output, None
        if deferred:
            return output, injected.to_json()
        try:
            hook.journal.save_injected(injected)
        except Exception as exc:  # the output still goes out: at worst a memory is shown again later
            hook.note(f"saving what was injected: {type(exc).__name__}: {exc}")
        return output, None
    except Exception as exc:
        import traceback

        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        log(root, f"{assistant} {event}: {detail}")
        return "", None
    finally:
        if hook is not None:
            with contextlib.suppress(Exception):
                hook.close()
