"""`codememory export` / `import`: all memories as JSON Lines, and back (thin over codememory.operations.transfer)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.operations.transfer import export_file, import_file


@click.command()
@click.argument("file")
@json_option
@click.pass_context
def export(ctx: click.Context, file: str, as_json: bool) -> None:
    """Write all memories to FILE as JSON Lines ('-' for standard output)."""
    done = export_file(open_store(ctx), file)
    if file == "-":
        return
    if as_json:
        render.dump_json(done.to_dict())
    else:
        click.echo(f"Exported {done.exported} memories to {file}", err=True)


@click.command("import")
@click.argument("file")
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines even if some are invalid.")
@json_option
@click.pass_context
def import_cmd(ctx: click.Context, file: str, skip_invalid: bool, as_json: bool) -> None:
    """Import memories from a JSON Lines FILE ('-' for standard input). Safe to repeat."""
    report = import_file(open_store(ctx), file, skip_invalid=skip_invalid)
    if as_json:
        render.dump_json(report.to_dict())
        return
    for err in report.invalid:
        click.echo(f"skipped {err}", err=True)
    click.echo(
        f"Imported {report.added} memories ({report.skipped_existing} already present"
        + (f", {len(report.invalid)} invalid lines skipped)" if report.invalid else ")")
    )
