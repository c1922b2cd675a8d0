"""`codememory link`: record how one memory relates to another (a "supersedes" link also retires the older one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codememory.service.project_store import Store


def link(store: Store, from_id: str, to_id: str, link_type: str) -> None:
    """`from_id` corroborates, conflicts with, supersedes, refines or contextualizes `to_id` (see `Store.link`)."""
    store.link(from_id, to_id, link_type)
