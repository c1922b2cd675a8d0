"""The filters of a memory listing or search as callers give them (comma-separated strings or lists, dates as ISO or
words like "2 weeks ago"), checked and turned into the store's `Filters`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from codememory.core.dates import parse_when, to_iso
from codememory.core.model import normalize_tags, validate_category
from codememory.core.provenance import REVIEW_STATES, STORED_ORIGINS
from codememory.errors import InvalidInput
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
    origin: str | Sequence[str] | None = None,
    review: str | None = None,
    include_rejected: bool = False,
    injectable: bool = False,
) -> Filters:
    """`tags`: all of them; `any_tags`: any of them; `category`, `entity`, `origin`: any of them; `after`/`before`:
    created then; expired, archived and superseded memories are left out unless included, and so are those the user
    rejected on review; `review`: only those in that review state; `injectable`: only what may enter a block put in
    an agent's context unasked (none waiting for review, core/provenance.py)."""
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
        origins=_origins(origin),
        review=_review(review),
        include_rejected=include_rejected,
        injectable=injectable,
    )


def _origins(origin: str | Sequence[str] | None) -> list[str]:
    items = (origin.split(",") if isinstance(origin, str) else list(origin)) if origin else []
    out = [o.strip().lower() for o in items if o.strip()]
    bad = [o for o in out if o not in STORED_ORIGINS]
    if bad:
        raise InvalidInput(f"unknown origin {bad[0]!r}; choose from: {', '.join(STORED_ORIGINS)}")
    return out


def _review(review: str | None) -> str | None:
    if review and review not in REVIEW_STATES:
        raise InvalidInput(f"unknown review state {review!r}; choose from: {', '.join(REVIEW_STATES)}")
    return review or None
