"""`codememory link`: record how one memory relates to another (a "supersedes" link also retires the older one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codememory.core.result import Result, json_key

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class Linked(Result):
    """`link --json`: `{from, type, to}`."""

    from_id: str = field(metadata=json_key("from"))
    type: str
    to_id: str = field(metadata=json_key("to"))


def link(store: Store, from_id: str, to_id: str, link_type: str) -> Linked:
    """`from_id` corroborates, conflicts with, supersedes, refines or contextualizes `to_id` (see `Store.link`)."""
    store.link(from_id, to_id, link_type)
    return Linked(from_id, link_type, to_id)
