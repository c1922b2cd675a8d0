"""`codememory report`: what memory cost the agents and what they did with it (thin over
codememory.operations.report)."""

from __future__ import annotations

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store


@click.command()
@click.option(
    "--since",
    metavar="WHEN",
    help='Only what was shown since then: "7d", "12h", "yesterday", "2 weeks ago" or an ISO date (default: all).',
)
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Rows per list.")
@click.option("--markdown", is_flag=True, help="Print markdown.")
@json_option
@click.pass_context
def report(ctx: click.Context, since: str | None, limit: int, markdown: bool, as_json: bool) -> None:
    """Tokens spent on memory per session and per day, the memories shown and the ones agents used, the most
    useful ones, those shown again and again and never used (`consolidate --never-used` archives them), those an
    agent went against (to review: stale or wrong?) and stale ones still being shown.

    A memory counts as used in a session when the agent cited its id, fetched it with memory_get, a later tool
    call of that session held one of its paths, names, commands or values, or the agent looked up what it names
    and answered with its values. `--json` lists every memory shown (`memories`: id, shown, used, contradicted,
    ...), whatever `--limit` says.

    \b
    Examples:
      codememory report
      codememory report --since 7d --markdown
      codememory report --json
    """
    from codememory.operations.report import render_markdown, render_text, since_stamp, usage_report

    data = usage_report(open_store(ctx), since=since_stamp(since), limit=limit)
    if as_json:
        render.dump_json(data.to_dict())
    elif markdown:
        click.echo(render_markdown(data, limit), nl=False)
    else:
        click.echo(render_text(data, limit))
