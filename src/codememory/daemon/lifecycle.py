"""Running the daemon: `run` (serve in this process), `start` (spawn `run` detached and wait for /health),
`stop`, `status`, the per-install token, the PID file, the rotating scrubbed log, and the user service
(systemd on Linux, launchd on macOS).

Files, all in `state_dir()` ($XDG_STATE_HOME/codememory, mode 0700):
- `token`: the bearer token, created once per install (`secrets.token_urlsafe(32)`, mode 0600).
- `daemon.lock`: held (flock) by the running daemon for its whole life: one daemon per user. A PID file
  whose lock nobody holds is stale (the process died, or the PID now belongs to another program).
- `daemon.pid` and `daemon.json` ({pid, host, port, started_at, version}): written once the socket is
  bound (so a `--port 0` daemon tells clients the port it got), removed on a clean exit.
- `daemon.log` (+ `.1`, `.2`, ... rotated at `[daemon] log_max_bytes`): every line passes through
  `privacy.scrub` first. `daemon.out`: stdout/stderr of a daemon spawned by `start` (crashes before the
  log is set up).
"""

from __future__ import annotations

import contextlib
import json
import logging
import logging.handlers
import os
import plistlib
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from codememory import __version__
from codememory.core.config import load_config
from codememory.core.dates import now_utc
from codememory.core.env_switches import switched_on
from codememory.core.paths import state_dir, xdg_home
from codememory.core.safe_text import printable_line
from codememory.daemon.client import INFO_NAME, TOKEN_NAME, Client, read_info
from codememory.daemon.state import HOST, Task
from codememory.errors import DaemonError, DaemonUnavailable
from codememory.text.privacy import scrub

if TYPE_CHECKING:
    from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")

PID_NAME = "daemon.pid"
LOCK_NAME = "daemon.lock"
LOG_NAME = "daemon.log"
OUT_NAME = "daemon.out"
SERVICE_NAME = "codememory.service"
LAUNCHD_LABEL = "dev.codememory.daemon"
# A switch (core.env_switches): never call systemctl/launchctl, install only writes the file.
ENV_NO_SERVICE_MANAGER = "CODEMEMORY_NO_SERVICE_MANAGER"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


# ------------------------------------------------------------------------------------------ files
def ensure_state_dir() -> Path:
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and folder.stat().st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def pid_path() -> Path:
    return state_dir() / PID_NAME


def log_path() -> Path:
    return state_dir() / LOG_NAME


def _write_private(path: Path, text: str) -> None:
    """Atomically replace `path` with `text`, readable by the owner only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load_or_create_token() -> str:
    """The per-install token: read from `token`, or created once (0600, never overwritten by a racing
    creator: the file appears complete or not at all). A token file readable by others is tightened."""
    path = ensure_state_dir() / TOKEN_NAME
    for _attempt in range(3):
        try:
            token = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            token = ""
        if len(token) >= 32:
            if os.name == "posix" and path.stat().st_mode & 0o077:
                path.chmod(0o600)
                log.warning("token file was readable by others: mode set to 0600")
            return token
        if token:  # damaged: replace it (clients re-read it on every call)
            path.unlink(missing_ok=True)
        fresh = secrets.token_urlsafe(32)
        tmp = path.with_name(f".{TOKEN_NAME}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(fresh + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails if another process created it meanwhile: then use theirs
            return fresh
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
                return fresh
        finally:
            tmp.unlink(missing_ok=True)
    raise DaemonError(f"cannot create the token file {path}")


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


def _running_pid() -> tuple[bool, int | None]:
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


# ---------------------------------------------------------------------------------------- logging
class ScrubFilter(logging.Filter):
    """Every message, with its arguments merged in, and every traceback pass through `privacy.scrub`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the line
            message = f"{record.msg} {record.args}"
        record.msg = scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class OneLineFormatter(logging.Formatter):
    """One line per record, traceback included: a message may carry text from a project's files or
    database (an error message with newlines or terminal escapes), which must not forge log lines."""

    def format(self, record: logging.LogRecord) -> str:
        return printable_line(super().format(record))


