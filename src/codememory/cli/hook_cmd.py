"""`codememory hook ASSISTANT EVENT`: the same as the lean `codememory-hook` console script (which
hooks should call directly: it skips click and the CLI's imports)."""

from __future__ import annotations

import sys

import click

from codememory.assistants import REGISTRY
from codememory.hooks import dispatch as hooks


@click.command("hook")
@click.argument("assistant", type=click.Choice(sorted(n for a in REGISTRY for n in a.names), case_sensitive=False))
@click.argument("event")
@click.option("--project", "project", default=None, help="Project folder (default: from the payload's cwd).")
def hook(assistant: str, event: str, project: str | None) -> None:
    """Handle an assistant's hook: read its JSON payload on stdin, print context to inject. Fails open."""
    raw = hooks.read_stdin(assistant, event, project)
    if raw is None:
        sys.exit(0)
    out = hooks.run(assistant, event, raw, project)
    if out:
        click.echo(out)
    sys.exit(0)
