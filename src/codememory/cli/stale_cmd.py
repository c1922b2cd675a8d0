"""`codememory stale`: check which memories name code that is gone (thin over codememory.operations.stale)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.cli.progress_output import progress_note
from codememory.text.context_render import one_line


@click.command("stale")
@click.option(
    "--fix",
    is_flag=True,
    help="For each memory stale only because paths were renamed, store its text with the new paths as a memory "
    "that supersedes it.",
)
@json_option
@click.pass_context
def stale(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check memories against the code: a path they name that was deleted or renamed since they were written
    (git's rename detection follows it to its new place), a symbol that is in no file any more. Marks them
    stale with the reason, clears marks whose path is back, and records the run. Stale memories rank lower in
    search and retrieval and carry a "may be stale: ..." note when shown; `show` says why. The daemon runs
    the same check every `[staleness] check_interval` seconds. Needs a git repository.

    \b
    JSON keys: head, checked, stale, marked, cleared: [{id, subject}], run_id, memories: [{id, text, note, new,
    suggested_text, reasons: [{subject, kind, commit, new_path, marked_at}]}], fixed: [{id, new_id}].

    \b
    Examples:
      codememory stale
      codememory stale --fix
      codememory stale --json
    """
    from codememory.operations.stale import check_stale

    def progress(line: str) -> None:
        if not as_json:
            progress_note(line + " ...")

    report = check_stale(open_store(ctx), fix=fix, progress=progress)
    if as_json:
        render.dump_json(report.to_dict())
        return
    for mem in report.memories:
        flag = " (new)" if mem.new else ""
        click.echo(f"{mem.id}{flag}  {one_line(mem.note, 300)}")
        click.echo(f"    {one_line(mem.text, 120)}")
        if mem.suggested_text:
            click.echo(f"    suggested: {one_line(mem.suggested_text, 200)}")
    for item in report.fixed:
        click.echo(f"Fixed {item.id}: superseded by {item.new_id}")
    for cleared in report.cleared:
        click.echo(f"{cleared.id}  no longer stale: {one_line(cleared.subject, 120)} exists again")
    fixed = f", {len(report.fixed)} fixed" if fix else ""
    click.echo(
        f"{report.stale} of {report.checked} memories naming paths or symbols may be stale at "
        f"{report.head[:7]} ({report.marked} new marks, {len(report.cleared)} cleared{fixed})."
    )
