"""`codememory stats`: the store's counts, categories, vectors and size, what extraction spent on a model, and
what consolidation runs changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.result import FLATTEN, OMIT_NONE, Result
from codememory.operations.consolidate import ConsolidationStats, consolidation_stats
from codememory.service.results import StoreStats

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class Stats(Result):
    """`stats --json`: the store's statistics, then `llm_spend` (tokens today, in the last 7 days, all time, per
    model, against the budget)."""

    store: StoreStats = field(metadata=FLATTEN)
    llm_spend: dict[str, Any]
    consolidation: ConsolidationStats  # runs, memories they consolidated, squashed, decayed, linked
    entities_pending: int | None = field(default=None, metadata=OMIT_NONE)  # in the CLI: imported, entities unread


def stats(store: Store, *, tags: bool = False, agents: bool = False) -> Stats:
    """With `tags` / `agents`, how often each tag is used and how many memories each agent entered."""
    from codememory.extract.budget import spend_summary

    return Stats(
        store.stats(tags=tags, agents=agents), spend_summary(store.db, store.config.llm), consolidation_stats(store)
    )
