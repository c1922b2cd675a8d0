"""What the memory commands share: opening the project's store for a command, `--json`, and the filter options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from codememory.core.model import CATEGORIES

if TYPE_CHECKING:
    from codememory.service.project_store import Store

F = TypeVar("F", bound=Callable[..., Any])

FILTER_KEYS = (
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


def open_store(ctx: click.Context) -> Store:
    """The store of the project `--project` names (or the one found from here), closed when the command ends."""
    from codememory.service.project_store import Store  # loaded when a command runs, not for --help

    store = Store.open(ctx.obj["project"])
    ctx.call_on_close(store.close)
    return store


_AS_WORDS = "\x1f"  # marks an argument kept from click's option parser (a control character no query keeps)


class QueryCommand(click.Command):
    """A command whose arguments are a search query: an argument that starts with a `-word` exclusion (`search
    payment -sandbox`, or `"-sandbox payment"` as one) is query text, not an option (click would read `-hooks`
    as `-h`, help, and `-sandbox` as an unknown `-s`). Such arguments reach the command marked, in their place;
    `query_text` unmarks them. After `--` everything is an argument, as usual."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from codememory.text.query import is_exclusion

        names = {name for p in self.get_params(ctx) for name in (*p.opts, *p.secondary_opts)}
        kept: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                kept += args[i:]
                break
            first = arg.split(maxsplit=1)[0] if arg.strip() else ""
            query_words = is_exclusion(first) and first.split("=", 1)[0] not in names
            kept.append(_AS_WORDS + arg if query_words else arg)
        return super().parse_args(ctx, kept)


def query_text(words: tuple[str, ...]) -> str:
    """The query as typed, from the arguments of a `QueryCommand`."""
    return " ".join(w.removeprefix(_AS_WORDS) for w in words)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(f)


def filter_options(f: F) -> F:
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


def filter_args(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The filter options, taken out of a command's keyword arguments."""
    return {k: kwargs.pop(k) for k in FILTER_KEYS}
