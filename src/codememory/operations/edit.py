"""Curating a memory by hand (the viewer's edit form): change its text, category, importance or tags."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from codememory.operations.get import MemoryDetail, detail

if TYPE_CHECKING:
    from codememory.service.project_store import Store


def edit_memory(
    store: Store,
    memory_id: str,
    *,
    text: str | None = None,
    category: str | None = None,
    importance: float | None = None,
    tags: Sequence[str] | None = None,
) -> MemoryDetail:
    """The memory as it is after the change (None leaves a field as it is), with its links and entities."""
    memory = store.edit(memory_id, text=text, category=category, importance=importance, tags=tags)
    return detail(store, memory)
