"""`codememory publish`: send this project's shareable memories to the organisation's Milvus, or delete them
there (thin over codememory.operations.publish)."""

from __future__ import annotations

from typing import Any

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.cli.progress_output import progress_stream


@click.command()
@click.option("--dry-run", is_flag=True, help="Count what would be sent and deleted; contact no server.")
@click.option(
    "--delete-project",
    "delete",
    is_flag=True,
    help="Delete this project's memories from the remote instead (with --remote-project: that project's).",
)
@click.option("--remote-project", metavar="NAME", help="With --delete-project: the project to delete there.")
@json_option
@click.pass_context
def publish(ctx: click.Context, dry_run: bool, delete: bool, remote_project: str | None, as_json: bool) -> None:
    """Publish this project's memories to the organisation's Milvus ([remote] uri in your config).

    Only what changed since the last publish is sent (by content hash); memories forgotten, archived,
    superseded or expired since are deleted there. Personal memories (tagged personal or private) and
    <private> spans never leave; everything sent is scrubbed of secrets. An interrupted publish resumes
    where it stopped.

    \b
    Examples:
      codememory publish
      codememory publish --dry-run --json
      codememory publish --delete-project
    """
    from codememory.errors import InvalidInput
    from codememory.operations.publish import delete_project, publish

    store = open_store(ctx)
    if remote_project and not delete:
        raise InvalidInput("--remote-project goes with --delete-project (publishing uses [remote] project)")
    if delete:
        removed = delete_project(store, remote_project)
        if as_json:
            render.dump_json(removed.to_dict())
        else:
            where = f"{removed.collection} at {removed.remote}"
            click.echo(f"Deleted {removed.deleted} memories of {removed.project} from {where}.")
        return
    if as_json or dry_run:
        result = publish(store, dry_run=dry_run)
    else:
        # The bar starts with the first report, once the server answered: a remote that is down gets one line.
        bars: list[Any] = []

        def advance(done: int, total: int) -> None:
            if not bars and total:
                bars.append(click.progressbar(length=total, label="Publishing", file=progress_stream()))
                bars[0].__enter__()
            if bars:
                bars[0].update(done - bars[0].pos)

        try:
            result = publish(store, progress=advance)
        finally:
            if bars:
                bars[0].__exit__(None, None, None)
    if as_json:
        render.dump_json(result.to_dict())
        return
    verb = "Would send" if result.dry_run else "Sent"
    click.echo(
        f"{verb} {result.sent} and deleted {result.deleted} memories of {result.project} "
        f"({result.unchanged} unchanged, {result.kept_local} kept local) to {result.collection} at {result.remote}."
    )
