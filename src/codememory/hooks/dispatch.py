"""`codememory-hook <assistant> <event>`: the coding assistants' lifecycle hooks (FACTS.md), the lean entry point.

A hook runs on every prompt and every edit, so this process does as little as it can: read the event's JSON on
stdin (bounded), forward the events an assistant waits on (session start, each prompt) to a running daemon, which
has codememory imported and the store open, and otherwise, or when there is no daemon, do the work here
(codememory.operations.hook_events, which loads the store's code only on the events that need it). It fails open:
errors are logged to `.codememory/logs/hooks.log`, the process exits 0 with nothing on stdout, and a broken store
never blocks the assistant.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from codememory.assistants import KEYS
from codememory.core.bounded_input import HOOK_STDIN_MAX_BYTES, decode, read_upto, size_text
from codememory.core.env_switches import hooks_disabled
from codememory.operations.hook_catch_up import end_lock, finishes_later, starts_session, wait_for_end_work
from codememory.operations.hook_events import (
    commit_injected,
    log,
    project_dir,
    run,
    runs_elsewhere,
    waits_before_model,
)

__all__ = ["main", "read_stdin", "run"]

DAEMON_TIMEOUT = 2.0  # seconds; then the hook runs here instead (its steps are idempotent)
# Seconds a turn's or session's end waits for its work before leaving it to finish alone: well inside the
# assistants' hook timeouts (Claude Code's, as init installs it, is 10 s), and long enough that on a machine that is
# not overloaded the work is done when the hook returns. CODEMEMORY_HOOK_FINISH_WAIT overrides it.
FINISH_WAIT = 5.0
MAX_FINISH_WAIT = 60.0  # seconds: beyond it the assistant's own timeout decides anyway
FINISH_WAIT_ENV = "CODEMEMORY_HOOK_FINISH_WAIT"
USAGE = f"usage: codememory-hook {{{','.join(KEYS)}}} EVENT [--project DIR] < payload.json"


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
        with contextlib.suppress(Exception):  # project_dir needs a working directory that still exists
            limit = size_text(HOOK_STDIN_MAX_BYTES)
            log(project_dir({}, project), f"{assistant} {event}: stdin is over the {limit} limit; ignored")
        return None
    return decode(data)


def _via_daemon(assistant: str, event: str, raw: str, project: str | None) -> tuple[str, object] | None:
    """The hook's output from the daemon's POST /hook and the session's injected record it computed, or None
    when there is no daemon or it failed (the caller then runs the hook in this process). The record is saved
    by the caller once the output is written (the daemon does not: this process may have given up on it, and
    an assistant that kills the hook before it printed must not find those memories marked as shown)."""
    if project is None and not raw.strip():
        return None
    from codememory.core.loopback import (
        post_json,  # a plain socket: http.client's imports cost more than the round trip
    )

    body = {"assistant": assistant, "event": event, "payload": raw, "project": _absolute(project)}
    answer = post_json("/hook", body, DAEMON_TIMEOUT)
    output = answer.get("output") if answer is not None else None
    if not isinstance(output, str) or answer is None:
        return None
    return output, answer.get("injected")


def _absolute(project: str | None) -> str | None:
    """--project as given is relative to this process's folder, not the daemon's."""
    return str(Path(project).resolve()) if project else None


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
    if raw is None or runs_elsewhere(args[0]) or hooks_disabled():
        return 0  # hooks_disabled: the summariser's own agent run (extract/agent_cli.py), never captured
    if finishes_later(args[0], args[1]) and hasattr(os, "fork"):
        lock = end_lock(args[0], raw, project)
        if not _detached(lambda: run(args[0], args[1], raw, project), lock, _finish_wait()):
            run(args[0], args[1], raw, project)  # no process to hand it to (the process limit): done here, late
        return 0  # these events print nothing
    if hasattr(os, "fork"):
        wait_for_end_work(args[0], raw, project)  # an end-of-turn run of this session may still be saving its state
    answer = _via_daemon(args[0], args[1], raw, project) if waits_before_model(args[0], args[1]) else None
    out, injected = answer if answer is not None else (run(args[0], args[1], raw, project), None)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    if injected is not None:
        commit_injected(args[0], raw, project, injected)
    if starts_session(args[0], args[1]) and hasattr(os, "fork"):
        from codememory.operations.hook_catch_up import catch_up

        # what earlier sessions' ends left uncaptured, after the output is out and with nobody waiting for it
        _detached(lambda: catch_up(args[0], raw, project), None, 0.0)
    return 0


def _finish_wait() -> float:
    try:
        wait = float(os.environ.get(FINISH_WAIT_ENV, FINISH_WAIT))
    except ValueError:
        return FINISH_WAIT
    return min(max(wait, 0.0), MAX_FINISH_WAIT) if wait == wait else FINISH_WAIT  # NaN: the default


def _detached(work: Callable[[], object], lock: int | None, wait: float) -> bool:
    """Run `work` in a child process that the assistant neither waits for nor kills: a session of its own (a hook
    killed at its timeout takes its process group with it) with stdin, stdout and stderr on /dev/null (an assistant
    reads a hook's output until every copy of the pipe is closed). This process waits up to `wait` seconds for it.

    `lock` (an open descriptor, or None) orders the runs of one assistant session: the child runs `work` once it
    holds an exclusive flock on it. Taken here when free, so the child inherits it and a later event's child waits
    for this one; otherwise the child waits for whoever holds it. False when no child could be made (out of
    processes or memory): nothing ran."""
    import fcntl
    import select

    held = False
    if lock is not None:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False  # another run of the session holds it: the child waits for it
        except OSError:  # no flock here: no order to keep
            os.close(lock)
            held, lock = False, None
    try:
        done_read, done_write = os.pipe()
    except OSError:
        return _not_detached(lock)
    try:
        pid = os.fork()
    except OSError:
        os.close(done_read)
        os.close(done_write)
        return _not_detached(lock)
    if pid == 0:
        try:
            os.close(done_read)
            os.setsid()
            quiet = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            if lock is not None and not held:
                with contextlib.suppress(OSError):  # no lock to be had (a file system without flock): run anyway
                    fcntl.flock(lock, fcntl.LOCK_EX)
            work()
        finally:
            os._exit(0)  # the lock and the pipe close with the process: the parent stops waiting
    os.close(done_write)
    if lock is not None:
        os.close(lock)  # the child's copy keeps the lock
    with contextlib.suppress(OSError, ValueError, OverflowError):
        select.select([done_read], [], [], wait)
    os.close(done_read)
    return True


def _not_detached(lock: int | None) -> bool:
    if lock is not None:
        os.close(lock)  # this process does the work itself: the lock's order is moot
    return False


if __name__ == "__main__":
    sys.exit(main())
