"""`codememory` command line: a thin layer over codememory.service.project_store.Store."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import click

from codememory import __version__
from codememory.cli import render
from codememory.cli.scrubbed import ScrubbedGroup
from codememory.core.bounded_input import (
    REMEMBER_SCAN_MAX_BYTES,
    RETRIEVE_INPUT_MAX_BYTES,
    STORE_INPUT_MAX_BYTES,
    read_all_text,
    read_file_text,
    read_text_upto,
    size_text,
    valid_json_text,
    valid_text,
)
from codememory.core.model import CATEGORIES
from codememory.embedding.semantic import NOT_CONFIGURED
from codememory.errors import CodememoryError, InvalidInput
from codememory.service.project_store import Store
from codememory.store.database import SORT_COLUMNS
from codememory.text.context_render import one_line, quoted
from codememory.text.privacy import scrub_message

F = TypeVar("F", bound=Callable[..., Any])


class _Group(ScrubbedGroup):
    """Turns user-caused errors into one line on stderr and a non-zero exit, never a traceback. Every
    message that may echo an argument (click's usage errors, ours) is scrubbed first: an argument can be
    a pasted key or password (`privacy.scrub_message`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Python decodes argv with surrogateescape: a byte that is not UTF-8 arrives as a lone surrogate,
        # which SQLite, the markdown files and JSON output cannot take. It becomes U+FFFD here, once,
        # for every command (bounded_input explains why replace rather than refuse).
        return super().parse_args(ctx, [valid_text(a) for a in args])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CodememoryError as exc:
            click.echo(f"codememory: error: {scrub_message(exc)}", err=True)
            ctx.exit(exc.exit_code)
        except sqlite3.Error as exc:  # the store layer turns damage and locks into CodememoryError already
            click.echo(f"codememory: error: the store could not be used: {scrub_message(exc)}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            sys.stderr.close()  # e.g. `codememory list | head`
            ctx.exit(0)
        return None


def _agent_context(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(resources.files("codememory.cli").joinpath("agent_context.md").read_text(encoding="utf-8"))
    ctx.exit(0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--project",
    "project",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="CODEMEMORY_PROJECT",
    help="Project folder (default: $CODEMEMORY_PROJECT, else the nearest folder above with .codememory/, "
    "else the git root).",
)
@click.option(
    "--agent-context",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_agent_context,
    help="Print a concise guide for AI agents on using codememory, then exit.",
)
@click.version_option(__version__, prog_name="codememory")
@click.pass_context
def cli(ctx: click.Context, project: Path | None) -> None:
    """Local, per-project memory for AI coding agents.

    Store decisions, conventions, gotchas and todos once; search them from any agent or shell.
    Start with `codememory init` in your project, then `codememory store` and `codememory search`.
    """
    ctx.obj = {"project": project}


def _open(ctx: click.Context) -> Store:
    store = Store.open(ctx.obj["project"])
    ctx.call_on_close(store.close)
    return store


def _json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(f)


def _filter_options(f: F) -> F:
    options = [
        click.option("--tags", help="Only memories with ALL these tags (comma-separated)."),
        click.option("--any-tag", "any_tags", help="Only memories with ANY of these tags (comma-separated)."),
        click.option("--after", help="Created at or after this date (ISO, or e.g. '2 weeks ago')."),
        click.option("--before", help="Created before this date (ISO, or e.g. 'yesterday')."),
        click.option("--entered-by", help="Only memories entered by this agent or person."),
        click.option("--category", help=f"Only these categories (comma-separated): {', '.join(CATEGORIES)}."),
        click.option("--include-expired", is_flag=True, help="Also show expired memories."),
        click.option("--include-archived", is_flag=True, help="Also show archived memories."),
        click.option("--include-superseded", is_flag=True, help="Also show memories replaced by newer ones."),
        click.option(
            "--entity", help="Only memories mentioning this entity (library, tool, file, error; comma-separated: any)."
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _filter_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "tags",
        "any_tags",
        "after",
        "before",
        "entered_by",
        "category",
        "include_expired",
        "include_archived",
        "include_superseded",
        "entity",
    )
    return {k: kwargs.pop(k) for k in keys}


# --------------------------------------------------------------------------- init
@cli.command()
@click.option("--uninstall", is_flag=True, help="Remove exactly what init added (the store and its memories are kept).")
@click.option(
    "--assistants",
    metavar="LIST",
    help="claude,codex,cursor,opencode (comma-separated), all, or none (default: the installed ones; "
    "with --uninstall: all).",
)
@click.option(
    "--no-global",
    is_flag=True,
    help="Do not add the project to (or remove it from) the global registry (the daemon serves only "
    "registered projects).",
)
@_json_option
@click.pass_context
def init(ctx: click.Context, uninstall: bool, assistants: str | None, no_global: bool, as_json: bool) -> None:
    """Create the project's store in .codememory/ and set up the coding assistants (safe to run again).

    For each assistant: registers the MCP server (`codememory mcp`), installs the hooks (`codememory hook ...`)
    and adds a rule block to CLAUDE.md / AGENTS.md / .cursorrules between codememory markers. Existing
    settings are merged, never replaced; a `<file>.codememory-backup` copy is kept before the first change.
    If a file to change is malformed, nothing at all is written. Then the project is added to the global
    registry ($XDG_CONFIG_HOME/codememory/registry.json).
    """
    from codememory.core import registry
    from codememory.core.project import db_path, find_project_root
    from codememory.install import plan as setup

    root = find_project_root(ctx.obj["project"])
    if uninstall and assistants is None:
        assistants = "all"
    chosen = setup.parse_assistants(assistants, root)
    # Read and check everything first (a malformed file or registry stops us before anything is written).
    others = [] if no_global else [p for p in registry.load() if p["root"] != str(root)]
    plan = setup.plan(root, chosen, uninstall=uninstall, other_projects=len(others))
    steps: list[setup.Step] = []
    created = False
    store_path = db_path(root)
    if not uninstall:
        store, created = Store.init(root)
        ctx.call_on_close(store.close)
        store_path = store.store_path
        steps.append(setup.Step("codememory", ".codememory/", "added" if created else "unchanged", "store"))
    setup.apply(plan)
    steps.extend(plan.steps)
    reg = str(registry.registry_path())
    if no_global:
        steps.append(setup.Step("codememory", reg, "skipped", "--no-global"))
    elif uninstall:
        steps.append(setup.Step("codememory", reg, registry.unregister(root), "global registry"))
    else:
        steps.append(setup.Step("codememory", reg, registry.register(root, store_path), "global registry"))
    if uninstall:
        steps.append(setup.Step("codememory", ".codememory/", "skipped", "the store (your memories) is kept"))
    if as_json:
        out: dict[str, Any] = {"project": str(root), "store": str(store_path)}
        if not uninstall:
            out["created"] = created
        out["assistants"] = chosen
        out["steps"] = [s.to_dict() for s in steps]
        render.dump_json(out)
        return
    if not uninstall:
        if created:
            click.echo(f"Initialized codememory store at {store_path}")
        else:
            click.echo(f"codememory store already exists at {store_path}")
    elif not chosen:
        click.echo("No assistants selected.")
    for s in steps:
        click.echo(f"  {s.assistant:<10} {s.action:<9} {s.file}" + (f"  ({s.reason})" if s.reason else ""))
    if not uninstall and not chosen and assistants is None:
        click.echo("No coding assistant detected; use --assistants claude,codex,cursor,opencode to set one up.")


@cli.command()
@_json_option
def projects(as_json: bool) -> None:
    """List the projects in the global registry (added by `codememory init`)."""
    from codememory.core import registry

    entries = registry.load()
    rows = [{**e, "exists": Path(str(e.get("store", ""))).is_file()} for e in entries]
    if as_json:
        render.dump_json({"registry": str(registry.registry_path()), "projects": rows})
        return
    if not rows:
        click.echo(f"No projects registered yet ({registry.registry_path()}).")
        return
    for row in rows:
        missing = "" if row["exists"] else "  (store missing)"
        click.echo(f"{row.get('name', '?')}\t{row['root']}{missing}")


# -------------------------------------------------------------------------- store
@cli.command("store")
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), help="Read the text from a file.")
@click.option("--tags", help="Comma-separated tags, e.g. docker,ci.")
@click.option("--category", help=f"One of: {', '.join(CATEGORIES)} (default note).")
@click.option("--importance", type=float, help="0..1, how much this matters (default 0.5).")
@click.option("--expires", help="When it stops being true: ISO date or e.g. 'in 2 weeks', 'tomorrow'.")
@click.option("--entered-by", help="Which agent or person is storing this.")
@click.option("--source", help="Where it came from (session id, file, URL); kept verbatim.")
@click.option(
    "--supersedes",
    multiple=True,
    help="Id of a memory this one replaces (repeatable); the old one drops out of search.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the memory id.")
@_json_option
@click.pass_context
def store_cmd(
    ctx: click.Context, /, text: str | None, file: Path | None, as_json: bool, quiet: bool, **opts: Any
) -> None:
    """Store a memory. TEXT may also come from --file or standard input.

    \b
    Examples:
      codememory store "Use httpx, not requests" --category decision --tags http
      git log -1 --format=%B | codememory store --source commit --tags history
    """
    if text is not None and file is not None:
        raise InvalidInput("give the text either as an argument or with --file, not both")
    if file is not None:
        text = read_file_text(file, STORE_INPUT_MAX_BYTES, str(file))
    elif text is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no text given: pass it as an argument, with --file, or on standard input")
        text = read_all_text(sys.stdin, STORE_INPUT_MAX_BYTES, "standard input")
    opts["supersedes"] = list(opts["supersedes"])
    result = _open(ctx).add(text, **opts)
    if as_json:
        render.dump_json(result.to_dict())
    elif quiet:
        click.echo(result.memory.id)
    elif result.created:
        click.echo(f"Stored {result.memory.id}")
        for link in result.links:
            click.echo(f"  {link.type} {link.id}" + (f" (cosine {link.score})" if link.score else ""))
    else:
        click.echo(f"Already stored as {result.memory.id} ({result.duplicate_reason}); not stored again")


# ------------------------------------------------------------------------- search
@cli.command()
@click.argument("query", nargs=-1, required=True)
@_filter_options
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
    "--no-floor",
    "no_floor",
    is_flag=True,
    help="Keep memories found by meaning alone however far they are from the query (the relevance floor "
    "otherwise leaves them out; --json counts them in below_floor).",
)
@_json_option
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
    no_floor: bool,
    as_json: bool,
    **kwargs: Any,
) -> None:
    """Search memories. Plain words find memories with all of them first, then memories close in
    meaning (with an embedding model: hybrid ranking) or, keywords only, memories with some of the
    words, so a question works. OR, NOT, "phrases", prefix* and (groups) are matched strictly by
    keyword. Typos are tolerated.

    With --global, every registered project is searched (--project is ignored) and the hits are
    merged by their rank in their project, keyword matches before typo-tolerant ones; each result
    names its project. A project that is gone or broken is reported, never fatal.

    \b
    Examples:
      codememory search docker compose
      codememory search 'postgres OR sqlite' --category decision
      codememory search '"connection pool"' --after "2 weeks ago" --json
      codememory search --global retry backoff --json
    """
    text = " ".join(query)
    if global_ and no_floor:
        raise InvalidInput("--no-floor applies to one project's search, not --global")
    if global_:
        _search_global(text, mode, limit, offset, fuzzy, threshold, markdown, explain, as_json, _filter_args(kwargs))
        return
    result = _open(ctx).search(
        text,
        limit=limit,
        offset=offset,
        fuzzy=fuzzy,
        threshold=threshold,
        mode=mode,
        relevance_floor=not no_floor,
        **_filter_args(kwargs),
    )
    if as_json:
        render.dump_json(result.to_dict())
        return
    if result.degraded and result.degraded_reason != NOT_CONFIGURED:  # a configured model that failed or lags
        where = "partial" if result.mode in ("hybrid", "semantic") else "keyword search only"
        click.echo(click.style(f"({where}: {result.degraded_reason})", dim=True), err=True)
    if result.below_floor:
        left_out = f"({result.below_floor} found by meaning alone were too far from the query; --no-floor shows them)"
        click.echo(click.style(left_out, dim=True), err=True)
    if markdown:
        click.echo(render.hits_markdown(text, result.hits))
        return
    if not result.hits:
        click.echo("No memories match.", err=True)
        return
    for hit in result.hits:
        click.echo(render.hit_text(hit))
        if explain:
            click.echo(click.style(f"    why: score {hit.score:.4f} {hit.explain}", dim=True))
    if result.has_more:
        click.echo(click.style(f"(more results: use --offset {offset + limit})", dim=True), err=True)


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
            click.echo(render.memory_markdown(g.hit.memory, f"project: {g.project.name} ({g.project.root})"))
        return
    if not result.hits:
        click.echo("No memories match in any project.", err=True)
        return
    for g in result.hits:
        tag = click.style(f"[{one_line(g.project.name)}]", fg="blue", bold=True)
        fuzzy_tag = " " + click.style("fuzzy", fg="yellow") if g.hit.match == "fuzzy" else ""
        click.echo(render.memory_header(g.hit.memory, tag + fuzzy_tag))
        click.echo(quoted(g.hit.memory.text, "    "))
        if explain:
            why = f"    why: {g.project.name} #{g.project_rank}, score {g.hit.score:.4f} {g.hit.explain}"
            click.echo(click.style(why, dim=True))
    if result.has_more:
        click.echo(click.style(f"(more results: use --offset {offset + limit})", dim=True), err=True)


# --------------------------------------------------------------------------- list
@cli.command("list")
@_filter_options
@click.option("--sort", type=click.Choice(list(SORT_COLUMNS)), default="created", show_default=True)
@click.option("--order", type=click.Choice(["asc", "desc"]), default="desc", show_default=True)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--offset", default=0, type=click.IntRange(min=0))
@click.option("--markdown", is_flag=True, help="Print markdown.")
@_json_option
@click.pass_context
def list_cmd(
    ctx: click.Context,
    /,
    sort: str,
    order: str,
    limit: int,
    offset: int,
    markdown: bool,
    as_json: bool,
    **kwargs: Any,
) -> None:
    """List memories, newest first by default."""
    store = _open(ctx)
    filters = _filter_args(kwargs)
    memories = store.list(sort=sort, order=order, limit=limit, offset=offset, **filters)
    if as_json:
        render.dump_json(
            {
                "count": len(memories),
                "total": store.count(**filters),
                "memories": [m.to_dict() for m in memories],
            }
        )
    elif markdown:
        click.echo(render.memories_markdown("Memories", memories))
    elif not memories:
        click.echo("No memories.", err=True)
    else:
        for mem in memories:
            click.echo(render.memory_text(mem))


# --------------------------------------------------------------------------- show
@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--markdown", is_flag=True, help="Print markdown.")
@_json_option
@click.pass_context
def show(ctx: click.Context, ids: tuple[str, ...], markdown: bool, as_json: bool) -> None:
    """Show memories in full, with their links and entities."""
    store = _open(ctx)
    memories = [store.get(i) for i in ids]
    details = [{**m.to_dict(), **store.relations(m.id).to_dict()} for m in memories]
    if as_json:
        render.dump_json(details[0] if len(details) == 1 else details)
    elif markdown:
        click.echo("\n".join(render.memory_markdown(m) for m in memories))
    else:
        click.echo(
            "\n\n".join(
                render.memory_detail(m, d["links"], d["entities"]) for m, d in zip(memories, details, strict=True)
            )
        )


@cli.command()
@click.argument("from_id")
@click.argument("to_id")
@click.option(
    "--type",
    "link_type",
    type=click.Choice(["corroborates", "conflicts", "supersedes", "refines", "contextualizes"]),
    required=True,
    help="How FROM_ID relates to TO_ID (supersedes also retires TO_ID from search).",
)
@click.pass_context
def link(ctx: click.Context, from_id: str, to_id: str, link_type: str) -> None:
    """Record how one memory relates to another."""
    _open(ctx).link(from_id, to_id, link_type)
    click.echo(f"{from_id} {link_type} {to_id}")


# ------------------------------------------------------------- forget / archive
def _report_ids(verb: str, done: list[str], unknown: list[str], as_json: bool) -> None:
    if as_json:
        render.dump_json({verb: done, "unknown": unknown})
    else:
        for i in done:
            click.echo(f"{verb.capitalize()} {i}")
    if unknown:
        raise CodememoryError(f"no memory with id {', '.join(unknown)}")


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@_json_option
@click.pass_context
def forget(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Delete memories for good (also from the search indexes)."""
    done, unknown = _open(ctx).forget(list(ids))
    _report_ids("forgotten", done, unknown, as_json)


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Bring archived memories back.")
@_json_option
@click.pass_context
def archive(ctx: click.Context, ids: tuple[str, ...], undo: bool, as_json: bool) -> None:
    """Hide memories from search and list without deleting them."""
    done, unknown = _open(ctx).archive(list(ids), archived=not undo)
    _report_ids("unarchived" if undo else "archived", done, unknown, as_json)


# -------------------------------------------------------------------------- prune
@cli.command()
@click.option("--before", help="Also delete memories created before this date (even if not expired).")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted; delete nothing.")
@click.option("--force", "-f", is_flag=True, help="Do not ask for confirmation.")
@_json_option
@click.pass_context
def prune(ctx: click.Context, before: str | None, dry_run: bool, force: bool, as_json: bool) -> None:
    """Delete expired memories."""
    store = _open(ctx)
    victims = store.prune(before=before, dry_run=True)
    if not dry_run and victims and not force:
        if not sys.stdin or not sys.stdin.isatty():
            raise InvalidInput(f"would delete {len(victims)} memories; re-run with --force (or --dry-run to see them)")
        click.confirm(f"Delete {len(victims)} memories?", abort=True)
    if not dry_run and victims:
        victims = store.prune(before=before)
    if as_json:
        render.dump_json({"dry_run": dry_run, "count": len(victims), "memories": [m.to_dict() for m in victims]})
        return
    for mem in victims:
        click.echo(render.memory_text(mem))
    verb = "Would delete" if dry_run else "Deleted"
    click.echo(f"{verb} {len(victims)} memories.")


# -------------------------------------------------------------------------- stats
@cli.command()
@click.option("--tags", is_flag=True, help="Show how often each tag is used.")
@click.option("--agents", is_flag=True, help="Show how many memories each agent entered.")
@_json_option
@click.pass_context
def stats(ctx: click.Context, tags: bool, agents: bool, as_json: bool) -> None:
    """Counts, categories, tags, agents and store size."""
    from codememory.extract.budget import spend_summary

    store = _open(ctx)
    data = store.stats(tags=tags, agents=agents).to_dict()
    data["llm_spend"] = spend_summary(store.db, store.config.llm)
    if as_json:
        render.dump_json(data)
        return
    click.echo(f"Store:     {data['store']} ({data['size_bytes'] / 1024:.0f} KiB)")
    click.echo(
        f"Memories:  {data['total']} total, {data['live']} live, {data['expired']} expired, {data['archived']} archived"
    )
    if data["oldest"]:
        click.echo(f"Span:      {data['oldest'][:10]} .. {data['newest'][:10]}")
    if data["categories"]:
        click.echo("Categories: " + ", ".join(f"{k} {v}" for k, v in data["categories"].items()))
    emb = data["embeddings"]
    if emb["model"] is None:
        click.echo(f"Vectors:   none ({emb['reason']})")
    else:
        click.echo(f"Vectors:   {emb['with_vector']} of {emb['total']} ({emb['coverage']:.0%}) from {emb['model']}")
    for key, title in (("tags", "Tags"), ("agents", "Agents")):
        if key in data:
            click.echo(f"{title}:")
            for name, n in data[key].items():
                click.echo(f"  {n:>6}  {name}")
    _print_spend(data["llm_spend"])


def _print_spend(spend: dict[str, Any]) -> None:
    """LLM spend of extraction, against the daily budget (tokens; zero calls when no model is set)."""
    today, total = spend["today"], spend["all_time"]
    budget = spend.get("budget", {})
    click.echo(
        f"LLM spend: today {today['total_tokens']} tokens in {today['calls']} calls"
        f" (budget {budget.get('daily_token_budget', '?')}), all time {total['total_tokens']} tokens"
        f" in {total['calls']} calls"
    )
    for row in spend["per_model"]:
        click.echo(f"  {row['total_tokens']:>9}  {row['provider']}/{row['model']}")


# ----------------------------------------------------------------- export/import
@cli.command()
@click.argument("file")
@_json_option
@click.pass_context
def export(ctx: click.Context, file: str, as_json: bool) -> None:
    """Write all memories to FILE as JSON Lines ('-' for standard output)."""
    count = _open(ctx).export(file)
    if file == "-":
        return
    if as_json:
        render.dump_json({"exported": count, "file": file})
    else:
        click.echo(f"Exported {count} memories to {file}", err=True)


@cli.command("import")
@click.argument("file")
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines even if some are invalid.")
@_json_option
@click.pass_context
def import_cmd(ctx: click.Context, file: str, skip_invalid: bool, as_json: bool) -> None:
    """Import memories from a JSON Lines FILE ('-' for standard input). Safe to repeat."""
    report = _open(ctx).import_(file, skip_invalid=skip_invalid)
    if as_json:
        render.dump_json(report.to_dict())
        return
    for err in report.invalid:
        click.echo(f"skipped {err}", err=True)
    click.echo(
        f"Imported {report.added} memories ({report.skipped_existing} already present"
        + (f", {len(report.invalid)} invalid lines skipped)" if report.invalid else ")")
    )


# -------------------------------------------------------------------------- embed
@cli.command()
@_json_option
@click.pass_context
def embed(ctx: click.Context, as_json: bool) -> None:
    """Compute missing embeddings (after enabling a model, or re-embed all after changing it)."""
    store = _open(ctx)
    model = store.semantic.model
    if model is None:
        raise InvalidInput(f"cannot embed: {store.semantic.reason}")
    todo = store.db.count_needing_embedding(model)
    if as_json or todo == 0:
        done = store.embed()
    else:
        with click.progressbar(length=todo, label=f"Embedding with {model}", file=sys.stderr) as bar:
            last = [0]

            def advance(done: int, _total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            done = store.embed(progress=advance)
    if as_json:
        render.dump_json({"model": model, "embedded": done})
    else:
        click.echo(f"Embedded {done} memories with {model}.")


# ----------------------------------------------------------------------- retrieve
@cli.command()
@click.option("-q", "--query", "queries", multiple=True, help="A phrase describing the current task (repeatable).")
@click.option("-e", "--entity", "entities", multiple=True, help="An entity the task involves (repeatable).")
@click.option("--pinned", multiple=True, help="Id surfaced last time, kept while still relevant (repeatable).")
@click.option("--max", "max_memories", default=8, show_default=True, type=click.IntRange(min=1))
@click.option("--max-new", default=5, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--budget",
    "token_budget",
    default=1500,
    show_default=True,
    type=click.IntRange(min=1),
    help="Token budget for the memories' text.",
)
@click.option(
    "--input",
    "input_file",
    type=click.File("r"),
    help="Read the request as JSON ({query_expansion, entities, pinned_memory_ids, max_memories, "
    "max_new, token_budget}); '-' for stdin.",
)
@_json_option
@click.pass_context
def retrieve(
    ctx: click.Context,
    queries: tuple[str, ...],
    entities: tuple[str, ...],
    pinned: tuple[str, ...],
    max_memories: int,
    max_new: int,
    token_budget: int,
    input_file: Any,
    as_json: bool,
) -> None:
    """The few memories worth showing an agent for its current step (what the plugin injects)."""
    request: dict[str, Any] = {
        "query_expansion": list(queries),
        "entities": list(entities),
        "pinned_memory_ids": list(pinned),
        "max_memories": max_memories,
        "max_new": max_new,
        "token_budget": token_budget,
    }
    if input_file is not None:
        try:
            loaded = json.loads(valid_json_text(read_all_text(input_file, RETRIEVE_INPUT_MAX_BYTES, "--input")))
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--input is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(loaded, dict):
            raise InvalidInput("--input must hold a JSON object")
        unknown = set(loaded) - set(request)
        if unknown:
            raise InvalidInput(f"unknown field(s) in --input: {', '.join(sorted(unknown))}")
        request.update(loaded)
    result = (
        _open(ctx)
        .retrieve(
            request["query_expansion"],
            entities=request["entities"],
            pinned=request["pinned_memory_ids"],
            max_memories=request["max_memories"],
            max_new=request["max_new"],
            token_budget=request["token_budget"],
        )
        .to_dict()
    )
    if as_json:
        render.dump_json(result)
        return
    if not result["memories"]:
        click.echo("Nothing relevant.", err=True)
    for item in result["memories"]:
        click.echo(f"{click.style(item['id'], fg='cyan', bold=True)}  {item['category']}  {item['why']}")
        click.echo("    " + item["text"].replace("\n", "\n    "))
    click.echo(click.style(f"({result['tokens']} tokens)", dim=True), err=True)


# ------------------------------------------------------------------ remember-scan
@cli.command("remember-scan")
@click.option("--entered-by", help="Agent name to record (default auto-extract).")
@click.option("--source", help="Where the text came from.")
@_json_option
@click.pass_context
def remember_scan(ctx: click.Context, entered_by: str | None, source: str | None, as_json: bool) -> None:
    """Store every `*Remember*: …` note found in standard input (auto tags and expiry).

    A note ends at a blank line or at the next `*Remember*`. Only the first 10 MiB of input and 1,000 notes
    are taken, and a note longer than 10,000 characters is skipped; each says so on standard error.
    """
    store = _open(ctx)
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        click.echo(f"codememory: warning: {message}", err=True)

    text, scanned, more = (
        read_text_upto(sys.stdin, REMEMBER_SCAN_MAX_BYTES, whole_lines=True) if sys.stdin else ("", 0, False)
    )
    if more:
        warn(
            f"standard input is over the {size_text(REMEMBER_SCAN_MAX_BYTES)} limit; scanned its first {scanned:,}"
            " bytes (to the last whole line), the rest was not read"
        )
    results = store.remember_scan(text, entered_by=entered_by, source=source, on_warning=warn)
    if as_json:
        render.dump_json(
            {
                "found": len(results),
                "stored": sum(r.created for r in results),
                "results": [r.to_dict() for r in results],
                "warnings": warnings,
            }
        )
        return
    for r in results:
        state = "Stored" if r.created else "Already stored"
        click.echo(f"{state} {r.memory.id}: {r.memory.text[:80]}")
    if not results:
        click.echo("No *Remember* notes found.", err=True)


# ---------------------------------------------------------------------------- mcp
# ----------------------------------------------------------------------- sessions
@cli.group(cls=_Group)
def sessions() -> None:
    """Coding sessions saved by agents through the MCP `checkpoint` tool (markdown files in
    .codememory/sessions/, which are the source of truth)."""


def _session_line(item: dict[str, Any]) -> str:
    goal = item.get("goal") or "(no goal yet)"
    if len(goal) > 80:
        goal = goal[:77] + "..."
    parts = [click.style(item["session_id"], fg="cyan", bold=True), item["tool"], item["date"], item["status"]]
    return "  ".join(parts) + "\n    " + goal + "\n    " + click.style(item["markdown_path"], dim=True)


@sessions.command("list")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@click.option("--tool", help="Only sessions of this tool (e.g. claude-code, cursor).")
@click.option("--status", type=click.Choice(["open", "frozen", "closed"]), help="Only sessions with this status.")
@_json_option
@click.pass_context
def sessions_list(ctx: click.Context, limit: int, tool: str | None, status: str | None, as_json: bool) -> None:
    """Recent sessions, newest first."""
    found = [s.to_dict() for s in _open(ctx).list_sessions(limit=limit, tool=tool, status=status)]
    if as_json:
        render.dump_json({"sessions": found})
    elif not found:
        click.echo("No sessions.")
    else:
        for item in found:
            click.echo(_session_line(item))


@sessions.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 5))
@click.option("--tool", help="Only sessions of this tool (e.g. claude-code, cursor).")
@_json_option
@click.pass_context
def sessions_search(ctx: click.Context, query: tuple[str, ...], limit: int, tool: str | None, as_json: bool) -> None:
    """Find sessions by what they were about ('tei migration last week', 'cursor session about auth.py')."""
    found = _open(ctx).search_sessions(" ".join(query), limit=limit, tool=tool).to_dict()
    if as_json:
        render.dump_json(found)
    elif not found["results"]:
        click.echo("No sessions found matching your query.")
    else:
        for item in found["results"]:
            score = "" if item["score"] is None else f"  score {item['score']:g}"
            click.echo(_session_line(item) + score)


@sessions.command("show")
@click.argument("session_id")
@click.option("--files", "files_only", is_flag=True, help="Print only the files the session touched.")
@_json_option
@click.pass_context
def sessions_show(ctx: click.Context, session_id: str, files_only: bool, as_json: bool) -> None:
    """Print a session's markdown file (or its files with --files)."""
    store = _open(ctx)
    if files_only:
        files = [f.to_dict() for f in store.session_files(session_id)]
        if as_json:
            render.dump_json({"session_id": session_id, "files": files})
        else:
            for item in files:
                click.echo(f"{item['change_type']:<9} {item['path']}")
        return
    shown = store.show_session(session_id).to_dict()
    if as_json:
        render.dump_json(shown)
    else:
        click.echo(shown["markdown"], nl=False)


@sessions.command("rebuild")
@_json_option
@click.pass_context
def sessions_rebuild(ctx: click.Context, as_json: bool) -> None:
    """Recreate the session rows and search index from the markdown files in .codememory/sessions/."""
    report = _open(ctx).rebuild_sessions().to_dict()
    if as_json:
        render.dump_json(report)
        return
    click.echo(f"Rebuilt {report['sessions']} session{'' if report['sessions'] == 1 else 's'} from markdown.")
    for error in report["errors"]:
        click.echo(f"codememory: warning: skipped {error['file']}: {error['error']}", err=True)


@cli.command("mcp")
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve over MCP streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (needs the token).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="With --http: the port on 127.0.0.1 (default 9474; 0: any free port).",
)
@click.pass_context
def mcp_cmd(ctx: click.Context, http: bool, port: int | None) -> None:
    """Serve the memory tools to AI agents over MCP (stdio; streamable HTTP with --http): memory_search, memory_get,
    memory_store, memory_forget, memory_retrieve, memory_transcript, and the session tools checkpoint,
    search_sessions, list_sessions, get_session_files. Your agent starts it; run it by hand only to test.

    \b
    Register it once per project (the agent starts it in the project folder):
      Claude Code:  claude mcp add --scope project codememory -- codememory mcp
      OpenCode:     opencode.json  {"mcp": {"codememory": {"type": "local", "command": ["codememory", "mcp"]}}}
      Cursor:       .cursor/mcp.json  {"mcpServers": {"codememory": {"command": "codememory", "args": ["mcp"]}}}
      Codex:        ~/.codex/config.toml  [mcp_servers.codememory]  command = "codememory"  args = ["mcp"]
    Add `--project DIR` before `mcp` (or set CODEMEMORY_PROJECT) to serve another project's store.

    \b
    --http: keep one server running yourself and point clients at its URL (streamable HTTP):
      codememory mcp --http [--port N]    prints "listening on http://127.0.0.1:PORT/mcp" to stderr
    It listens on 127.0.0.1 only and every request needs the daemon's token,
    `Authorization: Bearer <token>`, from the file `token` in $XDG_STATE_HOME/codememory/
    (~/.local/state/codememory/; created if missing). Requests with a foreign Host or Origin header,
    or a body over [daemon] max_body_bytes, are refused. Stop it with Ctrl-C.
    """
    if port is not None and not http:
        raise click.UsageError("--port needs --http")
    if http:
        from codememory.mcp.http import DEFAULT_PORT, serve_http  # imported here: the SDK must not slow other commands

        serve_http(ctx.obj["project"], DEFAULT_PORT if port is None else port)
        return
    from codememory.mcp.server import serve  # imported here: the MCP SDK must not slow the other commands

    serve(ctx.obj["project"])


from codememory.cli.hook_cmd import hook  # noqa: E402  (registered last: hook_cmd imports nothing heavy)

cli.add_command(hook)

from codememory.cli.daemon_cmd import daemon  # noqa: E402

cli.add_command(daemon)

from codememory.cli.transcript_cmd import transcript  # noqa: E402

cli.add_command(transcript)

from codememory.cli.capture_cmd import capture  # noqa: E402

cli.add_command(capture)

from codememory.cli.explain_cmd import explain  # noqa: E402

cli.add_command(explain)

from codememory.cli.trust_cmd import trust  # noqa: E402

cli.add_command(trust)

from codememory.cli.repair_cmd import repair_cmd  # noqa: E402

cli.add_command(repair_cmd)


def _help_flags_everywhere(group: click.Group) -> None:
    """`-h` on every command, also when a command object was first run on its own (click caches each command's
    help option the first time it builds one, from that run's settings: a test or a script calling `hook`
    directly would otherwise leave `codememory hook -h` without `-h`)."""
    for command in group.commands.values():
        command.context_settings.setdefault("help_option_names", ["-h", "--help"])
        if isinstance(command, click.Group):
            _help_flags_everywhere(command)


_help_flags_everywhere(cli)


def main() -> None:
    cli(prog_name="codememory")
