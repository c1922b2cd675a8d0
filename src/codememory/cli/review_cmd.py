"""`codememory review [list] / accept / reject`: memories from elsewhere that read like instructions (thin over
codememory.operations.review)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.group import CliGroup
from codememory.cli.options import json_option, open_store
from codememory.core.provenance import REVIEW_STATES
from codememory.errors import NotFound
from codememory.text.context_render import one_line, quoted
from codememory.text.scrubbed_click import error_line


@click.group(cls=CliGroup, invoke_without_command=True)
@json_option
@click.pass_context
def review(ctx: click.Context, as_json: bool) -> None:
    """Memories that did not start on this machine and read like instructions to an agent.

    A memory pulled through git, found in a committed memory.db, imported from a file or fetched from the
    organisation's memory is shown to agents with where it came from ("from git, by alice@example.com") and ranked
    on its content, never on the importance or dates it claims. One whose text reads like instructions (commands to
    run, text addressed to AI agents, "ignore previous instructions", a download piped into a shell) is kept out of
    the blocks agents get unasked (session start, each prompt or step) until you accept it here; rejecting it keeps
    it out of every agent's context, search and listing. A teammate's plain knowledge needs no review.

    Without a subcommand: the memories waiting (`review list`).

    \b
    Examples:
      codememory review
      codememory review accept mem_1a2b3c4d
      codememory review reject mem_1a2b3c4d mem_5e6f7a8b
      codememory review list --state rejected --json
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(review_list, state="pending", limit=100, as_json=as_json)


@review.command("list")
@click.option(
    "--state",
    type=click.Choice(REVIEW_STATES),
    default="pending",
    show_default=True,
    help="Waiting for you, or answered.",
)
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 500))
@json_option
@click.pass_context
def review_list(ctx: click.Context, state: str, limit: int, as_json: bool) -> None:
    """The memories in a review state, most recently changed first.

    \b
    JSON keys: state, count, counts {pending, accepted, rejected}, memories: [{id, text, category, importance,
    created_at, origin, by, arrived_at, provenance, review, reason}].
    """
    from codememory.operations.review import review_list as run

    found = run(open_store(ctx), state=state, limit=limit)
    if as_json:
        render.dump_json(found.to_dict())
        return
    if not found.memories:
        waiting = found.counts.get("pending", 0)
        click.echo(f"No memory is {state}." + (f" ({waiting} waiting: `codememory review`)" if waiting else ""))
        return
    for item in found.memories:
        why = f"  reads like: {item.reason}" if item.reason else ""
        head = f"{click.style(item.id, fg='cyan', bold=True)}  [{one_line(item.category)}]  {one_line(item.provenance)}"
        click.echo(head + click.style(why, fg="yellow"))
        click.echo(quoted(item.text, "    "))
    if state == "pending":
        click.echo("Accept with `codememory review accept ID...`, reject with `... reject ID...`.", err=True)


def _answer(ctx: click.Context, ids: tuple[str, ...], accept: bool, as_json: bool) -> None:
    from codememory.operations.review import review_answer

    done = review_answer(open_store(ctx), list(ids), accept=accept)
    if as_json:
        render.dump_json(done.to_dict())
    else:
        if done.done:
            click.echo(f"{done.answer.capitalize()}: {', '.join(done.done)}")
        if done.written_here:
            click.echo(f"Written here, nothing to review: {', '.join(done.written_here)}", err=True)
        if done.unknown:
            click.echo(error_line(NotFound(f"no memory with id {', '.join(done.unknown)}")), err=True)
    if done.unknown or (done.written_here and not done.done):
        ctx.exit(1)


@review.command("accept")
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def review_accept(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Let these memories into the blocks agents get unasked, like any plain memory.

    \b
    JSON keys: answer, done, written_here, unknown.
    """
    _answer(ctx, ids, True, as_json)


@review.command("reject")
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def review_reject(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Keep these memories out of every agent's context, search and listing (they stay in the store and in the
    team's files; `codememory review accept` takes it back).

    \b
    JSON keys: answer, done, written_here, unknown.
    """
    _answer(ctx, ids, False, as_json)
