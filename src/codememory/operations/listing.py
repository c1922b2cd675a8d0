"""`codememory list`: memories in a chosen order, filtered, a page at a time, with how many match in all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.model import Memory
from codememory.core.result import OMIT_NONE, Result

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class MemoryList(Result):
    """`{count, total, memories, personal}`: `list --json` (count on this page, total matching the filters)."""

    count: int
    total: int
    memories: list[Memory]
    # the ids on this page kept out of the shared text form (`store --personal`, the [share] settings)
    personal: list[str] = field(default_factory=list)
    # with an entity filter (CLI): imported memories whose entities are unread, so not matched by them
    entities_pending: int | None = field(default=None, metadata=OMIT_NONE)


def list_memories(
    store: Store, *, sort: str = "created", order: str = "desc", limit: int = 20, offset: int = 0, **filters: Any
) -> MemoryList:
    """One page of memories (see `Store.list`); `filters` are the store's filters."""
    memories = store.list(sort=sort, order=order, limit=limit, offset=offset, **filters)
    personal = store.db.personal_ids([m.id for m in memories]) if memories else set()
    return MemoryList(len(memories), store.count(**filters), memories, [m.id for m in memories if m.id in personal])
