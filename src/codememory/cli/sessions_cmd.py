"""`codememory sessions list / search / show / rebuild` (thin over codememory.operations.sessions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from codememory.cli import render
from codememory.cli.group import CliGroup
from codememory.cli.options import json_option, open_store

if TYPE_CHECKING:
    from codememory.sessions.results import SessionHit, SessionSummary


@click.group(cls=CliGroup)
def sessions() -> None:
    """Coding sessions saved by agents through the `checkpoint` tool (markdown files in
    .codememory/sessions/, which are the source of truth)."""


def _session_line(item: SessionSummary | SessionHit) -> str:
    goal = item.goal or "(no goal yet)"
    if len(goal) > 80:
        goal = goal[:77] + "..."
    parts = [click.style(item.session_id, fg="cyan", bold=True), item.tool, item.date, item.status]
    where = item.markdown_path or "(its file is a link or outside .codememory/sessions/: not shown)"
    return "  ".join(parts) + "\n    " + goal + "\n    " + click.style(where, dim=True)


@sessions.command("list")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@click.option("--tool", help="Only sessions of this tool (e.g. claude-code, cursor).")
@click.option("--status", type=click.Choice(["open", "frozen", "closed"]), help="Only sessions with this status.")
@json_option
@click.pass_context
def sessions_list(ctx: click.Context, limit: int, tool: str | None, status: str | None, as_json: bool) -> None:
    """Recent sessions, newest first."""
    from codememory.operations import sessions as ops

    found = ops.list_sessions(open_store(ctx), limit=limit, tool=tool, status=status)
    if as_json:
        render.dump_json(found.to_dict())
    elif not found.sessions:
        click.echo("No sessions.")
    else:
        for item in found.sessions:
            click.echo(_session_line(item))


@sessions.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 5))
@click.option("--tool", help="Only sessions of this tool (e.g. claude-code, cursor).")
@json_option
@click.pass_context
def sessions_search(ctx: click.Context, query: tuple[str, ...], limit: int, tool: str | None, as_json: bool) -> None:
    """Find sessions by what they were about ('tei migration last week', 'cursor session about auth.py')."""
    from codememory.operations import sessions as ops

    found = ops.search_sessions(open_store(ctx), " ".join(query), limit=limit, tool=tool)
    if as_json:
        render.dump_json(found.to_dict())
    elif not found.results:
        click.echo("No sessions found matching your query.")
    else:
        for item in found.results:
            score = "" if item.score is None else f"  score {item.score:g}"
            click.echo(_session_line(item) + score)


@sessions.command("show")
@click.argument("session_id")
@click.option("--files", "files_only", is_flag=True, help="Print only the files the session touched.")
@json_option
@click.pass_context
def sessions_show(ctx: click.Context, session_id: str, files_only: bool, as_json: bool) -> None:
    """Print a session's markdown file (or its files with --files)."""
    from codememory.operations import sessions as ops

    store = open_store(ctx)
    if files_only:
        files = ops.session_files(store, session_id)
        if as_json:
            render.dump_json(files.to_dict())
        else:
            for item in files.files:
                click.echo(f"{item.change_type:<9} {item.path}")
        return
    shown = ops.show_session(store, session_id)
    if as_json:
        render.dump_json(shown.to_dict())
    else:
        click.echo(shown.markdown, nl=False)


@sessions.command("rebuild")
@json_option
@click.pass_context
def sessions_rebuild(ctx: click.Context, as_json: bool) -> None:
    """Recreate the session rows and search index from the markdown files in .codememory/sessions/."""
    from codememory.operations import sessions as ops

    report = ops.rebuild_sessions(open_store(ctx))
    if as_json:
        render.dump_json(report.to_dict())
        return
    click.echo(f"Rebuilt {report.sessions} session{'' if report.sessions == 1 else 's'} from markdown.")
    for error in report.errors:
        click.echo(f"codememory: warning: skipped {error.file}: {error.error}", err=True)
