"""`codememory retrieve`: the few memories worth showing an agent for its current step (thin over
codememory.operations.retrieve); the request comes from options or, with --input, as JSON."""

from __future__ import annotations

import json
from typing import Any

import click

from codememory.cli import render
from codememory.cli.options import json_option, open_store
from codememory.core.bounded_input import RETRIEVE_INPUT_MAX_BYTES, read_all_text, valid_json_text
from codememory.errors import InvalidInput
from codememory.text.context_render import one_line, quoted


@click.command()
@click.option("-q", "--query", "queries", multiple=True, help="A phrase describing the current task (repeatable).")
@click.option("-e", "--entity", "entities", multiple=True, help="An entity the task involves (repeatable).")
@click.option("--pinned", multiple=True, help="Id surfaced last time, kept while still relevant (repeatable).")
# retrieval.proactive's DEFAULT_MAX_MEMORIES and DEFAULT_MAX_NEW (not imported: the CLI loads a command's modules
# only when it runs)
@click.option("--max", "max_memories", default=4, show_default=True, type=click.IntRange(min=1))
@click.option("--max-new", default=3, show_default=True, type=click.IntRange(min=1))
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
@click.option("--remote", is_flag=True, help="Also ask the organisation's shared memory ([remote] Milvus).")
@json_option
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
    remote: bool,
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
        request.update(_request_file(input_file, set(request)))
    elif not any(q.strip() for q in queries) and not entities:
        raise InvalidInput("nothing to retrieve for: give a phrase with -q/--query or an entity with -e/--entity")
    from codememory.operations.retrieve import retrieve as retrieve_memories
    from codememory.text.privacy import scrub_message

    store = open_store(ctx)
    result = retrieve_memories(
        store,
        request["query_expansion"],
        entities=request["entities"],
        pinned=request["pinned_memory_ids"],
        max_memories=request["max_memories"],
        max_new=request["max_new"],
        token_budget=request["token_budget"],
        remote=remote,
    )
    if as_json:
        answer = result.to_dict()
        if request["entities"]:
            render.note_entities_pending(store, answer)
        render.dump_json(answer)
        return
    if not result.memories:
        click.echo("Nothing relevant.", err=True)
    if request["entities"]:
        render.note_entities_pending(store, None)
    remote_status = getattr(result, "remote", None)
    if remote_status is not None and remote_status.error:
        click.echo(f"codememory: warning: local memories only: {scrub_message(remote_status.error)}", err=True)
    from codememory.retrieval.why import why_text

    for item in result.memories:
        shown = (item.provenance or item.origin).replace("[", "").replace("]", "")
        where = f"  [{one_line(shown)}]"
        click.echo(f"{click.style(item.id, fg='cyan', bold=True)}  {item.category}{where}  {why_text(item.why)}")
        click.echo(quoted(item.text, "    "))
    click.echo(click.style(f"({result.tokens} tokens)", dim=True), err=True)


def _request_file(input_file: Any, known: set[str]) -> dict[str, Any]:
    """The request fields of --input: a JSON object with no field retrieve does not know."""
    try:
        loaded = json.loads(valid_json_text(read_all_text(input_file, RETRIEVE_INPUT_MAX_BYTES, "--input")))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--input is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(loaded, dict):
        raise InvalidInput("--input must hold a JSON object")
    unknown = set(loaded) - known
    if unknown:
        raise InvalidInput(f"unknown field(s) in --input: {', '.join(sorted(unknown))}")
    return loaded
