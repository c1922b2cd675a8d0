"""Which memories a keyword expression matches among given ones (`fts_subset`, what word coverage and a hit's
matched words are computed from): the same answer by a range pass, by probing key by key and from what an earlier
pass kept, and never an answer from before the store's text changed."""

from __future__ import annotations

import json
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
        statements: list[str] = []
        db.conn.set_trace_callback(statements.append)
        every = [pk for (pk,) in db.conn.execute("SELECT pk FROM memories ORDER BY pk")]
        spread = every[::37]  # 136 keys over the whole store: "cache" has 2,500 matches in their range
        few = [every[5], every[-5]]  # two keys far apart: too many matches between them, probed one by one
        for word in ("cache", "retry", "item42"):
            match = f'"{word}"'
            assert db.fts_subset(match, few) == _expected(store, word, few)
            assert db.fts_subset(match, spread) == _expected(store, word, spread)
            inside = spread[10:30]  # within the range a pass already read: answered from it
            seen = len(statements)
            assert db.fts_subset(match, inside) == _expected(store, word, inside)
            assert not [s for s in statements[seen:] if "memories_fts" in s]
        assert any("rowid IN" in s for s in statements)  # the two far-apart keys were probed
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
