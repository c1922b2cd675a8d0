"""The memory commands: store, list, show, link, forget, archive, prune and remember-scan (each one an operation of
codememory.operations, rendered as text, markdown or JSON). Search has its own module (search_cmd)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from codememory.cli import render
from codememory.cli.daemon_handoff import handed_off
from codememory.cli.options import filter_args, filter_options, json_option, open_store
from codememory.core.bounded_input import (
    REMEMBER_SCAN_MAX_BYTES,
    STORE_INPUT_MAX_BYTES,
    read_all_text,
    read_file_text,
    read_text_upto,
    size_text,
)
from codememory.core.model import CATEGORIES
from codememory.errors import CodememoryError, InvalidInput
from codememory.store.filters import SORT_COLUMNS

if TYPE_CHECKING:
    from codememory.operations import forget as forgetting

# Each command imports its operation when it runs: `codememory --help` lists these commands without loading the
# store and the search engine.


# -------------------------------------------------------------------------- store
@click.command("store")
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
@click.option(
    "--personal/--shared",
    default=None,
    help="Keep this memory out of the team's shared text form (default: the [share] settings decide; "
    "preferences are personal).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the memory id.")
@json_option
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
    # The white space and newlines that end a file or piped text (`echo text | codememory store`, an editor's
    # final newline) are not part of the memory: the same note stored from a file and from a pipe is one memory.
    if file is not None:
        text = read_file_text(file, STORE_INPUT_MAX_BYTES, str(file), text_only=True).rstrip()
    elif text is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InvalidInput("no text given: pass it as an argument, with --file, or on standard input")
        text = read_all_text(sys.stdin, STORE_INPUT_MAX_BYTES, "standard input", text_only=True).rstrip()
    opts["supersedes"] = list(opts["supersedes"])
    result = handed_off(ctx, "/cli/store", {"text": text, **opts}, write=True)
    if result is None:
        from codememory.operations.store_memory import store_memory

        result = store_memory(open_store(ctx), text, **opts).to_dict()
    memory_id = result["memory"]["id"]
    if as_json:
        render.dump_json(result)
    elif quiet:
        click.echo(memory_id)
    elif result["created"]:
        click.echo(f"Stored {memory_id}")
        for link in result["links"]:
            click.echo(f"  {link['type']} {link['id']}" + (f" (cosine {link['score']})" if link["score"] else ""))
    else:
        click.echo(f"Already stored as {memory_id} ({result['duplicate_reason']}); not stored again")


# --------------------------------------------------------------------------- edit
@click.command("edit")
@click.argument("memory_id")
@click.option("--text", help="The new text.")
@click.option("--category", help=f"One of: {', '.join(CATEGORIES)}.")
@click.option("--importance", type=float, help="0..1.")
@click.option("--tags", help="The new tags, comma-separated ('' for none).")
@json_option
@click.pass_context
def edit(ctx: click.Context, /, memory_id: str, as_json: bool, **changes: Any) -> None:
    """Change a memory in place (its id and links stay); with sharing on, its file is rewritten."""
    if all(v is None for v in changes.values()):
        raise InvalidInput("nothing to change: give --text, --category, --importance or --tags")
    from codememory.operations.edit import edit_memory

    detail = edit_memory(open_store(ctx), memory_id, **changes)
    if as_json:
        render.dump_json(detail.to_dict())
    else:
        click.echo(f"Updated {detail.memory.id}")


# --------------------------------------------------------------------------- list
@click.command("list")
@filter_options
@click.option("--sort", type=click.Choice(list(SORT_COLUMNS)), default="created", show_default=True)
@click.option("--order", type=click.Choice(["asc", "desc"]), default="desc", show_default=True)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1))
@click.option("--offset", default=0, type=click.IntRange(min=0))
@click.option("--markdown", is_flag=True, help="Print markdown.")
@json_option
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
    from codememory.operations.listing import list_memories

    filters = filter_args(kwargs)
    store = open_store(ctx)
    listed = list_memories(store, sort=sort, order=order, limit=limit, offset=offset, **filters)
    if as_json:
        result = listed.to_dict()
        if filters.get("entity"):
            render.note_entities_pending(store, result)
        render.dump_json(result)
        return
    if markdown:
        click.echo(render.memories_markdown("Memories", listed.memories))
    elif not listed.memories:
        click.echo("No memories.", err=True)
    else:
        personal = set(listed.personal)
        for mem in listed.memories:
            click.echo(render.memory_text(mem, personal=mem.id in personal))
    if filters.get("entity"):
        render.note_entities_pending(store, None)


# --------------------------------------------------------------------------- show
@click.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--markdown", is_flag=True, help="Print markdown.")
@json_option
@click.pass_context
def show(ctx: click.Context, ids: tuple[str, ...], markdown: bool, as_json: bool) -> None:
    """Show memories in full, with their links and entities."""
    from codememory.operations.get import show as show_memories

    details = show_memories(open_store(ctx), ids)
    if as_json:
        render.dump_json(details[0].to_dict() if len(details) == 1 else [d.to_dict() for d in details])
    elif markdown:
        click.echo("\n".join(render.memory_markdown(d.memory) for d in details))
    else:
        click.echo("\n\n".join(render.memory_detail(d) for d in details))


@click.command()
@click.argument("from_id")
@click.argument("to_id")
@click.option(
    "--type",
    "link_type",
    type=click.Choice(["corroborates", "conflicts", "supersedes", "refines", "contextualizes"]),
    required=True,
    help="How FROM_ID relates to TO_ID (supersedes also retires TO_ID from search).",
)
@json_option
@click.pass_context
def link(ctx: click.Context, from_id: str, to_id: str, link_type: str, as_json: bool) -> None:
    """Record how one memory relates to another."""
    from codememory.operations.link import link as link_memories

    linked = link_memories(open_store(ctx), from_id, to_id, link_type)
    if as_json:
        render.dump_json(linked.to_dict())
    else:
        click.echo(f"{from_id} {link_type} {to_id}")


# ------------------------------------------------------------- forget / archive
def _report_ids(
    result: forgetting.Forgotten | forgetting.Archived | forgetting.Unarchived,
    verb: str,
    done: list[str],
    as_json: bool,
) -> None:
    if as_json:
        render.dump_json(result.to_dict())
    else:
        for i in done:
            click.echo(f"{verb.capitalize()} {i}")
    if result.unknown:
        raise CodememoryError(f"no memory with id {', '.join(result.unknown)}")


@click.command()
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def forget(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Delete memories for good (also from the search indexes)."""
    from codememory.operations import forget as forgetting

    result = forgetting.forget(open_store(ctx), ids)
    _report_ids(result, "forgotten", result.forgotten, as_json)


