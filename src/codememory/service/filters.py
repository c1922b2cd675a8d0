"""The filters of a memory listing or search as callers give them (comma-separated strings or lists, dates as ISO or
words like "2 weeks ago"), checked and turned into the store's `Filters`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from codememory.core.dates import parse_when, to_iso
from codememory.core.model import normalize_tags, validate_category
from codememory.service.memory_entities import entity_names
from codememory.store.filters import Filters

DateLike = str | datetime | None


def when(value: DateLike, what: str) -> str | None:
    """A date as the store keeps it (ISO, UTC); None for none. `what` names it in the error of one not understood."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return to_iso(value)
    return to_iso(parse_when(value, what=what))


def _categories(category: str | Sequence[str] | None) -> list[str]:
    if not category:
        return []
    items = category.split(",") if isinstance(category, str) else list(category)
    return [validate_category(c) for c in items if c.strip()]


def memory_filters(
    *,
    tags: str | Sequence[str] | None = None,
    any_tags: str | Sequence[str] | None = None,
    after: DateLike = None,
    before: DateLike = None,
    entered_by: str | None = None,
    category: str | Sequence[str] | None = None,
    include_expired: bool = False,
    include_archived: bool = False,
    include_superseded: bool = False,
    entity: str | Sequence[str] | None = None,
) -> Filters:
    """`tags`: all of them; `any_tags`: any of them; `category`, `entity`: any of them; `after`/`before`: created
    then; expired, archived and superseded memories are left out unless included."""
    return Filters(
        tags_all=normalize_tags(tags if tags is None or isinstance(tags, str) else list(tags)),
        tags_any=normalize_tags(any_tags if any_tags is None or isinstance(any_tags, str) else list(any_tags)),
        after=when(after, "after"),
        before=when(before, "before"),
        entered_by=entered_by or None,
        categories=_categories(category),
        include_expired=include_expired,
        include_archived=include_archived,
        include_superseded=include_superseded,
        entities=entity_names(entity),
    )
