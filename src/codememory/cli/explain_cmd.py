"""`codememory explain`: what the daemon injected into a session's most recent LLM calls, why and at what
token cost (a thin layer over codememory.operations.explain)."""

from __future__ import annotations

import click

from codememory.cli.render import dump_json
from codememory.operations.explain import DEFAULT_LAST, MAX_LAST


@click.command("explain")
@click.option(
    "--last",
    "last",
    type=click.IntRange(1, MAX_LAST),
    is_flag=False,
    flag_value=DEFAULT_LAST,
    default=DEFAULT_LAST,
    show_default=True,
    metavar="[N]",
    help="Show the session's N most recent injections.",
)
@click.option("--session", "session_id", help="The session to explain (default: the one with the newest injection).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def explain(ctx: click.Context, last: int, session_id: str | None, as_json: bool) -> None:
    """Show what was injected into the most recent LLM calls of a session: for each injection (a HUD
    from POST /retrieve, or a session's cold-start block) when, the query, and per memory its current
    text, why it was chosen (retriever, match, score, cosine, entities, pinned) and its token cost.

    The daemon keeps this ledger in the project's store (the newest 5000 injections).

    \b
    JSON keys: session_id, total, shown, injections: [{id, at, source, session_id, kind, query,
    degraded, tokens, memories: [{id, state, category, text, why, tokens}]}].

    \b
    Examples:
      codememory explain --last
      codememory explain --last 20 --session ses_abc
      codememory explain --json
    """
    from codememory.operations.explain import explain_last, render_text
    from codememory.service.project_store import Store

    with Store.open((ctx.obj or {}).get("project")) as store:
        data = explain_last(store, last=last, session_id=session_id)
    if as_json:
        dump_json(data.to_dict())
    else:
        click.echo(render_text(data))