@click.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Bring archived memories back.")
@json_option
@click.pass_context
def archive(ctx: click.Context, ids: tuple[str, ...], undo: bool, as_json: bool) -> None:
    """Hide memories from search and list without deleting them."""
    from codememory.operations import forget as forgetting

    result = forgetting.archive(open_store(ctx), ids, undo=undo)
    done = result.unarchived if isinstance(result, forgetting.Unarchived) else result.archived
    _report_ids(result, "unarchived" if undo else "archived", done, as_json)


# -------------------------------------------------------------------------- prune
@click.command()
@click.option("--before", help="Also delete memories created before this date (even if not expired).")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted; delete nothing.")
@click.option("--force", "-f", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def prune(ctx: click.Context, before: str | None, dry_run: bool, force: bool, as_json: bool) -> None:
    """Delete expired memories."""

    def confirm(count: int) -> None:
        if not sys.stdin or not sys.stdin.isatty():
            raise InvalidInput(f"would delete {count} memories; re-run with --force (or --dry-run to see them)")
        click.confirm(f"Delete {count} memories?", abort=True)

    from codememory.operations import forget as forgetting

    result = forgetting.prune(open_store(ctx), before=before, dry_run=dry_run, confirm=None if force else confirm)
    if as_json:
        render.dump_json(result.to_dict())
        return
    for mem in result.memories:
        click.echo(render.memory_text(mem))
    verb = "Would delete" if dry_run else "Deleted"
    click.echo(f"{verb} {result.count} memories.")


# ------------------------------------------------------------------ remember-scan
@click.command("remember-scan")
@click.option("--entered-by", help="Agent name to record (default auto-extract).")
@click.option("--source", help="Where the text came from.")
@json_option
@click.pass_context
def remember_scan(ctx: click.Context, entered_by: str | None, source: str | None, as_json: bool) -> None:
    """Store every `*Remember*: …` note found in standard input (auto tags and expiry).

    A note ends at a blank line or at the next `*Remember*`. Only the first 10 MiB of input and 1,000 notes
    are taken, and a note longer than 10,000 characters is skipped; each says so on standard error.
    """
    store = open_store(ctx)

    def warn(message: str) -> None:
        click.echo(f"codememory: warning: {message}", err=True)

    text, scanned, more = (
        read_text_upto(sys.stdin, REMEMBER_SCAN_MAX_BYTES, whole_lines=True) if sys.stdin else ("", 0, False)
    )
    read_warnings = []
    if more:
        read_warnings.append(
            f"standard input is over the {size_text(REMEMBER_SCAN_MAX_BYTES)} limit; scanned its first {scanned:,}"
            " bytes (to the last whole line), the rest was not read"
        )
        warn(read_warnings[0])
    from codememory.operations.store_memory import remember_scan as scan_notes

    scan = scan_notes(store, text, entered_by=entered_by, source=source, warnings=read_warnings, on_warning=warn)
    if as_json:
        render.dump_json(scan.to_dict())
        return
    for r in scan.results:
        state = "Stored" if r.created else "Already stored"
        click.echo(f"{state} {r.memory.id}: {r.memory.text[:80]}")
    if not scan.results:
        click.echo("No *Remember* notes found.", err=True)
