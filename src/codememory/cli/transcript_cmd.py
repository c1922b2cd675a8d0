"""`codememory transcript REF`: the captured turns behind a memory, a daily-log anchor or a session
(a thin layer over codememory.operations.transcript)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from codememory.cli.render import dump_json

if TYPE_CHECKING:
    from codememory.operations.transcript import TranscriptTurn


@click.command("transcript")
@click.argument("reference")
@click.option("--turn", help="With a session id: only this turn, by number (1 = first) or by turn id.")
@click.option(
    "--max-turns",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most turns shown for a session (the first ones).",
)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def transcript(ctx: click.Context, reference: str, turn: str | None, max_turns: int, as_json: bool) -> None:
    """Show what was said and done in the captured turn(s) behind REFERENCE: a memory id
    (mem_1a2b3c4d, whose source names a session turn), a daily-log anchor
    ('<!-- session:ses_abc turn:msg_123 -->') or a session id (ses_abc, all its captured turns).

    The transcript comes from the coding tool's own record (OpenCode's database) when it is still
    there, else from the turn's entry in .codememory/memory/*.md. Secrets and <private> spans are removed.

    \b
    Examples:
      codememory transcript mem_1a2b3c4d
      codememory transcript ses_abc --turn 3
      codememory transcript '<!-- session:ses_abc turn:msg_123 -->' --json
    """
    from codememory.operations.transcript import transcript as transcript_of
    from codememory.service.project_store import Store

    with Store.open((ctx.obj or {}).get("project")) as store:
        data = transcript_of(store, reference, turn=turn, max_turns=max_turns)
    if as_json:
        dump_json(data.to_dict())
        return
    for item in data.turns:
        click.echo(_heading(item))
        click.echo(item.transcript.rstrip("\n"))
        click.echo()
    if data.truncated:
        shown = len(data.turns)
        click.echo(
            click.style(f"({shown} of {data.turns_total} turns; use --turn N or --max-turns)", dim=True), err=True
        )


def _heading(item: TranscriptTurn) -> str:
    where = f"{item.source} session {item.session_id}, turn {item.seq} ({item.turn_id})"
    line = click.style(f"=== {where}", bold=True)
    if item.origin != item.source:
        line += "\n" + click.style(f"(from {item.origin.replace('_', ' ')}: {item.fallback_reason})", dim=True)
    return line
