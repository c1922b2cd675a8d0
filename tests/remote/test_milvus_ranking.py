"""The organisation's memory on Milvus Lite, beyond the basics of test_milvus.py: the remote ranks and decides as the
local store does (ranker "local": Milvus's two legs and the hits' neighbouring turns, ordered and decided by the
local code), a publish with nothing changed rebuilds nothing (fingerprints in the cursor), a long-lived process
keeps one connection (and lets a Milvus Lite file go when idle), and a collection of the first schema is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from codememory.errors import RemoteUnavailable
from codememory.remote import cursor as cursors
from codememory.remote import milvus
from codememory.remote.org_search import search_remote
from codememory.remote.publish import publish
from codememory.remote.records import scan

pymilvus = pytest.importorskip("pymilvus", reason='the milvus extra: pip install -e ".[milvus]"')

pytestmark = [pytest.mark.default_model, pytest.mark.slow]

# One conversation of two sessions: the answer to "which database" is a turn that names no database word,
# found by the local recipe through its neighbours (the turns around it talk about the choice).
TURNS = [
    ("D1:1", "Ana: we need to pick the storage for the ledger service this week"),
    ("D1:2", "Ben: the candidates are Postgres and a document store, I benchmarked both"),
    ("D1:3", "Ana: and what did the numbers say about write throughput?"),
    ("D1:4", "Ben: the relational one held 4k inserts per second with the indexes on"),
    ("D1:5", "Ana: good, then we go with it and keep the schema migrations in the repo"),
    ("D1:6", "Ben: I will write the decision record tonight"),
    ("D2:1", "Ana: the payment retries failed again overnight"),
    ("D2:2", "Ben: exponential backoff with jitter, at most five attempts, should fix it"),
    ("D2:3", "Ana: also the webhook signature check rejects the staging events"),
    ("D2:4", "Ben: staging uses another signing secret, rotate it in the vault"),
]
QUERIES = ["which database did we choose for the ledger", "payment retries backoff", "webhook signing secret"]


@pytest.fixture
def published(tmp_path: Path, make_project: Any) -> tuple[Store, Path]:
    db = tmp_path / "org" / "org.db"
    db.parent.mkdir()
    project = make_project("ledger")
    source = tmp_path / "turns.jsonl"
    rows = [
        {"text": text, "source": where, "created_at": f"2026-03-0{where[1]}T10:00:{i:02d}"}
        for i, (where, text) in enumerate(TURNS)
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = Store.open(project)
    store.import_(source)
    store.config.remote.uri = str(db)
    done = publish(store)
    assert done.sent == len(TURNS)
    return store, db


def _remote_ids(store: Store, query: str, ranker: str) -> list[str]:
    store.config.remote.ranker = ranker
    hits, status = search_remote(store, query, limit=5, projects=["ledger"])
    assert status.ok and status.mode == "hybrid", status
    return [h.id for h in hits]


def test_remote_local_ranker_ranks_and_decides_as_the_local_store(published: tuple[Store, Path]) -> None:
    store, _db = published
    for query in QUERIES:
        local = [h.memory.id for h in store.search(query, mode="hybrid", limit=5, touch=False).hits]
        remote = _remote_ids(store, query, "local")
        # The same decision; the order of two close turns may differ, as the remote weighs the query's words alike
        # (it has no word statistics of the collection) where the local store weighs them by rarity.
        assert sorted(remote) == sorted(local) and remote, query
    # The question names no word of the answer ("the relational one held 4k inserts"): both keep the two turns that
    # talk about the choice ("database" is held by the turn naming Postgres, in both), hold back the rest instead of
    # padding with the nearest turns, and Milvus's own fusion (no decision) returns five.
    ids = {m.text: m.id for m in store.db.iter_all()}
    talk = {ids[text] for where, text in TURNS if where in ("D1:1", "D1:2")}
    assert set(_remote_ids(store, QUERIES[0], "local")) == talk
    assert store.search(QUERIES[0], mode="hybrid", limit=5, touch=False).held_back > 0
    assert len(_remote_ids(store, QUERIES[0], "rrf")) == 5
    store.close()


def test_publish_rebuilds_only_changed_rows(published: tuple[Store, Path]) -> None:
    store, _db = published
    cfg = store.config.remote
    model = store.semantic.model or ""
    cursor = cursors.load(store.root, milvus.display_uri(cfg.uri), cfg.collection, "ledger", model)
    assert len(cursor.seen) == len(TURNS)
    assert scan(store, "ledger", model, cursor.seen, cursor.sent).rebuilt == [], "nothing changed, nothing rebuilt"

    again = publish(store)
    assert (again.sent, again.deleted, again.unchanged, again.shared) == (0, 0, len(TURNS), len(TURNS))

    first, second = [m.id for m in store.db.iter_all()][:2]
    store.edit(first, tags=["storage"])
    store.db.set_personal([second], True)
    cursor = cursors.load(store.root, milvus.display_uri(cfg.uri), cfg.collection, "ledger", model)
    found = scan(store, "ledger", model, cursor.seen, cursor.sent)
    assert [o.memory_id for o in found.rebuilt] == [first] and found.kept_local == 1
    delta = publish(store)
    assert (delta.sent, delta.deleted, delta.kept_local, delta.shared) == (1, 1, 1, len(TURNS) - 1)
    assert publish(store).sent == 0
    store.close()


def test_a_kept_connection_is_reused_dropped_on_failure_and_released_when_idle(
    published: tuple[Store, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, db = published
    monkeypatch.setattr(milvus, "LITE_IDLE_SECONDS", 3600.0)  # never idle while reuse is checked
    milvus.reuse_connections()
    try:
        with milvus.connect(store.config.remote) as first:
            first.open()
        with milvus.connect(store.config.remote) as again:
            assert again is first, "the process keeps its connection"
            assert _remote_ids(store, QUERIES[1], "local"), "a search inside the block reuses it too"
        with pytest.raises(RemoteUnavailable), milvus.connect(store.config.remote) as failing:
            failing.rows("no_such_field == 1", 1)
        monkeypatch.setattr(milvus, "LITE_IDLE_SECONDS", 0.0)  # the timer set when this block ends fires at once
        with milvus.connect(store.config.remote) as fresh:
            assert fresh is not first, "a failed call drops the connection"
        (entry,) = milvus._pool.values()
        timer = entry.timer
        assert timer is not None, "a Milvus Lite connection is let go once idle"
        timer.join()  # idle: the Milvus Lite file is let go
        assert milvus._pool == {}
        probe = f"import pymilvus; print(pymilvus.MilvusClient({str(db)!r}).has_collection('codememory_memories'))"
        other = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert other.stdout.strip() == "True", other.stderr[-500:]
    finally:
        milvus.reuse_connections(False)
        store.close()


def test_a_collection_of_the_first_schema_is_refused(tmp_path: Path, make_project: Any) -> None:
    db = tmp_path / "old.db"
    client = pymilvus.MilvusClient(str(db))
    schema = client.create_schema(description=json.dumps({"schema": "codememory-1", "model": "m", "dim": 4}))
    schema.add_field("key", pymilvus.DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("dense", pymilvus.DataType.FLOAT_VECTOR, dim=4)
    old = {"codememory.schema": "codememory-1", "codememory.model": "m", "codememory.dim": "4"}
    client.create_collection("codememory_memories", schema=schema, properties=old)
    client.close()
    store = Store.open(make_project("old"))
    store.add("Payment retries use exponential backoff")
    store.config.remote.uri = str(db)
    with pytest.raises(RemoteUnavailable, match="first schema"):
        publish(store)
    store.close()
