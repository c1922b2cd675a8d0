"""`codememory embed`: compute the missing vectors, with a progress bar (thin over codememory.operations.embed)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.cli.progress_output import progress_stream
from codememory.operations.embed import backlog
from codememory.operations.embed import embed as embed_store


@click.command()
@json_option
@click.pass_context
def embed(ctx: click.Context, as_json: bool) -> None:
    """Compute missing embeddings (after enabling a model, or re-embed all after changing it)."""
    store = open_store(ctx)
    model, todo = backlog(store)
    if as_json or todo == 0:
        done = embed_store(store)
    else:
        with click.progressbar(length=todo, label=f"Embedding with {model}", file=progress_stream()) as bar:
            last = [0]

            def advance(done: int, _total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            done = embed_store(store, progress=advance)
    if as_json:
        render.dump_json(done.to_dict())
    else:
        click.echo(f"Embedded {done.embedded} memories with {done.model}.")
