"""The daemon's files in the state folder ($XDG_STATE_HOME/codememory, mode 0700), and what they say about
whether a daemon runs:

- `daemon.lock`: held (flock) by the running daemon for its whole life: one daemon per user. A PID file
  whose lock nobody holds is stale (the process died, or the PID now belongs to another program).
- `daemon.pid` and `daemon.json` ({pid, host, port, started_at, version}): written once the socket is
  bound (so a `--port 0` daemon tells clients the port it got), removed on a clean exit.
- `daemon.log` (+ `.1`, `.2`, ...; see `log_file`) and `daemon.out`: stdout/stderr of a daemon spawned by
  `start` (crashes before the log is set up).

The token (`token`) is `web.token`'s.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from codememory.core.paths import state_dir
from codememory.daemon.client import INFO_NAME

PID_NAME = "daemon.pid"
LOCK_NAME = "daemon.lock"
LOG_NAME = "daemon.log"
OUT_NAME = "daemon.out"


def pid_path() -> Path:
    return state_dir() / PID_NAME


def log_path() -> Path:
    return state_dir() / LOG_NAME


def read_pid() -> int | None:
    try:
        text = pid_path().read_text(encoding="ascii").strip()
        pid = int(text)
    except (OSError, ValueError):
        return None
    return pid if pid > 0 else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def is_daemon_process(pid: int) -> bool:
    """Whether `pid` runs codememory (its command line names it); used where file locks are unavailable."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            cmdline = subprocess.run(
                ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, timeout=5, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return False
    return b"codememory" in cmdline


class InstanceLock:
    """An exclusive flock on `daemon.lock`, held by the running daemon (released by the kernel when the
    process ends, however it ends)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): the PID file alone decides
            pid = read_pid()
            return pid is None or not (pid_alive(pid) and is_daemon_process(pid))
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    @staticmethod
    def held_elsewhere(path: Path) -> bool | None:
        """True when a running daemon holds the lock; None where flock does not exist."""
        try:
            import fcntl
        except ImportError:
            return None
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)
        return False


def running_pid() -> tuple[bool, int | None]:
    """(running, pid). Removes a stale PID file (and daemon.json) when no daemon holds the lock."""
    folder = state_dir()
    pid = read_pid()
    held = InstanceLock.held_elsewhere(folder / LOCK_NAME)
    if held is None:
        held = pid is not None and pid_alive(pid) and is_daemon_process(pid)
    if not held:
        remove_stale_files(folder)
        return False, None
    return True, pid


def remove_stale_files(folder: Path, only_pid: int | None = None) -> bool:
    """Remove daemon.pid and daemon.json (only when they name `only_pid`, if given). True if any was removed."""
    if only_pid is not None and read_pid() != only_pid:
        return False
    removed = False
    for name in (PID_NAME, INFO_NAME):
        try:
            (folder / name).unlink()
            removed = True
        except FileNotFoundError:
            pass
    return removed