def configure_logging(path: Path, max_bytes: int, backups: int, *, stderr: bool = False) -> list[logging.Handler]:
    """Send the root logger (and so uvicorn's) to a rotating, scrubbed log file, and to stderr when asked.
    Returns the handlers added, for `remove_logging`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=max(max_bytes, 0), backupCount=max(backups, 1), encoding="utf-8"
    )
    handlers = [_attach(file_handler)]
    if stderr:
        handlers.append(_attach(logging.StreamHandler(sys.stderr)))
    root = logging.getLogger()
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handlers


def _attach(handler: logging.Handler) -> logging.Handler:
    handler.addFilter(ScrubFilter())
    handler.setFormatter(OneLineFormatter(LOG_FORMAT))
    logging.getLogger().addHandler(handler)
    return handler


def remove_logging(handlers: Sequence[logging.Handler]) -> None:
    root = logging.getLogger()
    for handler in handlers:
        root.removeHandler(handler)
        handler.close()


# -------------------------------------------------------------------------------------------- run
def default_tasks() -> list[Task]:
    """The background work `codememory daemon run` schedules: capture every poll, extraction beside it."""
    from codememory.daemon.tasks import (
        default_tasks as tasks,  # imported here: `daemon status` must not load the pipeline
    )

    return tasks()


def _bind(port: int) -> socket.socket:
    return listen_loopback(port, "set [daemon] port in the user config.toml or pass --port")


def listen_loopback(port: int, hint: str) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:`port` (0: any free port); DaemonError (one line, ending with
    `hint`) when the port cannot be had."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP; without it every
    # keep-alive response waits ~40 ms (Nagle + delayed ACK: uvicorn writes headers and body separately).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":  # rebind at once after a restart (old connections in TIME_WAIT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise DaemonError(
            f"cannot listen on {HOST}:{port}: {exc.strerror or exc} (is another program using the port? {hint})"
        ) from None
    sock.set_inheritable(False)
    return sock


def _worker(state: DaemonState) -> None:
    """Run every task, then wait `poll_interval`, until the daemon stops. A failing task is logged and
    recorded in /health's last_error; the others and the daemon carry on."""
    while not state.stop_event.is_set():
        for task in state.tasks:
            if state.stop_event.is_set():
                return
            name = getattr(task, "__name__", type(task).__name__)
            try:
                task(state)
            except Exception as exc:
                log.exception("background task %s failed", name)
                state.health.record_error(exc, f"task {name}")
        state.health.tasks_ran()
        state.stop_event.wait(state.poll_interval)


def run(
    foreground: bool = True,
    *,
    port: int | None = None,
    tasks: Sequence[Task] | None = None,
    poll_interval: float | None = None,
) -> None:
    """Serve on 127.0.0.1 until SIGTERM/SIGINT. `port` None: `[daemon] port` (0: any free port; the port
    bound is written to daemon.json). `tasks` run every `poll_interval` seconds (default `[capture]
    poll_interval`) in a worker thread. `foreground` also logs to stderr. Raises DaemonError when another
    daemon is running or the port is taken."""
    config = load_config(None)
    folder = ensure_state_dir()
    # stderr joins once the daemon is up: a refusal to start is the CLI's one-line error there, not two
    handlers = configure_logging(folder / LOG_NAME, config.daemon.log_max_bytes, config.daemon.log_backups)
    lock = InstanceLock(folder / LOCK_NAME)
    try:
        if not lock.acquire():
            info = read_info() or {}
            where = f"pid {info.get('pid', read_pid() or '?')}, port {info.get('port', '?')}"
            raise DaemonError(
                f"the codememory daemon is already running ({where}); one runs per user "
                "(`codememory daemon stop` first)"
            )
        stale = read_pid()
        if remove_stale_files(folder):
            log.info("removed a stale PID file (pid %s)", stale)
        sock = _bind(config.daemon.port if port is None else port)
        if foreground:
            handlers.append(_attach(logging.StreamHandler(sys.stderr)))
        try:
            from codememory.daemon.state import DaemonState

            state = DaemonState(
                token=load_or_create_token(),
                config=config,
                port=sock.getsockname()[1],
                tasks=list(default_tasks() if tasks is None else tasks),
                poll_interval=max(poll_interval if poll_interval is not None else config.capture.poll_interval, 0.01),
            )
            _serve(state, sock)
        finally:
            sock.close()
    except DaemonError as exc:
        log.error("%s", exc)
        raise
    finally:
        lock.release()
        remove_logging(handlers)


