"""The daemon seen from another process: `start` (spawn `codememory daemon run` detached and wait for its
/health), `stop` (SIGTERM, then SIGKILL), `status` (running or not, from the lock and the PID file, with what
/health says). Beside it: the daemon's files (`files`), its log (`log_file`), the run loop itself (`run_loop`)
and the login service (`service_install`)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from codememory.core.dates import now_utc
from codememory.core.paths import ensure_state_dir, state_dir
from codememory.core.result import Result
from codememory.daemon.client import Client, read_info
from codememory.daemon.files import OUT_NAME, log_path, pid_alive, remove_stale_files, running_pid
from codememory.errors import DaemonError, DaemonUnavailable
from codememory.text.privacy import scrub
from codememory.web.listen import HOST

log = logging.getLogger("codememory.daemon")

START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


def _uptime(started_at: Any) -> float | None:
    if not isinstance(started_at, str):
        return None
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return None
    return round((now_utc() - started).total_seconds(), 1)


@dataclass(frozen=True)
class DaemonStatus(Result):
    """`codememory daemon status`: whether the daemon runs, where, since when, and what its /health says."""

    running: bool
    pid: int | None
    host: str
    port: int | None  # None when not running (from daemon.json otherwise)
    started_at: str | None
    uptime_seconds: float | None
    version: str | None
    health: dict[str, Any] | None  # the /health answer; None when stopped, not asked, or not answering
    state_dir: str
    log: str


@dataclass(frozen=True)
class DaemonStarted(Result):
    """`codememory daemon start`: what the daemon wrote about itself (daemon.json), its /health answer, and its
    log file; `already_running` when it was up before (start is then a no-op that says so)."""

    pid: int
    host: str
    port: int
    started_at: str
    version: str
    health: dict[str, Any]
    log: str
    already_running: bool = False  # it was running before: nothing was started


@dataclass(frozen=True)
class DaemonStopped(Result):
    """`codememory daemon stop`: `forced` when it had to be killed after the grace period."""

    was_running: bool
    pid: int | None
    forced: bool


def status(*, with_health: bool = True) -> DaemonStatus:
    """Running or not (the instance lock decides; a stale PID file is removed), and what daemon.json and
    /health say about the running one."""
    running, pid = running_pid()
    info = read_info() if running else None
    uptime = _uptime(info.get("started_at")) if info else None  # before /health, which may take its timeout
    health: dict[str, Any] | None = None
    if running and with_health and info:
        try:
            health = Client(port=int(info["port"]), timeout=2.0).health()
        except DaemonUnavailable:
            health = None
    return DaemonStatus(
        running=running,
        pid=pid,
        host=HOST,
        port=info.get("port") if info else None,
        started_at=info.get("started_at") if info else None,
        uptime_seconds=uptime,
        version=info.get("version") if info else None,
        health=health,
        state_dir=str(state_dir()),
        log=str(log_path()),
    )


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    line = scrub(lines[-1]) if lines else ""
    return line.removeprefix("codememory: error: ")


def start(port: int | None = None, *, timeout: float = START_TIMEOUT) -> DaemonStarted:
    """Spawn `run` detached (new session, output to daemon.out) and wait until its /health answers. A daemon
    that already runs is left alone: what it says about itself comes back with `already_running`."""
    if running_pid()[0]:
        return _running_daemon(timeout)
    folder = ensure_state_dir()
    out_path = folder / OUT_NAME
    # -P: the working directory never joins sys.path; cwd "/": the daemon holds no project folder open.
    args = [sys.executable, "-P", "-m", "codememory.daemon", "run", "--background"]
    if port is not None:
        args += ["--port", str(port)]
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            cwd="/",
        )
    deadline = time.monotonic() + timeout
    while True:
        code = proc.poll()
        if code is not None:
            reason = _last_line(out_path) or f"see {out_path}"
            raise DaemonError(f"the daemon exited while starting (exit {code}): {reason}")
        written = read_info()
        if written is not None and written.get("pid") == proc.pid:
            try:
                health = Client(port=int(written["port"]), timeout=1.0).health()
                return DaemonStarted(
                    pid=written["pid"],
                    host=written["host"],
                    port=written["port"],
                    started_at=written["started_at"],
                    version=written["version"],
                    health=health,
                    log=str(log_path()),
                )
            except DaemonUnavailable:
                pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise DaemonError(f"the daemon did not answer /health within {timeout:.0f} s (see {log_path()})")
        time.sleep(0.05)


def _running_daemon(timeout: float) -> DaemonStarted:
    """The daemon this user already runs, once it answers /health (it may be starting up: the lock comes first,
    daemon.json once it listens)."""
    deadline = time.monotonic() + timeout
    while True:
        running, pid = running_pid()
        if not running:
            raise DaemonError("the codememory daemon stopped while `daemon start` was asking it; run it again")
        written = read_info()
        if written is not None and written.get("pid") == pid:
            try:
                health = Client(port=int(written["port"]), timeout=1.0).health()
                return DaemonStarted(
                    pid=written["pid"],
                    host=written["host"],
                    port=written["port"],
                    started_at=written["started_at"],
                    version=written["version"],
                    health=health,
                    log=str(log_path()),
                    already_running=True,
                )
            except DaemonUnavailable:
                pass
        if time.monotonic() > deadline:
            raise DaemonError(
                f"a codememory daemon runs (pid {pid or '?'}) but does not answer /health (see {log_path()})"
            )
        time.sleep(0.05)


def _exited(pid: int) -> bool:
    """The process is gone, or a zombie (it exited; its parent has not collected it yet)."""
    if not pid_alive(pid):
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _wait_stopped(pid: int, timeout: float) -> bool:
    """Wait until the process has exited (the lock alone is released a moment before the exit)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _exited(pid):
            return True
        time.sleep(0.02)
    return False


def stop(*, timeout: float = STOP_TIMEOUT) -> DaemonStopped:
    """SIGTERM the running daemon and wait for it to exit (SIGKILL after `timeout`)."""
    running, pid = running_pid()
    if running and pid is None:  # starting up: the PID file comes right after the lock
        deadline = time.monotonic() + 5
        while pid is None and running and time.monotonic() < deadline:
            time.sleep(0.05)
            running, pid = running_pid()
    if not running:
        return DaemonStopped(was_running=False, pid=None, forced=False)
    if pid is None:
        raise DaemonError("a daemon holds the lock but wrote no PID file; try again in a moment")
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    forced = False
    if not _wait_stopped(pid, timeout):
        forced = True
        log.warning("daemon pid %d did not stop within %.0f s: killing it", pid, timeout)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if not _wait_stopped(pid, 5.0):
            raise DaemonError(f"the daemon (pid {pid}) does not stop")
    remove_stale_files(state_dir(), only_pid=pid)
    return DaemonStopped(was_running=True, pid=pid, forced=forced)
