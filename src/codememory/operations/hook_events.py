"""What an assistant's lifecycle hook does (`codememory-hook <assistant> <event>`): run in the hook's own process
(codememory.hooks.dispatch) or inside the daemon (its POST /hook, for the events an assistant waits on).

Each assistant's spec (codememory.assistants) names its events and what each means to codememory (a `Role`: session
start, prompt, edit, compaction, turn end, session end), where its payloads keep the fields read here, and how its
hooks hand context back; this module does the work of each role. A hook runs on every prompt and every edit, so
this module imports only the standard library, the specs and codememory's safe file I/O at the top and loads the
store's code only on the events that need it (an edit only appends one line to the session's journal,
codememory.operations.hook_journal).
It fails open: any error is logged to `.codememory/logs/hooks.log` and the hook prints nothing, so a broken store
never blocks the assistant.

The context injected at session start and on each prompt is one `<project_memory>` block rendered by
codememory.text.context_render (memories are data from an untrusted store: they cannot close the block or start
sections of their own), under a one-sentence preamble: codememory.operations.cold_start and .retrieve.

The assistants keep that context in the conversation, so each assistant session remembers what it was given
(codememory.operations.hook_injected, in the session's journal folder): a memory already injected, at session
start or with an earlier prompt, is not injected again unless its text changed, and a prompt with nothing new
gets no block at all. A compaction drops the old context from the transcript, so a compaction event and a session
start after a compaction (also after `/clear` and at a fresh start: the spec's `fresh_sources`) forget it: the
session-start block and the memories the next prompts find are shown once more. When the daemon runs the hook (its
POST /hook), it does not write that record itself: it returns it with the output and `codememory-hook` saves it
once the output is in hand (`commit_injected`). An answer the hook gave up waiting for then marks nothing as
injected that never was.

The assistant's `*Remember*:` notes (its last message, the transcript's new lines) wait in the session's journal
for the user's next prompt, which stores them unless it objects (codememory.extract.speakers); a session that ends
first drops them: what the assistant alone said is not the user's to remember.

At a turn's or a session's end, the transcript (`transcript_path`) of an assistant whose spec names a transcript
reader also goes through turn capture (codememory.capture.hook_transcripts): each newly finished turn is appended to
the daily log and recorded in `captured_turns`, reading only the bytes after the file's capture cursor.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory import assistants
from codememory.assistants.spec import Assistant, HookEvent, Role, render_context
from codememory.core import safe_files
from codememory.core.bounded_input import valid_json_text
from codememory.errors import HookError
from codememory.operations.hook_journal import STORE_DIR, Journal
from codememory.operations.hook_payloads import assistant_texts, edited_paths, prompt_text

if TYPE_CHECKING:
    from codememory.operations.explain import Recorder
    from codememory.operations.hook_injected import Injected
    from codememory.service.project_store import Store

MAX_TRANSCRIPT_READ = 4_000_000  # bytes scanned per hook run; the cursor picks up the rest next time
MAX_TURNS = 40  # turns captured per hook run (each is an fsynced log append): a catch-up stays short
MAX_PENDING_NOTES = 20  # the assistant's notes waiting for the user's next prompt
CHECKPOINT_REMINDER = (
    "codememory: the conversation is about to be compacted. Before details are lost, call the "
    "`checkpoint` MCP tool (codememory) with the session's goal, work completed, work pending and "
    "decisions, and save durable facts with `*Remember*: ...` notes."
)
AFTER_COMPACT = "Context was just compacted; if you have not, save progress with the `checkpoint` MCP tool."
Outcome = tuple[str, dict[str, Any] | None]  # stdout text; the injected record the caller is to save, if any
UNKNOWN_SESSION = "unknown"  # the session key of a payload that names none


def session_key(spec: Assistant, payload: dict[str, Any]) -> str:
    """The assistant's own session id (Claude Code's `session_id`, Cursor's `conversation_id`, …)."""
    return spec.payload.session_id(payload) or UNKNOWN_SESSION


def hook_event(assistant: str, event: str) -> tuple[Assistant, HookEvent]:
    """The spec and event a hook call names (a key or an alias); HookError for ones no spec has."""
    spec = assistants.find(assistant)
    if spec is None:
        raise HookError(f"unknown assistant {assistant!r}; choose one of: {', '.join(assistants.KEYS)}")
    found = spec.event(event)
    if found is None:
        names = ", ".join(e.name for e in spec.events)
        raise HookError(f"unknown {spec.key} event {event!r}; choose one of: {names}")
    return spec, found


def waits_before_model(assistant: str, event: str) -> bool:
    """The assistant waits on this event before its model runs: `codememory-hook` forwards it to a running daemon
    (daemon/hook_api.py), which has codememory imported and the store open."""
    spec = assistants.find(assistant)
    found = spec.event(event) if spec is not None else None
    return found is not None and found.before_model


def runs_elsewhere(assistant: str) -> bool:
    """Another assistant is running this one's hooks (it reads this one's config, and has hooks of its own)."""
    spec = assistants.find(assistant)
    return spec is not None and spec.runs_elsewhere(os.environ)


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
        # The owner's only, like daemon.log: scrubbing is a rule set, and errors and paths are nobody else's business.
        log_path = root / STORE_DIR / "logs" / "hooks.log"
        safe_files.append_bytes(log_path, line.encode("utf-8", "backslashreplace"), mode=0o600)
    except OSError:
        pass


