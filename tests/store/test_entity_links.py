"""An import's entity links: written for a whole batch with each name's id read once, they are the rows the
per-link statement it replaced (`SELECT ?, id FROM entities WHERE name = ?`) wrote, on a real store."""

from __future__ import annotations

from pathlib import Path

from codememory import Store
from codememory.core.model import Memory


def _mems(n: int) -> list[Memory]:
    return [Memory(id=f"mem_{i:08x}", text=f"note {i}", created_at="x", updated_at="x") for i in range(1, n + 1)]


def _links(store: Store) -> list[tuple[str, str, str]]:
    rows = store.db.conn.execute(
        "SELECT m.id, e.name, e.type FROM memory_entities me JOIN memories m ON m.pk = me.memory_pk "
        "JOIN entities e ON e.id = me.entity_id ORDER BY m.pk, e.name"
    )
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def test_batch_links_are_the_per_link_statements_rows(tmp_path: Path) -> None:
    names = ["postgresql", "Postgresql", "src/app.py", "ECONNREFUSED", "日本語", "retry_policy", "x" * 300]
    stores = []
    for name in ("batch", "one_by_one"):
        (tmp_path / name).mkdir()
        store, _ = Store.init(tmp_path / name)
        pks = store.db.insert_many(_mems(40))
        # one entity already known under another type: neither way changes its type
        store.db.conn.execute("INSERT INTO entities(name, type) VALUES ('postgresql', 'database')")
        items = [
            (pk, [(names[(pk * k) % len(names)], "tool" if k % 2 else "file") for k in range(1, pk % 6)]) for pk in pks
        ]
        items[3] = (items[3][0], [*items[3][1], *items[3][1]])  # a name twice for one memory: one link
        if name == "batch":
            store.db.add_entities(items, unmark=False)
        else:  # the statements add_entities ran before: the same entity rows, a sub-select per link
            conn = store.db.conn
            named = {entity: (entity, kind) for _, found in items for entity, kind in found}
            conn.executemany(
                "INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", named.values()
            )
            conn.executemany(
                "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) SELECT ?, id FROM entities WHERE name = ?",
                [(pk, entity) for pk, found in items for entity, _ in found],
            )
        stores.append(store)
    batch, one_by_one = (_links(s) for s in stores)
    assert batch == one_by_one
    assert len(batch) >= 60
    assert any(kind == "database" for _, entity, kind in batch if entity == "postgresql")
    for s in stores:
        s.close()
