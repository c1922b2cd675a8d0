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


def test_vectors_dropped_for_another_model_are_counted_again(tmp_path: Path) -> None:
    """`codememory embed` run with another model drops this model's vectors (drop_other_embeddings): a daemon that
    still embeds with this one must see them needed again, not keep its count of none for NEEDING_RECOUNT_S."""
    with Store.init(tmp_path)[0] as store:
        store.add("Use httpx for outbound HTTP calls in the webhook worker")
        [(pk, text)] = store.db.needing_embedding(MODEL, 10)
        store.db.save_embeddings(MODEL, [(pk, text, b"\0" * 16, 4)])
        assert store.semantic.count_needing(MODEL) == 0
        store.db.drop_other_embeddings("another-model")
        assert store.semantic.count_needing(MODEL) == 1