class Hook:
    """One hook invocation: the payload, the project, the assistant session's journal and (opened on demand) the
    project's store."""

    def __init__(self, spec: Assistant, event: HookEvent, payload: dict[str, Any], root: Path) -> None:
        self.spec = spec
        self.assistant = spec.key
        self.event = event.name
        self.hook_event = event
        self.payload = payload
        self.root = root
        self.tool = spec.recorded_as
        self.journal = Journal(root, spec.key, session_key(spec, payload))
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
        from codememory.text.privacy import scrub
        from codememory.text.remember import extract_remember_notes

        state = self.journal.load_state()
        pending: list[str] = [n for n in state.get("pending_notes", []) if isinstance(n, str)]
        for note in extract_remember_notes(text):
            body = scrub(note.text).strip()  # the journal is a file on disk: no secret waits there
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
        from codememory.core.provenance import source_said_by
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

    def transcript(self) -> Path | None:
        """The transcript file the payload names, when it is one."""
        field = self.spec.payload.transcript
        value = self.payload.get(field) if field else None
        if not isinstance(value, str) or not value:
            return None
        path = Path(value).expanduser()
        return path if path.is_file() else None

    def scan_transcript(self) -> int:
        """Scan the transcript's new complete lines (from the stored byte offset) for the assistant's `*Remember*:`
        notes, which then wait for the user's next prompt (`hold_notes`)."""
        path = self.transcript()
        if path is None:
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
        reader = self.spec.transcript_reader
        path = self.transcript() if reader else None
        if reader is None or path is None:
            return
        from codememory.capture.hook_transcripts import capture_transcript

        finished = [v for k in self.spec.payload.turn_ids if isinstance(v := self.payload.get(k), str) and v]
        report = capture_transcript(
            self.store,
            path,
            reader,
            finished=finished,
            final=final,
            max_bytes=MAX_TRANSCRIPT_READ,
            max_turns=MAX_TURNS,
        )
        if report.error:
            self.note(f"transcript capture: {report.error}")


# ---------------------------------------------------------------------------- events
def _guarded(hook: Hook, step: Callable[[], object]) -> None:
    """Run one step of a hook; its failure is logged and the hook's other steps still run."""
    try:
        step()
    except Exception as exc:
        hook.note(f"{type(exc).__name__}: {exc}")


def handle(hook: Hook) -> str:
    """Do the event's work; return what to print on stdout ('' for nothing)."""
    spec, payload, role = hook.spec, hook.payload, hook.hook_event.role
    fields = spec.payload

    def context(text: str) -> str:
        return render_context(spec.output, hook.event, text)

    if role is Role.START:
        hook.ensure_session()
        source = payload.get(fields.source) if fields.source else None
        if source in spec.fresh_sources:
            hook.forget_injected()
        text = hook.start_context()
        if source == "compact":
            text = (text + "\n\n" if text else "") + AFTER_COMPACT
        return context(text)
    if role is Role.PROMPT:
        prompt = prompt_text(payload, fields)
        hook.ensure_session(goal=prompt)
        _guarded(hook, lambda: hook.accept_notes(prompt))
        if Role.PROMPT not in spec.context_roles:
            return ""  # its output may only allow or block the prompt (Cursor): nothing to look up
        return context(hook.prompt_context(prompt))
    if role is Role.EDIT:
        hook.journal.record_files(edited_paths(payload, fields), hook.event, payload.get("cwd"))
        return ""
    if role is Role.COMPACT:
        hook.forget_injected()  # the summary replaces what was injected; the next blocks show it again
        return CHECKPOINT_REMINDER if spec.compact_reminder else ""
    if role in (Role.TURN_END, Role.END):
        message = payload.get(fields.last_message) if fields.last_message else None
        if isinstance(message, str):
            hook.hold_notes(message)
        hook.scan_transcript()
        if role is Role.END:
            hook.drop_notes()
        _guarded(hook, lambda: hook.capture_transcript(final=role is Role.END))
        hook.close_session()
        return ""
    raise HookError(f"unsupported event {hook.event!r} for {hook.assistant}")


def run(assistant: str, event: str, raw: str, project: str | None = None) -> str:
    """Handle one hook call in this process; return stdout text. Never raises: errors are logged and give ''.
    A call another assistant makes through this one's config (it has hooks of its own) does nothing."""
    if runs_elsewhere(assistant):
        return ""
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
        spec = assistants.find(assistant)
        if not isinstance(payload, dict) or spec is None:
            return
        root = project_dir(payload, project)
        if (root / STORE_DIR / "memory.db").is_file() and session_key(spec, payload) != UNKNOWN_SESSION:
            from codememory.operations.hook_injected import Injected

            Journal(root, spec.key, session_key(spec, payload)).save_injected(Injected.from_json(record))
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
        spec, found = hook_event(assistant, event)
        if not (root / STORE_DIR / "memory.db").is_file():
            return "", None  # no store in this project: nothing to do
        hook = Hook(spec, found, payload, root)
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
