"""`codememory daemon run`: serve the HTTP bridge on 127.0.0.1 in this process until SIGTERM/SIGINT, with the
background tasks (capture, extraction) in a worker thread, the instance lock held and the PID file written."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from codememory import __version__
from codememory.core.config import load_config
from codememory.core.paths import ensure_state_dir, state_dir
from codememory.core.private_file import write_private
from codememory.daemon.client import INFO_NAME, read_info
from codememory.daemon.files import (
    LOCK_NAME,
    LOG_NAME,
    PID_NAME,
    InstanceLock,
    read_pid,
    remove_stale_files,
)
from codememory.daemon.log_file import attach, configure_logging, remove_logging
from codememory.daemon.state import Task
from codememory.errors import DaemonError, LocalServerError
from codememory.web.listen import HOST, listen_loopback
from codememory.web.token import load_or_create_token

if TYPE_CHECKING:
    from codememory.daemon.state import DaemonState

log = logging.getLogger("codememory.daemon")


def default_tasks() -> list[Task]:
    """The background work `codememory daemon run` schedules: capture every poll, extraction beside it."""
    from codememory.daemon.tasks import (
        default_tasks as tasks,  # imported here: `daemon status` must not load the pipeline
    )

    return tasks()


def _bind(port: int) -> socket.socket:
    return listen_loopback(port, "set [daemon] port in the user config.toml or pass --port")


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
            handlers.append(attach(logging.StreamHandler(sys.stderr)))
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
    except (DaemonError, LocalServerError) as exc:
        log.error("%s", exc)
        raise
    finally:
        lock.release()
        remove_logging(handlers)


def _serve(state: DaemonState, sock: socket.socket) -> None:
    import uvicorn

    from codememory.daemon.server import create_app
    from codememory.web.http_guard import uvicorn_options

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
        write_private(folder / INFO_NAME, json.dumps(info) + "\n")
        write_private(folder / PID_NAME, f"{os.getpid()}\n")
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
