"""Nothing lost when a turn's end is cut short: the end-of-turn work of the hooks, and the catch-up that finishes what
an earlier session's end left undone.

At a turn's or a session's end a hook reads the transcript, captures the finished turns (the daily log,
`captured_turns`, and the use signals each captured turn gives: capture/usage.py) and closes the session. An
assistant kills a hook that runs past its timeout (Claude Code's is 10 s), and a busy machine takes longer than that
to start Python and open the store. So `codememory-hook` runs that work in a process of its own that the assistant
does not wait for (codememory.hooks.dispatch), and the session's end lock (`end_lock`) keeps a session's end-of-turn
runs in the order the assistant started them (a Stop before the SessionEnd that follows it).

What is still lost (the machine stopped, the process was killed with its session) is caught up when the assistant
next starts a session in the project (`catch_up`): every transcript an earlier hook session of the same assistant
read (the journal states of the last CATCH_UP_WITHIN seconds) is captured from its capture cursor. Capture is
idempotent (capture/hook_transcripts.py): a turn already captured is skipped, so a catch-up that finds nothing to do
costs a cursor read per transcript, and one that races the late hook itself duplicates nothing.

Imports only the standard library and the journal at the top: `end_lock` runs before the hook hands its work over.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from codememory import assistants
from codememory.assistants.spec import Role
from codememory.core import safe_files
from codememory.core.bounded_input import valid_json_text
from codememory.operations.hook_journal import MAX_STATE_BYTES, STORE_DIR, Journal

CATCH_UP_WITHIN = 3 * 24 * 3600  # seconds: older hook sessions are history (`codememory import-history`)
MAX_CATCH_UP_FILES = 50  # transcripts looked at per catch-up, the most recently touched first


def finishes_later(assistant: str, event: str) -> bool:
    """The event ends a turn or a session: its work may finish after the hook returns."""
    spec = assistants.find(assistant)
    found = spec.event(event) if spec is not None else None
    return found is not None and found.role in (Role.TURN_END, Role.END)


def starts_session(assistant: str, event: str) -> bool:
    spec = assistants.find(assistant)
    found = spec.event(event) if spec is not None else None
    return found is not None and found.role is Role.START


def _payload(raw: str) -> dict[str, Any]:
    try:
        payload = json.loads(valid_json_text(raw)) if raw.strip() else {}
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def _journal(assistant: str, raw: str, project: str | None) -> Journal | None:
    """The journal of the assistant session a payload names, in a project with a store; None otherwise."""
    from codememory.operations.hook_events import UNKNOWN_SESSION, project_dir, session_key

    spec = assistants.find(assistant)
    payload = _payload(raw)
    if spec is None:
        return None
    root = project_dir(payload, project)
    if not (root / STORE_DIR / "memory.db").is_file():
        return None
    key = session_key(spec, payload)
    return None if key == UNKNOWN_SESSION else Journal(root, spec.key, key)


def end_lock(assistant: str, raw: str, project: str | None) -> int | None:
    """An open descriptor on the end lock of the assistant session the payload names (None: no store, no session,
    or no flock on this system). Whoever holds an exclusive flock on it runs that session's end-of-turn work."""
    try:
        import fcntl  # noqa: F401  (no flock on Windows: the hook then does the work itself, in order)

        journal = _journal(assistant, raw, project)
        if journal is None:
            return None
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        return os.open(journal.folder / f"{journal.key}.end.lock", flags, 0o600)
    except (ImportError, OSError):
        return None


END_PATIENCE = 3.0  # seconds another event of the session waits for its end-of-turn work still running


