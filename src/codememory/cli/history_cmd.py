"""`codememory import-history`: the project's past assistant sessions on this machine, captured and extracted (thin
over codememory.operations.import_history)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store

if TYPE_CHECKING:
    from codememory.operations.import_history import HistoryImport


@click.command("import-history")
@click.option("--since", metavar="DATE", help="Only sessions active since DATE (ISO, or e.g. '30 days ago').")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="Only the N most recent sessions.")
@click.option("--dry-run", is_flag=True, help="Say what would be imported; change nothing.")
@json_option
@click.pass_context
def import_history(ctx: click.Context, since: str | None, limit: int | None, dry_run: bool, as_json: bool) -> None:
    """Bring in this project's past Claude Code, Codex, Gemini CLI, Copilot CLI and OpenCode sessions.

    Looks where each assistant keeps its sessions on this machine (~/.claude/projects, $CODEX_HOME/sessions,
    ~/.gemini/tmp, ~/.copilot/session-state, OpenCode's database), keeps those that ran in this project, and
    captures and extracts each one as if it had just ended: secrets are scrubbed as in live capture, and memories
    name the session they came from. Safe to run again: what was imported before is skipped.
    """
    from codememory.core.dates import parse_when
    from codememory.operations.import_history import import_history as run_import

    after = parse_when(since, what="--since") if since else None
    store = open_store(ctx)
    bar = None
    if not as_json and not dry_run and sys.stderr.isatty():
        bar = click.progressbar(length=0, label="Importing sessions", file=sys.stderr)

    def advance(done: int, total: int) -> None:
        if bar is not None:
            bar.length = total
            bar.update(done - bar.pos)

    try:
        report = run_import(store, since=after, limit=limit, dry_run=dry_run, progress=advance)
    finally:
        if bar is not None:
            bar.render_finish()
    if as_json:
        render.dump_json(report.to_dict())
    else:
        _print(report)
    if report.errors or any(s.error for s in report.sessions):
        ctx.exit(1)


def _print(report: HistoryImport) -> None:
    if not report.found:
        click.echo(f"No past sessions of {report.project} found on this machine.")
    else:
        per = ", ".join(f"{n} {key}" for key, n in sorted(report.by_assistant.items()))
        click.echo(f"Found {report.found} past sessions of this project ({per}); {report.to_import} not imported yet.")
    for s in report.sessions:
        line = f"  {s.updated_at[:16]}  {s.assistant:<8} {s.session_id}  {s.turns} turns  {s.status}"
        if not report.dry_run and s.status != "imported":
            line += f" -> {s.turns_captured} turns captured, {s.memories_created} memories"
        click.echo(line + (f"  error: {s.error}" if s.error else ""))
    if report.dry_run:
        if report.to_import:
            click.echo("Dry run: nothing imported. Run `codememory import-history` to import them.")
    elif report.to_import:
        click.echo(
            f"Imported {report.to_import} sessions: {report.turns_captured} turns captured, "
            f"{report.memories_created} memories created ({report.seconds:.1f} s)."
        )
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
