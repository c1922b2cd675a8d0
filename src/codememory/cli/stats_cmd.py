"""`codememory stats`: counts, categories, vectors, tags, agents, store size and model spend (thin over
codememory.operations.stats)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store

if TYPE_CHECKING:
    from codememory.operations.stats import Stats


@click.command()
@click.option("--tags", is_flag=True, help="Show how often each tag is used.")
@click.option("--agents", is_flag=True, help="Show how many memories each agent entered.")
@json_option
@click.pass_context
def stats(ctx: click.Context, tags: bool, agents: bool, as_json: bool) -> None:
    """Counts, categories, tags, agents and store size."""
    from codememory.operations.stats import stats as store_stats

    store = open_store(ctx)
    data = store_stats(store, tags=tags, agents=agents)
    if as_json:
        result = data.to_dict()
        render.note_entities_pending(store, result)
        render.dump_json(result)
        return
    _print(data)
    render.note_entities_pending(store, None)


def _print(data: Stats) -> None:
    s = data.store
    click.echo(f"Store:     {s.store} ({s.size_bytes / 1024:.0f} KiB)")
    click.echo(f"Memories:  {s.total} total, {s.live} live, {s.expired} expired, {s.archived} archived")
    if s.stale_checks:
        click.echo(f"Stale:     {s.stale} (naming code that is gone; {s.stale_checks} checks run)")
    if s.oldest:
        click.echo(f"Span:      {s.oldest[:10]} .. {(s.newest or '')[:10]}")
    if s.categories:
        click.echo("Categories: " + ", ".join(f"{k} {v}" for k, v in s.categories.items()))
    emb = s.embeddings
    if emb.model is None:
        click.echo(f"Vectors:   none ({emb.reason})")
    else:
        click.echo(f"Vectors:   {emb.with_vector} of {emb.total} ({emb.coverage:.0%}) from {emb.model}")
    for counts, title in ((s.tags, "Tags"), (s.agents, "Agents")):
        if counts is not None:
            click.echo(f"{title}:")
            for name, n in counts.items():
                click.echo(f"  {n:>6}  {name}")
    _print_spend(data.llm_spend)
    c = data.consolidation
    last = f", last {c.last_run[:19]}" if c.last_run else ""
    click.echo(
        f"Hygiene:   {c.consolidated} consolidated memories (from {c.squashed} squashed), {c.decayed} decayed, "
        f"{c.linked} supersedes/conflicts links; {c.runs} consolidation runs{last}"
    )


def _print_spend(spend: dict[str, Any]) -> None:
    """LLM spend of extraction, against the daily budget (tokens; zero calls when no model is set)."""
    today, total = spend["today"], spend["all_time"]
    budget = spend.get("budget", {})
    click.echo(
        f"LLM spend: today {today['total_tokens']} tokens in {today['calls']} calls"
        f" (budget {budget.get('daily_token_budget', '?')}, {budget.get('today_remaining', '?')} left),"
        f" all time {total['total_tokens']} tokens"
        f" in {total['calls']} calls"
    )
    for row in spend["per_model"]:
        click.echo(f"  {row['total_tokens']:>9}  {row['provider']}/{row['model']}")