def wait_for_end_work(assistant: str, raw: str, project: str | None, patience: float = END_PATIENCE) -> None:
    """Wait (up to `patience` seconds) until no end-of-turn work of the session the payload names is running: the
    next prompt's hook then reads the session's state after that work saved it, rather than both changing it at
    once (a late Stop would bring back a note the prompt withdrew, or close the session the prompt reopened)."""
    lock = end_lock(assistant, raw, project)
    if lock is None:
        return
    import fcntl

    deadline = time.monotonic() + patience
    try:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return  # free: the work is done (closing the descriptor below lets the next one take it)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return  # still running: go on rather than miss the assistant's own timeout
                time.sleep(0.02)
            except OSError:
                return  # no flock here: nothing to wait for
    finally:
        os.close(lock)


def _candidates(journal: Journal, assistant: str) -> list[tuple[Path, bool]]:
    """(transcript, whether its hook session was closed) for the other recent hook sessions of the assistant."""
    since = time.time() - CATCH_UP_WITHIN
    states: list[tuple[float, Path]] = []
    for path in journal.folder.glob(f"{assistant}-*.json"):
        if path.name.endswith(".injected.json") or path == journal.state_path:
            continue
        try:
            touched = path.stat().st_mtime
        except OSError:
            continue
        if touched >= since:
            states.append((touched, path))
    # The journal is under .codememory/ (untrusted: a clone may carry one), so its paths are only hints: a transcript
    # is caught up only when it is one of this assistant's own transcripts and its session ran in this project.
    spec = assistants.find(assistant)
    where = spec.transcripts if spec is not None else None
    if where is None:
        return []
    own = {path.resolve() for path in where.files(journal.root)}
    root = journal.root.resolve()
    out: list[tuple[Path, bool]] = []
    for touched, path in sorted(states, reverse=True):
        try:
            state = json.loads(safe_files.read_text(path, MAX_STATE_BYTES))
        except (OSError, ValueError):
            continue
        cursors = state.get("transcripts") if isinstance(state, dict) else None
        for name in cursors if isinstance(cursors, dict) else ():
            found = Path(name).resolve() if isinstance(name, str) else None
            if found is None or found not in own or not _ran_in(found, root):
                continue
            # closed, and nothing written to the transcript since: the session ended and its last turn is whole;
            # a transcript written after its state closed is a session at work again (the next prompt)
            with contextlib.suppress(OSError):
                out.append((found, bool(state.get("closed")) and found.stat().st_mtime <= touched))
    return out[:MAX_CATCH_UP_FILES]


def _ran_in(transcript: Path, root: Path) -> bool:
    from codememory.capture.hook_transcripts import transcript_project

    ran = transcript_project(transcript)
    return bool(ran) and Path(str(ran)).resolve() == root


def catch_up(assistant: str, raw: str, project: str | None) -> int:
    """Capture the turns earlier hook sessions of this assistant left uncaptured in the payload's project (see the
    module docstring); returns how many turns were captured. A session whose end hook ran (closed) has its last turn
    taken as it is; an open one only its finished turns. Errors are logged, never raised."""
    from codememory.operations.hook_events import MAX_TRANSCRIPT_READ, MAX_TURNS, log

    journal = _journal(assistant, raw, project)
    spec = assistants.find(assistant)
    if journal is None or spec is None or spec.transcript_reader is None:
        return 0
    captured = 0
    try:
        candidates = _candidates(journal, spec.key)
        if not candidates:
            return 0
        from codememory.capture.hook_transcripts import capture_transcript
        from codememory.service.project_store import Store

        store = Store.open(journal.root)
        try:
            for path, closed in candidates:
                report = capture_transcript(
                    store,
                    path,
                    spec.transcript_reader,
                    final=closed,
                    max_bytes=MAX_TRANSCRIPT_READ,
                    max_turns=MAX_TURNS,
                )
                captured += report.turns_captured
                if report.error:
                    log(journal.root, f"{spec.key} catch-up of {path.name}: {report.error}")
        finally:
            store.close()
    except Exception as exc:
        log(journal.root, f"{spec.key} catch-up: {type(exc).__name__}: {exc}")
    if captured:
        log(journal.root, f"{spec.key} catch-up: captured {captured} turn(s) an earlier session's end left behind")
    return captured
