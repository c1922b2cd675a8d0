"""How many memories need a vector, as the daemon's backfill asks at every poll (Semantic.count_needing): counted
again only when a memory's text or a vector changed, not at every poll of a store that sits still."""

from __future__ import annotations

from pathlib import Path

from codememory import Store
from codememory.core.dates import now_iso
from codememory.store.embeddings import count_needing_apart

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


def test_counted_apart_on_a_connection_of_its_own_right_after_writes_and_beside_an_open_write(tmp_path: Path) -> None:
    """The daemon counts on a read-only connection of its own, outside the store's lock: the count is the store's
    own, for the counters it reports, and it runs while the store's connection is busy writing."""
    with Store.init(tmp_path)[0] as store:
        store.add("Use httpx for outbound HTTP calls in the webhook worker")
        on_store: list[str] = []
        store.db.conn.set_trace_callback(lambda sql: on_store.append(sql) if "LEFT JOIN embeddings" in sql else None)
        assert count_needing_apart(store.db.path, MODEL) == (store.db.change_counters(), 1)
        store.add("The Postgres connection pool holds 20 connections in production")
        counters, count = count_needing_apart(store.db.path, MODEL)
        assert (counters, count) == (store.db.change_counters(), 2)
        store.semantic.remember_needing(MODEL, counters, count)
        assert store.semantic.needing_if_known(MODEL) == 2
        with store.db.transaction():  # a request writing meanwhile: the count neither waits nor sees it
            store.add("Deploys go out on Tuesdays after the standup")
            assert count_needing_apart(store.db.path, MODEL) == (counters, 2)
        assert store.semantic.needing_if_known(MODEL) is None  # committed: the kept count no longer holds
        assert count_needing_apart(store.db.path, MODEL)[1] == 3 == store.semantic.count_needing(MODEL)
        assert len(on_store) == 1  # only the last, in-process count ran on the store's connection


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
