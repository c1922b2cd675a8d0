"""Bulk writes of text (an import): the full-text indexes hold more pending terms meanwhile, and the setting does not
outlive the transaction, whether it commits or rolls back."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store
from codememory.core.model import Memory

TABLES = ("memories_fts", "memories_trigram", "memories_words")


def _hash_bytes(store: Store) -> dict[str, int | None]:
    conn = store.db.conn
    rows = {t: conn.execute(f"SELECT v FROM {t}_config WHERE k = 'hashsize'").fetchone() for t in TABLES}
    return {t: None if row is None else int(row[0]) for t, row in rows.items()}


def _mems(start: int, n: int) -> list[Memory]:
    return [
        Memory(id=f"mem_{i:08x}", text=f"note {i} about the flaky_cache_{i} in billing", created_at="x", updated_at="x")
        for i in range(start, start + n)
    ]


def test_the_setting_is_put_back_and_every_row_is_indexed(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        conn = store.db.conn
        conn.execute("INSERT INTO memories_trigram(memories_trigram, rank) VALUES ('hashsize', 2000000)")
        before = _hash_bytes(store)
        with store.db.bulk_load():
            seen_inside = _hash_bytes(store)
            store.db.insert_many(_mems(1, 300))
            store.db.insert_many(_mems(301, 300))
        assert all(v is not None and v > 2_000_000 for v in seen_inside.values())
        after = _hash_bytes(store)
        assert after["memories_trigram"] == 2_000_000  # a value set before is kept
        assert after["memories_fts"] in (None, 1 << 20) and before["memories_fts"] is None  # FTS5's default
        for table, query in (("memories_fts", "billing"), ("memories_words", "note"), ("memories_trigram", "cache_")):
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query,)).fetchone()[0] == 600
        found = conn.execute("SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH 'flaky_cache_599'")
        assert len(found.fetchall()) == 1


def test_a_rolled_back_bulk_write_leaves_nothing_behind(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        before = _hash_bytes(store)
        with pytest.raises(RuntimeError), store.db.bulk_load():
            store.db.insert_many(_mems(1, 50))
            raise RuntimeError("stop")
        assert _hash_bytes(store) == before and store.count() == 0
        store.db.insert_many(_mems(1, 5))  # the store still writes, and indexes, afterwards
        conn = store.db.conn
        assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'billing'").fetchone()[0] == 5
