"""`codememory search`: one project's memories, or with --global every registered project's (thin over
codememory.operations.search and .global_search)."""

from __future__ import annotations

from typing import Any

import click

from codememory.cli import render
from codememory.cli.daemon_handoff import handed_off
from codememory.cli.options import QueryCommand, filter_args, filter_options, json_option, open_store, query_text
from codememory.errors import InvalidInput
from codememory.text.context_render import one_line, quoted


# ------------------------------------------------------------------------- search
@click.command(cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@filter_options
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Maximum results.")
@click.option("--offset", default=0, type=click.IntRange(min=0), help="Skip this many results (paging).")
@click.option(
    "--fuzzy/--no-fuzzy",
    default=None,
    help="Always / never add typo-tolerant matches (default: only when exact matches are fewer than --limit).",
)
@click.option(
    "--threshold",
    default=0.7,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Minimum similarity for fuzzy matches.",
)
@click.option("--markdown", is_flag=True, help="Print markdown.")
@click.option("--explain", is_flag=True, help="Show why each result matched and how it was scored.")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "lexical", "semantic"]),
    default="hybrid",
    show_default=True,
    help="hybrid: keywords and meaning (needs an embedding model, else keywords only); lexical; semantic.",
)
@click.option(
    "--global",
    "global_",
    is_flag=True,
    help="Search every project in the global registry (see `codememory projects`) instead of one.",
)
@click.option(
    "--all",
    "--no-floor",
    "show_all",
    is_flag=True,
    help="Also list the results held back as unlikely to be relevant, after the others and marked "
    "(--json counts them in held_back either way).",
)
@click.option(
    "--remote",
    is_flag=True,
    help="Also search the organisation's shared memory ([remote] in your config: Milvus); each result says "
    "where it came from. The remote being down leaves the local results, with the reason.",
)
@click.option(
    "--remote-project",
    "remote_projects",
    multiple=True,
    metavar="NAME",
    help="With --remote: only these projects of the organisation (repeatable; default: every other project).",
)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    /,
    query: tuple[str, ...],
    mode: str,
    limit: int,
    offset: int,
    fuzzy: bool | None,
    threshold: float,
    markdown: bool,
    explain: bool,
    global_: bool,
    show_all: bool,
    remote: bool,
    remote_projects: tuple[str, ...],
    as_json: bool,
    **kwargs: Any,
) -> None:
    """Search memories. Plain words find memories with all of them first, then memories close in
    meaning (with an embedding model: hybrid ranking) or, keywords only, memories with some of the
    words, so a question works. OR, NOT, "phrases", prefix* and (groups) are matched strictly by
    keyword. Typos are tolerated.

    A result is shown only when it is likely relevant: a question nothing in the memory answers
    says so, and --all lists what was held back, marked.

    With --global, every registered project is searched (--project is ignored) and the hits are
    merged by their rank in their project, keyword matches before typo-tolerant ones; each result
    names its project. A project that is gone or broken is reported, never fatal.

    \b
    Examples:
      codememory search docker compose
      codememory search 'postgres OR sqlite' --category decision
      codememory search '"connection pool"' --after "2 weeks ago" --json
      codememory search --global retry backoff --json
      codememory search --remote "payment retries" --category decision
    """
    text = query_text(query)
    from codememory.core.bounded_input import check_query, require_query

    require_query(text, " (see `codememory search --help`)")
    check_query(text)  # here, before a daemon, the organisation's remote or other projects are asked
    if remote or remote_projects:
        _search_remote(ctx, text, mode, limit, offset, global_, remote_projects, as_json, filter_args(kwargs))
        return
    if global_ and show_all:
        raise InvalidInput("--all applies to one project's search, not --global")
    if global_:
        _search_global(text, mode, limit, offset, fuzzy, threshold, markdown, explain, as_json, filter_args(kwargs))
        return
    options = {
        "limit": limit,
        "offset": offset,
        "fuzzy": fuzzy,
        "threshold": threshold,
        "mode": mode,
        "show_held_back": show_all,
        **filter_args(kwargs),
    }
    result = handed_off(ctx, "/cli/search", {"query": text, **options})
    if result is None:
        from codememory.operations.search import search as search_memories

        result = search_memories(open_store(ctx), text, **options).to_dict()
    if as_json:
        if options.get("entity"):
            render.note_entities_pending(open_store(ctx), result)
        render.dump_json(result)
        return
    _print_result(text, result, offset, limit, markdown, explain, show_all)
    if options.get("entity"):
        render.note_entities_pending(open_store(ctx), None)


