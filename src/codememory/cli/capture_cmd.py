"""`codememory capture`: one capture-and-extraction pass in the foreground (for cron, tests, debugging)."""

from __future__ import annotations

import json
import re
from typing import Any

import click

from codememory.errors import CodememoryError

_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*$", re.IGNORECASE)


def parse_duration(text: str) -> float:
    """'90', '90s', '15m', '2h', '1d' -> seconds."""
    match = _DURATION_RE.match(text)
    if not match:
        raise click.BadParameter(f"{text!r} is not a duration (examples: 0, 90s, 15m, 2h, 1d)")
    return float(match.group(1)) * _UNITS[(match.group(2) or "").lower()]


class _Duration(click.ParamType):  # type: ignore[type-arg]
    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        return parse_duration(str(value))


@click.command("capture")
@click.option(
    "--idle-after",
    type=_Duration(),
    default=None,
    help="Extract sessions idle this long (e.g. 0, 90s, 15m, 2h); default: [capture] idle_after, 60 min.",
)
@click.option("--no-extract", is_flag=True, help="Only capture turns to the daily logs; extract nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the pass's report as JSON.")
def capture(idle_after: float | None, no_extract: bool, as_json: bool) -> None:
    """Capture new OpenCode turns into every initialised project's daily log, then extract memories
    from sessions idle past the threshold (OpenCode's, and the Claude Code and Codex sessions their
    hooks captured in registered projects), once, and exit.

    This is what the daemon does every few seconds. The OpenCode database is found like OpenCode finds
    it (OPENCODE_DB, XDG_DATA_HOME/opencode, ~/.local/share/opencode) or set by [capture] opencode_db.
    Exit status 1 when the database cannot be read or a project failed.
    """
    from codememory.core.config import load_config
    from codememory.extract.capture_and_extract import run_pass

    try:
        cfg = load_config(None).capture
        report = run_pass(
            opencode_db=cfg.opencode_db,
            auto_init=cfg.auto_init,
            idle_after=idle_after,
            extract=not no_extract,
            registered=True,
        )
    except CodememoryError as exc:
        raise click.ClickException(str(exc)) from None
    data = report.to_dict()
    db = data["capture"]["db"]
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        _print(data)
    if (db["state"] not in ("ok", "missing")) or data["errors"]:
        click.get_current_context().exit(1)


def _print(data: dict[str, Any]) -> None:
    cap = data["capture"]
    db = cap["db"]
    if db["state"] != "ok":
        click.echo(f"OpenCode database: {db['state']}: {db['reason']}")
    else:
        click.echo(f"OpenCode database: {db['path']}")
    for project in cap["projects"]:
        line = f"  {project['root']}: {project['turns_captured']} turns captured"
        if project["turns_pending"]:
            line += f", {project['turns_pending']} still running"
        if project["log_files"]:
            line += f" -> {', '.join(project['log_files'])}"
        click.echo(line)
    for root, why in cap["skipped"].items():
        click.echo(f"  skipped {root}: {why}")
    for project in data["extraction"]:
        for session in project["sessions"]:
            click.echo(
                f"  extracted {session['session_id']} (turns {session['first_seq']}-{session['last_seq']}): "
                f"{session['status']}, {session['created']} new memories, {session['duplicates']} duplicates"
            )
        if project["waiting"]:
            click.echo(f"  {project['root']}: {project['waiting']} sessions wait until idle")
        if project["skipped"]:
            click.echo(f"  {project['root']}: extraction skipped: {project['skipped']}")
    click.echo(f"{data['turns_captured']} turns captured, {data['memories_created']} memories created")
    for error in data["errors"]:
        click.echo(f"error: {error}", err=True)
