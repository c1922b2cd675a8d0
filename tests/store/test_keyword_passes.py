"""Keyword passes beneath ranking. Which memories a keyword expression matches among given ones (`fts_subset`, what
word coverage and a hit's matched words are computed from): the same answer by a range pass, by probing key by key
and from what an earlier pass kept, and never an answer from before the store's text changed. A BM25 pass started
ahead on the second connection (`prefetch_fts`) gives what the store's own connection would, and is not used when
the text changed in between or started inside a write transaction. The members of sessions (`turns_around`)
follow every write."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from codememory import Store


def _store(tmp_path: Path, n: int) -> Store:
    store = Store.init(tmp_path)[0]
    dump = tmp_path / "bulk.jsonl"
    lines = []
    for i in range(n):
        words = ["cache" if i % 2 == 0 else "queue", "retry" if i % 7 == 0 else "backoff", f"item{i}"]
        lines.append(json.dumps({"text": f"note {i}: the {' '.join(words)} setting"}))
    dump.write_text("\n".join(lines) + "\n")
    assert store.import_(dump).added == n
    return store


def _expected(store: Store, word: str, pks: list[int]) -> set[int]:
    rows = store.db.conn.execute("SELECT pk, text FROM memories").fetchall()
    return {pk for pk, text in rows if pk in set(pks) and f" {word} " in f" {text} "}


@pytest.mark.slow
def test_a_range_pass_probing_and_a_kept_pass_agree(tmp_path: Path) -> None:
    with _store(tmp_path, 5_000) as store:
        db = store.db
        every = [pk for (pk,) in db.conn.execute("SELECT pk FROM memories ORDER BY pk")]
        spread = every[::37]  # 136 keys over the whole store: "cache" has 2,500 matches in their range
        few = [every[5], every[-5]]  # two keys far apart: too many matches between them, probed one by one
        for word in ("cache", "retry", "item42"):
            match = f'"{word}"'
            assert db.fts_subset(match, few) == _expected(store, word, few)
            assert db.fts_subset(match, spread) == _expected(store, word, spread)
            inside = spread[10:30]  # within the range a pass already read: answered from it
            assert db.fts_subset(match, inside) == _expected(store, word, inside)
        assert db.fts_subset('"nowhere"', spread) == set()
        assert db.fts_subset('"cache" AND "retry"', spread) == _expected(store, "cache", spread) & _expected(
            store, "retry", spread
        )


def test_a_changed_text_is_seen_by_the_next_question(tmp_path: Path) -> None:
    with _store(tmp_path, 400) as store:
        db = store.db
        pks = [pk for (pk,) in db.conn.execute("SELECT pk FROM memories ORDER BY pk")]
        before = db.fts_subset('"flaky"', pks)
        assert before == set()
        added = store.add("a flaky test in the cache layer", check_duplicates=False).memory
        pk_added = db.pk_of(added.id)
        assert pk_added is not None
        assert db.fts_subset('"flaky"', [*pks, pk_added]) == {pk_added}
        assert pks[2] in db.fts_subset('"cache"', pks)
        (id_2,) = db.conn.execute("SELECT id FROM memories WHERE pk = ?", (pks[2],)).fetchone()
        store.edit(id_2, text="now about the flaky queue only")
        assert pks[2] not in db.fts_subset('"cache"', pks)
        assert db.fts_subset('"flaky"', [*pks, pk_added]) == {pks[2], pk_added}
        store.forget([added.id])
        assert db.fts_subset('"flaky"', [*pks, pk_added]) == {pks[2]}

        (id_5,) = db.conn.execute("SELECT id FROM memories WHERE pk = ?", (pks[5],)).fetchone()
        with pytest.raises(RuntimeError), db.transaction():  # seen inside, then rolled back
            store.edit(id_5, text="a zebra crossing")
            assert db.fts_subset('"zebra"', pks) == {pks[5]}
            inside = db.text_version()
            raise RuntimeError
        while db.text_version() < inside:  # other text changes, committed, bring the counter to the same value
            store.add(f"an unrelated note {db.text_version()}", check_duplicates=False)
        assert db.text_version() == inside
        assert db.fts_subset('"zebra"', pks) == set()


def _bm25_on_main(statements: list[str]) -> list[str]:
    return [s for s in statements if "bm25(memories_fts)" in s]


@pytest.mark.slow
def test_a_bm25_pass_started_ahead_is_the_one_the_store_gives(tmp_path: Path) -> None:
    with _store(tmp_path, 5_000) as store:  # smaller indexes are not worth a pass ahead
        db = store.db
        filters = store.filters()
        expected = db.fts_search('"cache" OR "retry"', filters, 30)
        assert not store.semantic.configured and store.search("cache retry").hits
        # with no model there is nothing to overlap a pass ahead with: the search runs its own and starts no thread
        assert not [t for t in threading.enumerate() if t.name.startswith("codememory-bm25")]
        statements: list[str] = []
        db.conn.set_trace_callback(statements.append)
        db.prefetch_fts('"cache" OR "retry"', 30)
        assert db.fts_search('"cache" OR "retry"', filters, 30) == expected
        assert _bm25_on_main(statements) == []  # the pass ran on the other connection

        db.prefetch_fts('"flaky"', 30)
        store.add("a flaky cache test", check_duplicates=False)  # the text changed after the pass started
        statements.clear()
        found = db.fts_search('"flaky"', filters, 30)
        assert len(found) == 1 and _bm25_on_main(statements)  # asked again on the store's own connection

        (first_id,) = db.conn.execute("SELECT id FROM memories WHERE pk = 1").fetchone()
        with db.transaction():
            store.edit(first_id, text="a flaky retry")
            db.prefetch_fts('"flaky"', 30)  # not started: the other connection cannot see this row yet
            assert {pk for pk, _ in db.fts_search('"flaky"', filters, 30)} == {1, found[0][0]}
    assert not [t for t in threading.enumerate() if t.name.startswith("codememory-bm25")]  # closed with the store


def test_turns_around_follows_writes(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        db = store.db
        rows = [store.add(f"step {i} of the deploy", check_duplicates=False).memory for i in range(4)]
        pks = [pk for m in rows if (pk := db.pk_of(m.id)) is not None]
        db.conn.execute("UPDATE memories SET session_key = 's1', seq = pk")
        assert db.turns_around([pks[0]], store.filters(), 4) == [pks]
        assert db.turns_around([pks[2]], store.filters(), 4) == [pks]  # kept: nothing was written
        db.conn.execute("UPDATE memories SET archived = 1 WHERE pk = ?", (pks[1],))
        assert db.turns_around([pks[0]], store.filters(), 4) == [[pks[0], pks[2], pks[3]]]


def test_a_scratch_index_is_not_a_write_to_the_store(tmp_path: Path) -> None:
    """What is kept while the store is unchanged stays kept when a search fills its own TEMP index of a few texts,
    and goes when the store is written."""
    with Store.init(tmp_path)[0] as store:
        db = store.db
        rows = [store.add(f"a flaky cache test number {i}", check_duplicates=False).memory for i in range(3)]
        pks = [pk for m in rows if (pk := db.pk_of(m.id)) is not None]
        stamp = db.write_stamp()
        assert db.fts_subsets(['"flaky"', '"cache"'], pks) == [set(pks), set(pks)]  # filled temp.subset_fts
        assert db.write_stamp() == stamp
        db.conn.execute("UPDATE memories SET archived = 1 WHERE pk = ?", (pks[0],))
        assert db.write_stamp() != stamp
