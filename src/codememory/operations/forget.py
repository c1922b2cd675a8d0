"""Removing memories: forget (delete for good, also from the search indexes), archive (hide, reversible) and prune
(delete the expired ones): `codememory forget / archive / prune`, MCP memory_forget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.model import Memory
from codememory.core.result import Result

if TYPE_CHECKING:
    from codememory.service.project_store import DateLike, Store


@dataclass
class Forgotten(Result):
    """`{forgotten, unknown}`: `forget --json`, MCP memory_forget."""

    forgotten: list[str]
    unknown: list[str]  # ids that did not exist


@dataclass
class Archived(Result):
    archived: list[str]
    unknown: list[str]


@dataclass
class Unarchived(Result):
    unarchived: list[str]
    unknown: list[str]


@dataclass
class Pruned(Result):
    """`{dry_run, count, memories}`: `prune --json`."""

    dry_run: bool
    count: int
    memories: list[Memory]  # deleted (or, in a dry run, the ones that would be)


def forget(store: Store, ids: Sequence[str]) -> Forgotten:
    forgotten, unknown = store.forget(list(ids))
    return Forgotten(forgotten, unknown)


def archive(store: Store, ids: Sequence[str], *, undo: bool = False) -> Archived | Unarchived:
    """Archive the memories (with `undo`, bring archived ones back)."""
    done, unknown = store.archive(list(ids), archived=not undo)
    return Unarchived(done, unknown) if undo else Archived(done, unknown)


def prune(
    store: Store, *, before: DateLike = None, dry_run: bool = False, confirm: Callable[[int], None] | None = None
) -> Pruned:
    """Delete the expired memories (and, with `before`, every one created before then). `confirm` is told how
    many would go before anything is deleted, and may raise to stop there."""
    victims = store.prune(before=before, dry_run=True)
    if not dry_run and victims:
        if confirm is not None:
            confirm(len(victims))
        victims = store.prune(before=before)
    return Pruned(dry_run, len(victims), victims)
