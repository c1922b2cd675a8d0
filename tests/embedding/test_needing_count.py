"""How many memories need a vector, as the daemon's backfill asks at every poll (Semantic.count_needing): counted
again only when a memory's text or a vector changed, not at every poll of a store that sits still."""

from __future__ import annotations

from pathlib import Path

from codememory import Store
from codememory.core.dates import now_iso

MODEL = "some-model"


def test_the_count_is_kept_until_a_memory_changes_and_a_touch_does_not_move_it(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        first = store.add("Use httpx for outbound HTTP calls in the webhook worker").memory.id
        counts: list[str] = []
        store.db.conn.set_trace_callback(lambda sql: counts.append(sql) if "LEFT JOIN embeddings" in sql else None)
        assert store.semantic.count_needing(MODEL) == 1
        assert store.semantic.count_needing(MODEL) == 1
        assert len(counts) == 1  # the second answer without counting again
        store.db.touch([pk for _, pk in store.db.get_pk_map([first])], now_iso())  # shown to an agent: no new text
        assert store.semantic.count_needing(MODEL) == 1
        assert len(counts) == 1
        store.add("The Postgres connection pool holds 20 connections in production")
        assert store.semantic.count_needing(MODEL) == 2
        assert len(counts) == 2
        store.edit(first, text="Use httpx (HTTP/2, async) for outbound HTTP calls in the webhook worker")
        assert store.semantic.count_needing(MODEL) == 2
        assert len(counts) == 3  # a text changed: counted again
