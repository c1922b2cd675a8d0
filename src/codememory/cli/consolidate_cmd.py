"""`codememory consolidate`: memory hygiene on demand (thin over codememory.operations.consolidate)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.cli.progress_output import progress_note
from codememory.errors import InvalidInput
from codememory.text.context_render import FIELD_CHARS, one_line, quoted

if TYPE_CHECKING:
    from codememory.operations import consolidate as ops


@click.command()
@click.option(
    "--dry-run", is_flag=True, help="Show what a run would change (decay proposals included); change nothing."
)
@click.option("--undo", "undo_run", type=int, metavar="RUN", help="Undo recorded run RUN: restore what it archived.")
@click.option("--runs", "list_runs", is_flag=True, help="List the recorded runs, newest first.")
@click.option("--no-model", is_flag=True, help="Decide by the rules only, even when [llm] configures a model.")
@click.option(
    "--never-used",
    is_flag=True,
    help="Also archive memories agents were shown in [usefulness] never_used_after sessions (5) and never used.",
)
@json_option
@click.pass_context
def consolidate(
    ctx: click.Context,
    dry_run: bool,
    undo_run: int | None,
    list_runs: bool,
    no_model: bool,
    never_used: bool,
    as_json: bool,
) -> None:
    """Squash memories that say the same thing, link updates and reversals, archive unread ones.

    Live memories at least `[consolidation] similarity_threshold` alike (by their vectors, else by shared
    words) are compared. Memories whose numbers, versions, paths or polarity differ are never merged: the newer
    `supersedes` the older (the same subject, an updated value) or they are linked as `conflicts`. A squash
    writes one memory (the highest importance, every tag, entity and link) and archives the originals. Memories
    of low importance nobody retrieved or was shown for `decay_after_days` are archived (decay), and spellings
    of one entity are merged (py.test -> pytest). Nothing is deleted; every run is recorded and `--undo RUN`
    reverses it. The daemon runs this every `[consolidation] interval` seconds (default: daily).
    `--never-used` also archives the memories `codememory report` lists as shown again and again and never used
    (a dry run without it names them).
    """
    from codememory.operations import consolidate as ops

    if sum((dry_run, undo_run is not None, list_runs)) > 1:
        raise InvalidInput("choose one of --dry-run, --undo RUN and --runs")
    store = open_store(ctx)
    if list_runs:
        runs = ops.runs(store)
        if as_json:
            render.dump_json(runs.to_dict())
            return
        if not runs.runs:
            click.echo("No consolidation run recorded yet.")
        for r in runs.runs:
            counts = ", ".join(f"{k} {v}" for k, v in r.counts.items() if v) or "no change"
            state = f"undone {r.undone_at[:19]}" if r.undone_at else r.status
            click.echo(f"run {r.id}  {r.started_at[:19]}  {r.trigger}  {_f(r.method)}  {state}  {counts}")
        return
    if undo_run is not None:
        undone = ops.undo(store, undo_run)
        if as_json:
            render.dump_json(undone.to_dict())
            return
        click.echo(
            f"Undid run {undone.run}: restored {len(undone.restored)} memories, archived {len(undone.archived)} "
            f"consolidated ones, {undone.links_removed} links reverted, {undone.entities_restored} entity spellings "
            "back."
        )
        return
    progress = None if as_json else progress_note
    report = ops.consolidate(store, dry_run=dry_run, use_model=not no_model, progress=progress, never_used=never_used)
    if as_json:
        render.dump_json(report.to_dict())
        return
    _print(report)


def _f(value: object) -> str:
    return one_line(value, FIELD_CHARS)


def _print(report: ops.ConsolidationReport) -> None:
    for note in report.notes:
        click.echo(f"note: {_f(note)}")
    for c in report.changes:
        if c.kind == "squash":
            into = f" into {c.result}" if c.result else ""
            click.echo(f"squash {' '.join(c.memories)}{into}  ({_f(c.reason)})")
            click.echo(quoted(c.text or "", "    "))
        elif c.kind in ("supersedes", "conflicts"):
            click.echo(f"{c.kind}: {c.memories[0]} -> {c.memories[1]}  ({_f(c.reason)})")
        elif c.kind == "decay":
            click.echo(f"archive {c.memories[0]}  ({_f(c.reason)})")
        else:
            click.echo(f"entity {_f(c.text)} -> {_f(c.result)}  ({_f(c.reason)})")
    for cluster in report.left_alone:
        if len(cluster.pairs) == 1:
            click.echo(f"left alone {' '.join(cluster.memories)}  ({_f(cluster.pairs[0].reason)})")
            continue
        click.echo(f"left alone {' '.join(cluster.memories)}:")
        for pair in cluster.pairs:
            click.echo(f"    {' / '.join(pair.memories)}  ({_f(pair.reason)})")
    counts = ", ".join(f"{v} {k}" for k, v in report.counts.items() if v) or "nothing to change"
    head = "Would change" if report.dry_run else f"Run {report.run}"
    click.echo(
        f"{head}: {counts} ({report.considered} live memories, {report.clusters} clusters, {_f(report.method)}"
        + (f", {report.model_calls} model calls" if report.model_calls else "")
        + ")."
    )
    if report.run is not None and any(report.counts.values()):
        click.echo(f"Undo with: codememory consolidate --undo {report.run}")
