"""`codememory explain`: what was injected into a session's most recent LLM calls (by the daemon or a hook), why
and at what token cost (a thin layer over codememory.operations.explain)."""

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
    from POST /retrieve, a cold-start block, a hook's session-start or prompt block) when, the query, why
    it was degraded, its tokens by part (the memories, and the framing around them when known), and per
    memory its current text, its token cost and why it was chosen: the keyword index's BM25, the cosine
    (meaning similarity), the fused score, the query words and the entities it matched, and whether it
    was kept because it was pinned.

    The ledger is kept in the project's store (the newest 5000 injections).

    \b
    JSON keys: session_id, total, shown, injections: [{id, at, source, session_id, kind, query,
    degraded, degraded_reason, tokens, tokens_by_part: {memories, framing}, memories: [{id, state,
    category, text, why, parts: {retriever, match, bm25, cosine, fused, words, entities, pinned, by, stale,
    usefulness}, tokens, stale_now}]}].

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
