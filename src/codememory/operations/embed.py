"""`codememory embed`: compute the vectors the configured embedding model has not made yet (after enabling a model;
everything again after changing it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result
from codememory.errors import InvalidInput

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class Embedded(Result):
    """`embed --json`."""

    model: str
    embedded: int


def backlog(store: Store) -> tuple[str, int]:
    """The configured model and how many memories it has no vector for (InvalidInput when there is no model)."""
    model = store.semantic.model
    if model is None:
        raise InvalidInput(f"cannot embed: {store.semantic.reason}")
    return model, store.db.count_needing_embedding(model)


def embed(store: Store, *, progress: Callable[[int, int], None] | None = None) -> Embedded:
    """Embed the backlog; `progress(done, total)` after each batch."""
    model, _todo = backlog(store)
    return Embedded(model, store.embed(progress=progress))
