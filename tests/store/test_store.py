"""The SQLite store itself: pragmas, migrations, integrity, concurrency, and forgetting for real."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from codememory import InvalidInput, NotFound, Store, StoreNotFound, StoreUnusable
from codememory.store.migrations import LATEST, MIGRATIONS


def db_file(root: Path) -> Path:
    return root / ".codememory" / "memory.db"


def test_init_creates_wal_store_with_recorded_migrations(tmp_path: Path) -> None:
    store, created = Store.init(tmp_path)
    store.close()
    assert created
    assert (tmp_path / ".codememory" / ".gitignore").read_text().count("wal") >= 1
    conn = sqlite3.connect(db_file(tmp_path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [number for number, *_ in MIGRATIONS]
    again, created_again = Store.init(tmp_path)
    again.close()
    assert not created_again


def test_open_sets_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    with Store.open(tmp_path) as store:
        assert store.db.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        assert store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_missing_store_says_run_init(tmp_path: Path) -> None:
    with pytest.raises(StoreNotFound, match="codememory init"):
        Store.open(tmp_path)


def test_newer_schema_is_refused_clearly(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    conn = sqlite3.connect(db_file(tmp_path))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    with pytest.raises(StoreUnusable, match="newer than this codememory"):
        Store.open(tmp_path)


def test_corrupt_file_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / ".codememory").mkdir()
    db_file(tmp_path).write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreUnusable, match="corrupt"):
        Store.open(tmp_path)


def test_old_store_is_migrated_on_open(tmp_path: Path) -> None:
    """A store from before any migration (user_version 0, empty) is brought up to date."""
    (tmp_path / ".codememory").mkdir()
    sqlite3.connect(db_file(tmp_path)).close()
    with Store.open(tmp_path) as store:
        assert store.db.schema_version() == LATEST
        store.add("migrated store works")
        assert store.search("migrated").hits


def test_tags_are_normalised_and_shared(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        a = store.add("first", tags="Docker, CI ,docker").memory
        b = store.add("second", tags=["#ci", "Build Tools"]).memory
        assert a.tags == ["docker", "ci"]
        assert store.get(b.id).tags == ["build-tools", "ci"]
        assert store.db.conn.execute("SELECT count(*) FROM tags").fetchone()[0] == 3


def test_add_validates_fields(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        with pytest.raises(InvalidInput, match="10,001 characters; the limit is 10,000"):
            store.add("x" * 10_001)
        with pytest.raises(InvalidInput, match="empty"):
            store.add("   \n")
        with pytest.raises(InvalidInput, match="importance"):
            store.add("x", importance=1.5)
        with pytest.raises(InvalidInput, match="in the past"):
            store.add("x", expires="yesterday")
        with pytest.raises(NotFound):
            store.get("mem_00000000")
        assert store.add("y" * 10_000).created


def test_given_entities_join_those_found_in_the_text(tmp_path: Path) -> None:
    store, _ = Store.init(tmp_path)
    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    with store:
        added = store.add(
            "The cart total is cached for a minute.",
            entities=["Postgres", "CartService", "two words here", secret, "src/cart/total.py"],
        )
        got = {e.name: e.type for e in store.relations(added.memory.id).entities}
    assert got["postgresql"] == "database"  # recognised by name
    assert got["CartService"] == "identifier"  # one identifier-like word, kept as given
    assert got["src/cart/total.py"] == "file"
    assert "two words here" not in got and not any(secret[:8] in name for name in got)


def test_identical_text_is_stored_once(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        first = store.add("Use ruff for linting")
        second = store.add("Use ruff for linting")
        assert first.created and not second.created
        assert second.memory.id == first.memory.id
        assert second.memory.access_count == 1
        assert store.count() == 1


def test_forget_removes_text_from_indexes_and_file(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        keep = store.add("keep this ordinary memory").memory.id
        secret = store.add("zanzibarquokka is the staging codename").memory.id
        store.search("zanzibarquokka")
        forgotten, unknown = store.forget([secret, "mem_00000000"])
        assert forgotten == [secret] and unknown == ["mem_00000000"]
        conn = store.db.conn
        for table in ("memories_fts", "memories_words", "memories_trigram"):
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH 'zanzibarquokka'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM memories_vocab WHERE term = 'zanzibarquokka'").fetchone()[0] == 0
        assert store.search("zanzibarquokka", fuzzy=True).hits == []
        assert store.get(keep).text.startswith("keep")
    raw = b"".join(p.read_bytes() for p in (tmp_path / ".codememory").glob("memory.db*"))
    assert b"zanzibarquokka" not in raw
    assert b"anzibarquok" not in raw


def test_archive_and_restore(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        mid = store.add("archivable memory").memory.id
        assert store.archive([mid]) == ([mid], [])
        assert store.search("archivable").hits == []
        assert store.list() == []
        store.archive([mid], archived=False)
        assert [h.memory.id for h in store.search("archivable").hits] == [mid]


def test_prune_expired_and_before(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        old = store.add("old memory").memory.id
        expired = store.add("expiring memory", expires="in 1 day").memory.id
        fresh = store.add("fresh memory").memory.id
        conn = store.db.conn
        conn.execute("UPDATE memories SET expires_at = '2001-01-01T00:00:00.000Z' WHERE id = ?", (expired,))
        conn.execute("UPDATE memories SET created_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", (old,))
        assert [m.id for m in store.prune(dry_run=True)] == [expired]
        assert store.count(include_expired=True) == 3
        assert [m.id for m in store.prune()] == [expired]
        assert {m.id for m in store.prune(before="2010-01-01")} == {old}
        assert [m.id for m in store.list()] == [fresh]


def _store_many(root: str, worker: int, count: int) -> None:
    with Store.open(root) as store:
        for i in range(count):
            store.add(f"worker {worker} memory {i} about concurrency", tags=[f"w{worker}", "load"])


@pytest.mark.slow
def test_eight_processes_store_concurrently_without_loss(tmp_path: Path) -> None:
    Store.init(tmp_path)[0].close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_store_many, args=(str(tmp_path), w, 100)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * 8
    conn = sqlite3.connect(db_file(tmp_path))
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 800
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'concurrency'").fetchone()[0] == 800
    assert conn.execute("SELECT count(DISTINCT memory_pk) FROM memory_tags").fetchone()[0] == 800
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_python_api_export_import_roundtrip(tmp_path: Path) -> None:
    src, dst = tmp_path / "a", tmp_path / "b"
    src.mkdir()
    dst.mkdir()
    with Store.init(src)[0] as a:
        a.add("exported decision", category="decision", tags=["x"], source="file:README.md", entered_by="me")
        a.add("expiring one", expires="in 3 days", importance=0.9)
        out = tmp_path / "dump.jsonl"
        assert a.export(out) == 2
        originals = {m.id: m.to_dict() for m in a.list(limit=10)}
    with Store.init(dst)[0] as b:
        report = b.import_(out)
        assert (report.added, report.skipped_existing) == (2, 0)
        assert b.import_(out).added == 0
        imported = {m.id: m.to_dict() for m in b.list(limit=10)}
        # every field kept, except where it came from: this store got them from the file
        assert {i: {**d, "provenance": None} for i, d in imported.items()} == {
            i: {**d, "provenance": None} for i, d in originals.items()
        }
        assert {d["provenance"]["label"] for d in imported.values()} == {"imported from dump.jsonl"}
        assert {d["provenance"]["label"] for d in originals.values()} == {"by the user"}


def test_import_without_ids_dedups_within_the_file(tmp_path: Path) -> None:
    dump = tmp_path / "noids.jsonl"
    dump.write_text('{"text": "same words"}\n{"text": "same words"}\n{"text": "other words"}\n')
    with Store.init(tmp_path)[0] as store:
        report = store.import_(dump)
        assert (report.added, report.skipped_existing) == (2, 1)
        assert store.import_(dump).added == 0
        assert store.count() == 2


def test_bulk_import_indexes_and_tags_every_row(tmp_path: Path) -> None:
    dump = tmp_path / "bulk.jsonl"
    lines = [
        f'{{"id": "mem_{i:08x}", "text": "bulk row {i} about widgets", "tags": ["bulk", "t{i % 3}"]}}'
        for i in range(500)
    ]
    dump.write_text("\n".join(lines) + "\n")
    with Store.init(tmp_path)[0] as store:
        assert store.import_(dump).added == 500
        conn = store.db.conn
        assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'widgets'").fetchone()[0] == 500
        assert store.count(tags="bulk,t1") == len([i for i in range(500) if i % 3 == 1])
        assert store.get("mem_00000007").tags == ["bulk", "t1"]


def test_export_import_keeps_links(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    src, _ = Store.init(tmp_path / "a")
    with src:
        old = src.add("Retries use a fixed 1 s delay.").memory.id
        new = src.add("Retries back off exponentially, capped at 30 s.").memory.id
        src.link(new, old, "supersedes")
        other = src.add("The payment worker retries five times.").memory.id
        src.link(other, new, "refines")
        dump = tmp_path / "dump.jsonl"
        src.export(dump)
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert {(r["id"], link["to"], link["type"]) for r in lines for link in r.get("links", [])} == {
        (new, old, "supersedes"),
        (other, new, "refines"),
    }
    dst, _ = Store.init(tmp_path / "b")
    with dst:
        dst.import_(dump)
        dst.import_(dump)  # again: nothing changes
        out = {(d, i, t) for d, i, t, _ in dst.db.links_of(dst.db.pk_of(new) or 0)}
        assert out == {("out", old, "supersedes"), ("in", other, "refines")}
        assert dst.get(old).superseded_by == new
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "x", "links": [{"to": old, "type": "likes"}]}) + "\n")
    with Store.open(tmp_path / "b") as store, pytest.raises(InvalidInput, match="unknown link type"):
        store.import_(bad)
