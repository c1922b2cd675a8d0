"""Memories by id, in full: `codememory show`, MCP memory_get and the daemon's /memory/get (each record with its
links and the entities it mentions, whether it may be stale, and what agents did with it when it was shown)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codememory.core.model import Memory
from codememory.core.result import FLATTEN, Result
from codememory.errors import NotFound
from codememory.operations.stale import Staleness, staleness_of
from codememory.operations.usefulness import Usefulness, detail_usefulness
from codememory.service.results import Relations

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class MemoryDetail(Result):
    """A memory's every field, then its links (both directions) and entities, and whether it may be stale."""

    memory: Memory = field(metadata=FLATTEN)
    relations: Relations = field(metadata=FLATTEN)
    staleness: Staleness
    usefulness: Usefulness  # what agents did with it when shown (operations/usefulness.py)
    personal: bool = False  # kept out of the team's shared text form (`store --personal`, the [share] settings)


@dataclass
class Records(Result):
    """`{memories, missing}`: MCP memory_get and the daemon's /memory/get."""

    memories: list[MemoryDetail]
    missing: list[str]  # the ids that do not exist


def show(store: Store, ids: Sequence[str]) -> list[MemoryDetail]:
    """`codememory show`: every memory (an unknown id is NotFound), then their relations; an access is counted."""
    memories = [store.get(i) for i in ids]
    return [detail(store, m) for m in memories]


def get_records(store: Store, ids: Iterable[str]) -> Records:
    """Full records of `ids` (duplicates asked once), each with its links and entities; the ids that do not exist
    are listed in `missing`."""
    found: list[MemoryDetail] = []
    missing: list[str] = []
    for memory_id in dict.fromkeys(ids):
        try:
            record = store.get(memory_id)
        except NotFound:
            missing.append(memory_id)
            continue
        found.append(detail(store, record))
    return Records(found, missing)


def detail(store: Store, memory: Memory) -> MemoryDetail:
    """A memory's full record: its links and entities, its staleness and its usefulness."""
    return MemoryDetail(
        memory,
        store.relations(memory.id),
        staleness_of(store, memory.id),
        detail_usefulness(store, memory.id),
        memory.id in store.db.personal_ids([memory.id]),
    )
