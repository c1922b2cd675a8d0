"""`codememory daemon run|start|stop|status|install|uninstall` (also `python -m codememory.daemon ...`): the
background daemon (HTTP bridge on 127.0.0.1 for the OpenCode plugin and hooks). Heavy imports (FastAPI,
uvicorn) happen in `run` only."""

from __future__ import annotations

import json
from typing import Any

import click

from codememory.errors import DaemonError, exit_code
from codememory.text.scrubbed_click import CommandGroup, error_line


class _DaemonGroup(CommandGroup):
    """Every error is one line on stderr with its exit code (`errors.exit_code`), never a traceback (nor a
    secret it quotes). An OSError there is the state folder that cannot be used: the daemon's error."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:  # not one of the tree (those are the CommandGroup's, UnsafePath included)
            where = f": {exc.filename}" if exc.filename else ""
            error = DaemonError(f"{exc.strerror or exc}{where}")
            click.echo(error_line(error), err=True)
            ctx.exit(exit_code(error))
        return None


_PORT = click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port on 127.0.0.1 (default: [daemon] port in the user config.toml, 9473; 0: any free port).",
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def dump_json(data: Any) -> None:
    """The CLI's JSON form (indented, UTF-8 as is), as `codememory --json` prints it everywhere."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


@click.group("daemon", cls=_DaemonGroup)
def daemon() -> None:
    """The background daemon: keeps stores and the embedding model in memory and answers the OpenCode
    plugin and hooks on http://127.0.0.1:9473 (GET /health, POST /retrieve; token in the state folder).

    \b
    codememory daemon start      run it in the background
    codememory daemon status     is it running? (pid, port, uptime, health)
    codememory daemon install    start it at login (systemd user unit / launchd agent)
    """


@daemon.command("run")
@_PORT
@click.option("--background", is_flag=True, hidden=True, help="Log to the log file only (used by `start`).")
def run_cmd(port: int | None, background: bool) -> None:
    """Run the daemon in this terminal until Ctrl-C / SIGTERM (what the service runs)."""
    from codememory.daemon import run_loop

    run_loop.run(foreground=not background, port=port, tasks=run_loop.default_tasks())


@daemon.command("start")
@_PORT
@_JSON
def start_cmd(port: int | None, as_json: bool) -> None:
    """Start the daemon in the background and wait until it answers (one runs per user: when it already runs,
    say so and leave it running)."""
    from codememory.daemon import lifecycle

    info = lifecycle.start(port)
    if as_json:
        dump_json(info.to_dict())
        return
    state = "already running" if info.already_running else "started"
    click.echo(f"codememory daemon {state}: pid {info.pid}, http://{info.host}:{info.port}")


@daemon.command("stop")
@_JSON
def stop_cmd(as_json: bool) -> None:
    """Stop the running daemon (SIGTERM, then SIGKILL if it does not exit in time)."""
    from codememory.daemon import lifecycle

    result = lifecycle.stop()
    if as_json:
        dump_json(result.to_dict())
    elif not result.was_running:
        click.echo("codememory daemon is not running")
    else:
        click.echo(f"codememory daemon stopped (pid {result.pid}{', killed' if result.forced else ''})")


@daemon.command("status")
@_JSON
def status_cmd(as_json: bool) -> None:
    """Running or stopped, pid, port, uptime and health."""
    from codememory.daemon import lifecycle

    info = lifecycle.status()
    if as_json:
        dump_json(info.to_dict())
        return
    if not info.running:
        click.echo("codememory daemon: stopped")
        click.echo(f"  log      {info.log}")
        return
    click.echo(f"codememory daemon: running (pid {info.pid}, http://{info.host}:{info.port})")
    if info.uptime_seconds is not None:
        click.echo(f"  uptime   {_duration(info.uptime_seconds)}")
    health = info.health
    if health is None:
        click.echo("  health   not answering")
    else:
        emb = health["embedding"]
        model = "loaded" if emb["loaded"] else ("unavailable" if emb["available"] is False else "not loaded yet")
        click.echo(f"  health   {health['status']}, {health['projects_open']} project(s) open")
        click.echo(f"  llm      {health['llm_provider']}")
        click.echo(f"  embedder {emb['provider']} ({model})")
        if health["capture_lag_seconds"] is not None:
            click.echo(f"  capture  {health['capture_lag_seconds']:.0f} s behind")
        if health["last_error"]:
            click.echo(f"  error    {health['last_error']} ({health['last_error_at']})")
    click.echo(f"  log      {info.log}")


def _duration(seconds: float) -> str:
    s = int(seconds)
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {s}s" if minutes else f"{s}s"


@daemon.command("install")
@_JSON
def install_cmd(as_json: bool) -> None:
    """Start the daemon at login: a systemd user unit (Linux) or a launchd agent (macOS), enabled and
    started when the service manager is reachable (set CODEMEMORY_NO_SERVICE_MANAGER=1 to only write it)."""
    from codememory.daemon import service_install

    result = service_install.install_service()
    if as_json:
        dump_json(result.to_dict())
        return
    click.echo(f"{result.action.capitalize()} {result.service} service: {result.file}")
    if result.stopped_pid:
        click.echo(f"Stopped the running daemon (pid {result.stopped_pid}); the service runs it now.")
    if result.enabled:
        click.echo("Enabled and started.")
    else:
        click.echo("To enable and start it, run:")
        for command in result.run_yourself:
            click.echo(f"  {command}")


@daemon.command("uninstall")
@_JSON
def uninstall_cmd(as_json: bool) -> None:
    """Stop and remove the login service written by `install`."""
    from codememory.daemon import service_install

    result = service_install.uninstall_service()
    if as_json:
        dump_json(result.to_dict())
        return
    if result.action == "unchanged":
        click.echo(f"No {result.service} service installed ({result.file})")
        return
    click.echo(f"Removed {result.service} service: {result.file}")
    for command in result.run_yourself:
        click.echo(f"  then run: {command}")