def _serve(state: DaemonState, sock: socket.socket) -> None:
    import uvicorn

    from codememory.daemon.http_guard import uvicorn_options
    from codememory.daemon.server import create_app

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(state),
            log_config=None,  # our handlers (scrubbed, rotating) on the root logger get uvicorn's records
            access_log=False,
            server_header=False,
            proxy_headers=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
            **uvicorn_options(state.config.daemon.header_timeout),  # head deadline, idle cap (no socket limit)
        )
    )

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        # Before and after uvicorn's own handlers (it restores ours and re-raises what it caught).
        if not state.stop_event.is_set():
            log.info("received %s: shutting down", signal.Signals(signum).name)
        state.stop_event.set()
        server.should_exit = True

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
    old_hook = threading.excepthook

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            log.error("thread %s died", args.thread.name if args.thread else "?", exc_info=args.exc_value)

    threading.excepthook = thread_hook
    folder = state_dir()
    worker: threading.Thread | None = None
    try:
        info = {
            "pid": os.getpid(),
            "host": HOST,
            "port": state.port,
            "started_at": state.started_at,
            "version": __version__,
        }
        _write_private(folder / INFO_NAME, json.dumps(info) + "\n")
        _write_private(folder / PID_NAME, f"{os.getpid()}\n")
        log.info("codememory daemon %s listening on http://%s:%d (pid %d)", __version__, HOST, state.port, os.getpid())
        if state.tasks:
            worker = threading.Thread(target=_worker, args=(state,), name="codememory-tasks", daemon=True)
            worker.start()
        if not state.stop_event.is_set():
            server.run(sockets=[sock])
    finally:
        state.stop_event.set()
        if worker is not None:
            worker.join(timeout=10)
        if worker is None or not worker.is_alive():
            state.stores.close_all()  # a task still running keeps its store; the process exits anyway
        remove_stale_files(folder, only_pid=os.getpid())
        threading.excepthook = old_hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("codememory daemon stopped")


# ------------------------------------------------------------------------------ start/stop/status
def _uptime(started_at: Any) -> float | None:
    if not isinstance(started_at, str):
        return None
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return None
    return round((now_utc() - started).total_seconds(), 1)


def status(*, with_health: bool = True) -> dict[str, Any]:
    """{running, pid, host, port, started_at, uptime_seconds, version, health, state_dir, log}."""
    running, pid = _running_pid()
    info = read_info() if running else None
    out: dict[str, Any] = {
        "running": running,
        "pid": pid,
        "host": HOST,
        "port": info.get("port") if info else None,
        "started_at": info.get("started_at") if info else None,
        "uptime_seconds": _uptime(info.get("started_at")) if info else None,
        "version": info.get("version") if info else None,
        "health": None,
        "state_dir": str(state_dir()),
        "log": str(log_path()),
    }
    if running and with_health and info:
        try:
            out["health"] = Client(port=int(info["port"]), timeout=2.0).health()
        except DaemonUnavailable:
            out["health"] = None
    return out


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    line = scrub(lines[-1]) if lines else ""
    return line.removeprefix("codememory: error: ")


