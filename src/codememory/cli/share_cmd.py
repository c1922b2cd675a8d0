"""`codememory share on|off|status` and `codememory sync`: team sharing through git (thin over
codememory.operations.share)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store

if TYPE_CHECKING:
    from codememory.operations.share import ShareReport
    from codememory.service.sharing import SyncReport


@click.group("share")
def share() -> None:
    """Share this project's memory with your team through git.

    \b
    With sharing on, every memory you store, edit, archive, link or forget is also written to
    .codememory/memories/ (one small JSON file per memory; a forgotten one leaves a tombstone
    without its text), which you commit and push like code. Personal memories (`store --personal`,
    and the [share] personal_categories / personal_entered_by settings; preferences by default)
    never go there. memory.db, its WAL and the caches stay out of git (.codememory/.gitignore).
    Teammates' memories arrive with `git pull` whether you share or not: the store applies the
    changed files the next time it is opened (`codememory sync` does it now).
    """


@share.command("on")
@json_option
@click.pass_context
def share_on_cmd(ctx: click.Context, as_json: bool) -> None:
    """Write this project's memories to .codememory/memories/ from now on (and all of them now)."""
    from codememory.operations.share import share_on

    _print(share_on(open_store(ctx)), as_json)


@share.command("off")
@json_option
@click.pass_context
def share_off_cmd(ctx: click.Context, as_json: bool) -> None:
    """Stop writing memories to the text form (the files stay; your store still follows them)."""
    from codememory.operations.share import share_off

    _print(share_off(open_store(ctx)), as_json)


@share.command("status")
@json_option
@click.pass_context
def share_status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Whether you share this project's memory, and the state of its text form."""
    from codememory.operations.share import share_status

    _print(share_status(open_store(ctx)), as_json)


def _print(report: ShareReport, as_json: bool) -> None:
    if as_json:
        render.dump_json(report.to_dict())
        return
    from codememory.core.safe_text import printable_line

    state = f"on since {report.since}" if report.sharing and report.since else "on" if report.sharing else "off"
    if report.action != "status":
        click.echo(f"Sharing {report.action}.")
    click.echo(f"Sharing is {state} for {printable_line(report.project)}.")
    click.echo(
        f"{report.folder}: {_count(report.files, 'memory file')}; "
        f"{_count(report.personal, 'personal memory', 'personal memories')} "
        f"{'stays' if report.personal == 1 else 'stay'} on this machine."
    )
    if report.written:
        click.echo(f"Wrote {_count(report.written, 'memory file')}: commit {report.folder} and .codememory/.gitignore.")
    if report.gitignore in ("written", "unchanged"):
        click.echo(f".codememory/.gitignore {report.gitignore}: memory.db, WAL, caches and logs stay out of git.")
    for skipped in report.skipped:
        click.echo(f"skipped {printable_line(skipped.file)}: {printable_line(skipped.error)}", err=True)
    for warning in report.warnings:
        click.echo(f"warning: {printable_line(warning)}", err=True)


@click.command("sync")
@json_option
@click.pass_context
def sync_cmd(ctx: click.Context, as_json: bool) -> None:
    """Apply the memory files in .codememory/memories/ to the store now.

    Opening the store does this by itself after a `git pull` (it looks at the folders git changed);
    run sync after editing a memory file in place, or to see what was applied and which files were
    skipped (a file with git conflict markers, or one that does not parse, is reported and left
    unapplied; the store keeps its own version of that memory until the file is fixed). With
    sharing on, sync also writes the files of memories changed here that are not written yet.
    """
    from codememory.operations.share import sync

    report = sync(open_store(ctx))
    if as_json:
        render.dump_json(report.to_dict())
        return
    _print_sync(report)


def _print_sync(report: SyncReport) -> None:
    from codememory.core.safe_text import printable_line

    click.echo(
        f"Applied {report.folder}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.deleted)} deleted"
        + (f", {report.embedded} embedded" if report.embedded else "")
        + (f"; wrote {report.written} files" if report.written else "")
        + (f"; {len(report.skipped)} files skipped" if report.skipped else "")
        + "."
    )
    for skipped in report.skipped:
        click.echo(f"skipped {printable_line(skipped.file)}: {printable_line(skipped.error)}", err=True)


def _count(n: int, one: str, many: str | None = None) -> str:
    """'1 memory file', '2 memory files'."""
    return f"{n} {one if n == 1 else many or one + 's'}"
