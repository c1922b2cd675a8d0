"""`codememory export` / `import`: all memories as JSON Lines, and back (thin over codememory.operations.transfer)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.cli.progress_output import progress_note
from codememory.operations.transfer import export_file, import_file

if TYPE_CHECKING:
    from codememory.service.transfer import EntityTiming

REMAP_HELP = (
    "OLD=NEW: rewrite the project path OLD to NEW in each memory's text and source (repeatable), e.g. "
    "--remap /home/alice/shop=/work/shop."
)


@click.command()
@click.argument("file")
@click.option("--remap", multiple=True, metavar="OLD=NEW", help=REMAP_HELP)
@json_option
@click.pass_context
def export(ctx: click.Context, file: str, remap: tuple[str, ...], as_json: bool) -> None:
    """Write all memories to FILE as JSON Lines ('-' for standard output)."""
    done = export_file(open_store(ctx), file, remap=remap)
    if file == "-":
        return
    if as_json:
        render.dump_json(done.to_dict())
    else:
        click.echo(f"Exported {done.exported} memories to {file}", err=True)


class _Progress:
    """One line on standard error, rewritten in place, while a large file is read and then embedded (nothing for a
    file done within a second)."""

    def __init__(self) -> None:
        self.last = time.monotonic() + 0.5
        self.shown = False

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.last < 0.5:
            return
        self.last, self.shown = now, True
        if phase == "read":
            what = f"read {done:,} lines"
        elif phase == "entities":
            what = f"read the entities of {done:,} of {total or done:,} memories"
        else:
            what = f"embedded {done:,} of {total or done:,} memories"
        progress_note(f"\r{what}   ", nl=False)

    def close(self) -> None:
        if self.shown:
            progress_note("")


SKIPPED_SHOWN = 5  # invalid lines named one by one on stderr; the rest are counted (all of them in --json)


@click.command("import")
@click.argument("file")
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines even if some are invalid.")
@click.option("--remap", multiple=True, metavar="OLD=NEW", help=REMAP_HELP)
@click.option(
    "--own",
    is_flag=True,
    help="The file is your own export (another machine of yours): its memories count as written here.",
)
@json_option
@click.pass_context
def import_cmd(
    ctx: click.Context, file: str, skip_invalid: bool, remap: tuple[str, ...], own: bool, as_json: bool
) -> None:
    """Import memories from a JSON Lines FILE ('-' for standard input). Safe to repeat.

    A teammate's or another machine's export lands in this checkout with --remap THEIR_ROOT=THIS_ROOT.

    Imported memories are marked as imported from FILE: they are ranked on their content, never on the importance
    or dates the file gives them, and one that reads like instructions to an agent waits for `codememory review`.
    With --own they count as written here by you (whatever `provenance` the lines carry is never read).
    """
    store = open_store(ctx)
    progress = _Progress()
    # The entities of a large file are read after its text is stored: by the daemon when it serves this project,
    # else here before the command ends (with whatever an earlier, interrupted pass left).
    entities: EntityTiming = "auto" if _daemon_serves(store.root) else "now"
    try:
        report = import_file(
            store, file, skip_invalid=skip_invalid, remap=remap, progress=progress, own=own, entities=entities
        )
    finally:
        progress.close()
    if as_json:
        render.dump_json(report.to_dict())
        return
    for err in report.invalid[:SKIPPED_SHOWN]:
        click.echo(f"skipped {err}", err=True)
    if len(report.invalid) > SKIPPED_SHOWN:
        more = len(report.invalid) - SKIPPED_SHOWN
        click.echo(f"skipped {more:,} more invalid lines (--json lists them all)", err=True)
    click.echo(
        f"Imported {report.added} memories ({report.skipped_existing} already present"
        + (f", {len(report.invalid)} invalid lines skipped)" if report.invalid else ")")
    )


def _daemon_serves(root: Path) -> bool:
    """A daemon of this version runs and `root` is among the registered projects its background passes go through
    (an older daemon may refuse this store's schema: it would never fill the entities)."""
    from codememory import __version__
    from codememory.core import registry
    from codememory.daemon.client import read_info
    from codememory.daemon.files import running_pid
    from codememory.errors import RegistryError

    if not running_pid()[0]:
        return False
    info = read_info()
    if info is None or info.get("version") != __version__:
        return False
    try:
        roots = {Path(e["root"]).resolve() for e in registry.load() if isinstance(e.get("root"), str)}
    except (RegistryError, OSError, ValueError):
        return False
    return root.resolve() in roots