def start(port: int | None = None, *, timeout: float = START_TIMEOUT) -> dict[str, Any]:
    """Spawn `run` detached (new session, output to daemon.out) and wait until its /health answers."""
    running, pid = _running_pid()
    if running:
        info = read_info() or {}
        raise DaemonError(f"the codememory daemon is already running (pid {pid or '?'}, port {info.get('port', '?')})")
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
                return {**written, "health": health, "log": str(log_path())}
            except DaemonUnavailable:
                pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise DaemonError(f"the daemon did not answer /health within {timeout:.0f} s (see {log_path()})")
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


def stop(*, timeout: float = STOP_TIMEOUT) -> dict[str, Any]:
    """SIGTERM the running daemon and wait for it to exit (SIGKILL after `timeout`).
    {was_running, pid, forced}."""
    running, pid = _running_pid()
    if running and pid is None:  # starting up: the PID file comes right after the lock
        deadline = time.monotonic() + 5
        while pid is None and running and time.monotonic() < deadline:
            time.sleep(0.05)
            running, pid = _running_pid()
    if not running:
        return {"was_running": False, "pid": None, "forced": False}
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
    return {"was_running": True, "pid": pid, "forced": forced}


# -------------------------------------------------------------------------------------- services
def console_script() -> Path:
    """The absolute path of the installed `codememory` console script (what the service runs)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in ("codememory", "codememory.exe") and argv0.is_file():
        return argv0.absolute()
    sibling = Path(sys.executable).parent / "codememory"
    if sibling.is_file():
        return sibling.absolute()
    found = shutil.which("codememory")
    if found:
        return Path(found).absolute()
    raise DaemonError("cannot find the `codememory` console script (install codememory with pip or pipx first)")


def _service_env() -> dict[str, str]:
    """The XDG locations of this shell, so the service uses the same settings, store registry and state."""
    names = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
    return {n: os.environ[n] for n in names if os.environ.get(n) and os.path.isabs(os.environ[n])}


def _systemd_quote(word: str, *, exec_line: bool) -> str:
    word = word.replace("%", "%%")
    if exec_line:
        word = word.replace("$", "$$")
    if word and all(c.isalnum() or c in "/._-+:=,@" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(program: Sequence[str], env: dict[str, str]) -> str:
    exec_start = " ".join(_systemd_quote(w, exec_line=True) for w in program)
    lines = [
        "# Written by `codememory daemon install`; remove with `codememory daemon uninstall`.",
        "[Unit]",
        "Description=codememory daemon (local memory for AI coding agents)",
        "StartLimitIntervalSec=120",
        "StartLimitBurst=5",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={exec_start}",
        "Restart=on-failure",
        "RestartSec=5",
        "TimeoutStopSec=20",
    ]
    lines += [f"Environment={_systemd_quote(f'{k}={v}', exec_line=False)}" for k, v in sorted(env.items())]
    lines += ["", "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def launchd_plist(program: Sequence[str], env: dict[str, str], out_path: Path) -> bytes:
    plist: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(program),
        "RunAtLoad": True,
        # Restarted when it fails, not after `codememory daemon stop` (a clean exit).
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(out_path),
        "StandardErrorPath": str(out_path),
    }
    if env:
        plist["EnvironmentVariables"] = dict(sorted(env.items()))
    return plistlib.dumps(plist)


def systemd_unit_path() -> Path:
    return xdg_home("XDG_CONFIG_HOME", ".config") / "systemd" / "user" / SERVICE_NAME


def launchd_plist_path() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def _manager_skipped() -> bool:
    return switched_on(ENV_NO_SERVICE_MANAGER)


def _systemd_usable() -> bool:
    if _manager_skipped() or not shutil.which("systemctl") or not Path("/run/systemd/system").is_dir():
        return False
    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return Path(runtime, "bus").exists()


def _launchctl_usable() -> bool:
    return not _manager_skipped() and shutil.which("launchctl") is not None


def _platform() -> str:
    if sys.platform == "darwin":
        return "launchd"
    if sys.platform.startswith("linux"):
        return "systemd"
    raise DaemonError(
        "service install supports Linux (systemd) and macOS (launchd); elsewhere run `codememory daemon start`"
    )


def _run_manager(commands: Sequence[Sequence[str]], *, check: bool = True) -> None:
    for cmd in commands:
        try:
            done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            if check:
                raise DaemonError(f"`{shlex.join(cmd)}` failed: {exc}") from None
            continue
        if done.returncode != 0 and check:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise DaemonError(f"`{shlex.join(cmd)}` failed: {detail[-1] if detail else f'exit {done.returncode}'}")


def _write_if_changed(path: Path, content: bytes) -> str:
    try:
        if path.read_bytes() == content:
            return "unchanged"
        action = "updated"
    except FileNotFoundError:
        action = "added"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)
    return action


def install_service() -> dict[str, Any]:
    """Write the user service (systemd unit / launchd agent) that runs `codememory daemon run` at login, and
    enable + start it when the service manager is reachable; otherwise say which commands to run."""
    kind = _platform()
    program = [str(console_script()), "daemon", "run"]
    env = _service_env()
    if kind == "systemd":
        path = systemd_unit_path()
        content = systemd_unit(program, env).encode("utf-8")
        commands = [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", SERVICE_NAME]]
        usable = _systemd_usable()
    else:
        path = launchd_plist_path()
        content = launchd_plist(program, env, ensure_state_dir() / OUT_NAME)
        commands = [["launchctl", "load", "-w", str(path)]]
        usable = _launchctl_usable()
    action = _write_if_changed(path, content)
    stopped = None
    if usable:
        result = stop()  # one daemon per user: the service takes over from a hand-started one
        stopped = result["pid"] if result["was_running"] else None
        if kind == "launchd":
            _run_manager([["launchctl", "unload", str(path)]], check=False)
        _run_manager(commands)
    return {
        "service": kind,
        "file": str(path),
        "action": action,
        "enabled": usable,
        "stopped_pid": stopped,
        "run_yourself": [] if usable else [shlex.join(c) for c in commands],
    }


def uninstall_service() -> dict[str, Any]:
    """Stop and disable the user service and remove its file (nothing to do when it is not installed)."""
    kind = _platform()
    path = systemd_unit_path() if kind == "systemd" else launchd_plist_path()
    if not path.exists():
        return {"service": kind, "file": str(path), "action": "unchanged", "run_yourself": []}
    if kind == "systemd":
        before = [["systemctl", "--user", "disable", "--now", SERVICE_NAME]]
        after = [["systemctl", "--user", "daemon-reload"]]
        usable = _systemd_usable()
    else:
        before = [["launchctl", "unload", "-w", str(path)]]
        after = [["launchctl", "remove", LAUNCHD_LABEL]]
        usable = _launchctl_usable()
    if usable:
        _run_manager(before, check=False)
    path.unlink()
    if kind == "systemd":  # what `enable` linked (disable removes it too; without systemctl we do)
        wanted = path.parent / "default.target.wants" / SERVICE_NAME
        if wanted.is_symlink():
            wanted.unlink()
    if usable:
        _run_manager(after, check=False)
    return {
        "service": kind,
        "file": str(path),
        "action": "removed",
        "run_yourself": [] if usable else [shlex.join(c) for c in after],
    }


__all__ = [
    "DaemonError",
    "InstanceLock",
    "ScrubFilter",
    "configure_logging",
    "console_script",
    "default_tasks",
    "install_service",
    "launchd_plist",
    "load_or_create_token",
    "remove_logging",
    "run",
    "start",
    "status",
    "stop",
    "systemd_unit",
    "uninstall_service",
]