def _print_result(
    text: str, result: dict[str, Any], offset: int, limit: int, markdown: bool, explain: bool, show_all: bool = False
) -> None:
    """A search's `--json` form as text or markdown (the same whether this process or the daemon searched)."""
    if result["degraded"]:
        from codememory.embedding.semantic import NOT_CONFIGURED

        if result["degraded_reason"] != NOT_CONFIGURED:  # a configured model that failed or lags
            where = "partial" if result["mode"] in ("hybrid", "semantic") else "keyword search only"
            click.echo(click.style(f"({where}: {result['degraded_reason']})", dim=True), err=True)
    held_back = int(result.get("held_back") or 0)
    hits = [(render.memory_from_dict(row), row) for row in result["results"]]
    if markdown:
        click.echo(render.hits_markdown(text, [(memory, row["match"]) for memory, row in hits]))
        return
    if not hits:
        from codememory.retrieval.decision import nothing_found

        click.echo(nothing_found(held_back, "--all lists them anyway"), err=True)
        return
    for memory, row in hits:
        stale = (row.get("explain") or {}).get("stale")
        click.echo(render.hit_text(memory, row["match"], bool(row.get("held_back")), stale))
        if explain:
            from codememory.retrieval.why import why_text

            click.echo(
                click.style(
                    f"    why: {row['match']} · score {row['score']:.3g} · {why_text(row['explain'])}", dim=True
                )
            )
    if result["has_more"]:
        click.echo(click.style(f"(more results: use --offset {offset + limit})", dim=True), err=True)
    if held_back and not show_all:
        held = f"({held_back} more held back as unlikely to be relevant; --all shows them)"
        click.echo(click.style(held, dim=True), err=True)


def _search_global(
    text: str,
    mode: str,
    limit: int,
    offset: int,
    fuzzy: bool | None,
    threshold: float,
    markdown: bool,
    explain: bool,
    as_json: bool,
    filters: dict[str, Any],
) -> None:
    from codememory.operations.global_search import search_all
    from codememory.text.privacy import scrub_message

    result = search_all(
        text, limit=limit, offset=offset, fuzzy=fuzzy, threshold=threshold, mode=mode, touch=True, **filters
    )
    if as_json:
        render.dump_json(result.to_dict())
        return
    for project in result.projects:
        if project.error:
            reason = scrub_message(project.error)
            click.echo(f"codememory: warning: skipped {project.name} ({project.root}): {reason}", err=True)
    if not result.projects:
        click.echo(f"No projects registered yet ({result.registry}); run `codememory init` in a project.", err=True)
        return
    if markdown:
        click.echo(f"## Memories matching `{text}` in all projects\n")
        for g in result.hits:
            click.echo(render.memory_markdown(g.hit.memory, f"project: {g.project_name} ({g.project})"))
        return
    if not result.hits:
        click.echo("No memories match in any project.", err=True)
        return
    for g in result.hits:
        tag = click.style(f"[{one_line(g.project_name)}]", fg="blue", bold=True)
        fuzzy_tag = " " + click.style("fuzzy", fg="yellow") if g.hit.match == "fuzzy" else ""
        click.echo(render.memory_header(g.hit.memory, tag + fuzzy_tag))
        click.echo(quoted(g.hit.memory.text, "    "))
        if explain:
            from codememory.retrieval.why import why_text

            why = f"    why: {g.project_name} #{g.project_rank} · {g.hit.match} · {why_text(g.hit.explain)}"
            click.echo(click.style(why, dim=True))
    if result.has_more:
        click.echo(click.style(f"(more results: use --offset {offset + limit})", dim=True), err=True)


_REMOTE_FILTERS = ("category", "tags", "entity", "after", "before")


def _search_remote(
    ctx: click.Context,
    text: str,
    mode: str,
    limit: int,
    offset: int,
    global_: bool,
    projects: tuple[str, ...],
    as_json: bool,
    filters: dict[str, Any],
) -> None:
    from codememory.operations.search import org_search
    from codememory.text.privacy import scrub_message

    unsupported = [k for k, v in filters.items() if v and k not in _REMOTE_FILTERS]
    if global_ or offset or unsupported:
        named = ", ".join(
            ["--global"] * global_ + ["--offset"] * bool(offset) + [f"--{k.replace('_', '-')}" for k in unsupported]
        )
        raise InvalidInput(f"{named}: not with --remote (it takes --category, --tags, --entity, --after, --before)")
    tags = [t for t in (filters.get("tags") or "").split(",") if t.strip()] or None
    found = org_search(
        open_store(ctx),
        text,
        limit=limit,
        mode=mode,
        category=filters.get("category"),
        tags=tags,
        entity=filters.get("entity"),
        after=filters.get("after"),
        before=filters.get("before"),
        projects=projects,
    )
    if as_json:
        render.dump_json(found.to_dict())
        return
    status = found.remote
    if status is not None and status.error:
        click.echo(f"codememory: warning: local results only: {scrub_message(status.error)}", err=True)
    elif status is not None and status.note:
        click.echo(click.style(f"(remote: {status.note})", dim=True), err=True)
    if not found.results:
        click.echo("No memories match.", err=True)
        return
    for hit in found.results:
        shown = (hit.provenance or hit.origin).replace("[", "").replace("]", "")
        where = click.style(f"[{one_line(shown)}]", fg="blue" if hit.origin == "local" else "magenta", bold=True)
        tags_text = f" #{' #'.join(one_line(t) for t in hit.tags)}" if hit.tags else ""
        click.echo(f"{where} {hit.id} [{one_line(hit.category)}] {one_line(hit.created_at[:10])}{tags_text}")
        click.echo(quoted(hit.text, "    "))
