"""`codememory runs`: the recorded hygiene runs (thin over codememory.operations.hygiene_runs)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store


@click.command("runs")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1, max=1000))
@json_option
@click.pass_context
def runs(ctx: click.Context, limit: int, as_json: bool) -> None:
    """The project's recorded hygiene runs, newest first: consolidation runs (`consolidate`, or the daemon's
    schedule; undo one with `consolidate --undo RUN`) and staleness checks (`stale`, or the daemon's schedule),
    each with what it changed. The viewer's Runs page shows the same.

    \b
    JSON keys: runs: [{kind, id, started_at, finished_at, status, trigger, counts}].

    \b
    Examples:
      codememory runs
      codememory runs --limit 5 --json
    """
    from codememory.operations.hygiene_runs import hygiene_runs

    result = hygiene_runs(open_store(ctx), limit)
    if as_json:
        render.dump_json(result.to_dict())
        return
    if not result.runs:
        click.echo("No consolidation or staleness runs yet.")
    for run in result.runs:
        counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v) or "no change"
        by = f" ({run.trigger})" if run.trigger else ""
        click.echo(f"{run.finished_at}  {run.kind} #{run.id} {run.status}{by}: {counts}")
