"""The vector index stays out of the query's way, through the index and through a whole hybrid search: vectors
written after its graph are searched exactly (only they are read from the table) and never make a search rebuild
anything; a short answer from the graph never turns into a scan of the whole store; a second process maps the
persisted files instead of reading the table; and the move of the vectors into their own table (migration 11) keeps
every one of them.

Seeded random unit vectors stand in for a model's (the index is what is tested, not a model)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from codememory import Store
from codememory.embedding.vector_files import VectorFiles
from codememory.embedding.vector_rows import from_blob, to_blob
from codememory.embedding.vectors import VectorIndex
from codememory.store.database import Database
from codememory.store.migrations import apply
from support.page_cache import cached_share, evict

MODEL = "random-unit-vectors"
DIM = 384


def _unit(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    out: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def _add_memories(store: Store, n: int, start: int) -> list[tuple[int, str]]:
    dump = store.root / f"bulk-{start}.jsonl"
    dump.write_text(
        "".join(json.dumps({"text": f"memory number {start + i} about topic {i % 17}"}) + "\n" for i in range(n))
    )
    assert store.import_(dump).added == n
    return store.db.conn.execute("SELECT pk, text FROM memories WHERE pk > ? ORDER BY pk", (start,)).fetchall()


def _save(store: Store, rows: list[tuple[int, str]], vectors: npt.NDArray[np.float32]) -> None:
    store.db.save_embeddings(MODEL, [(pk, text, to_blob(v), DIM) for (pk, text), v in zip(rows, vectors, strict=True)])


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Store, Path, npt.NDArray[np.float32]]]:
    """A store of 600 memories with vectors and a built graph (threshold 100)."""
    rng = np.random.default_rng(30)
    store = Store.init(tmp_path)[0]
    rows = _add_memories(store, 600, 0)
    vectors = _unit(rng, len(rows))
    _save(store, rows, vectors)
    cache = store.root / ".codememory" / "cache"
    assert VectorIndex(store.db, MODEL, cache, ann_threshold=100).maintain()
    yield store, cache, vectors
    store.close()


def _graph_file(cache: Path) -> tuple[str, int]:
    meta = VectorFiles(cache, MODEL).read_meta()
    assert meta is not None and meta.ann_file
    return meta.ann_file, (cache / "vectors" / meta.ann_file).stat().st_ino


@pytest.mark.slow
def test_vectors_past_the_graph_never_rebuild_it_inside_a_search(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    store, cache, _ = indexed
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    index.search(_unit(np.random.default_rng(1), 1)[0], 10, store.filters())
    graph = _graph_file(cache)
    assert index.stats["rows_read"] == 0  # the rows came from the mapped files, not the table

    new_rows = _add_memories(store, 2_500, 600)  # more than the old snapshot's 2,000-vector limit
    new_vectors = _unit(np.random.default_rng(2), len(new_rows))
    _save(store, new_rows, new_vectors)
    for i in (0, 1_234, 2_499):  # a new vector is found (scored exactly among the rows after the graph)
        hits = index.search(new_vectors[i], 5, store.filters())
        assert hits[0][0] == new_rows[i][0] and hits[0][1] == pytest.approx(1.0, abs=1e-3)
        assert index.last_method == "ann"
    assert index.stats["ann_builds"] == 0 and index.stats["ann_extends"] == 0
    assert _graph_file(cache) == graph  # the very same graph file: nothing was rebuilt or rewritten
    assert index.stats["rows_read"] == 2_500  # only the delta was read from the table, once
    assert index.stats["rows_appended"] == 2_500  # and appended to the files for every later process

    assert index.maintain()  # the upkeep (the daemon's job) extends the graph, outside any search
    assert index.stats["ann_extends"] == 1 and index.stats["ann_builds"] == 0
    assert _graph_file(cache)[0] != graph[0]
    hits = index.search(new_vectors[7], 5, store.filters())
    assert hits[0][0] == new_rows[7][0]


@pytest.mark.slow
def test_a_short_answer_from_the_graph_never_scans_the_store(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    store, cache, vectors = indexed
    live = list(range(1, 601, 40))  # 15 memories stay live; the graph's nearest answers are mostly archived
    store.db.conn.execute(f"UPDATE memories SET archived = 1 WHERE pk NOT IN ({','.join(map(str, live))})")
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    query = vectors[300]  # an archived memory's vector: its neighbours are not the live ones
    index.search(query, 1, store.filters())  # settle what a first search reads (the counters, the files)
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        hits = index.search(query, 10, store.filters())
    finally:
        store.db.conn.set_trace_callback(None)
    exact = sorted(((pk, float(vectors[pk - 1] @ query)) for pk in live), key=lambda kv: -kv[1])[:10]
    assert [pk for pk, _ in hits] == [pk for pk, _ in exact]
    assert index.stats["full_scans"] == 0 and index.last_method == "ann"
    assert not [s for s in statements if "embedding_vectors" in s or "FROM embeddings" in s]  # no vector read
    assert len(statements) <= 8  # the counter, a few live checks, the filter's members: not one per row


@pytest.mark.slow
def test_a_search_asked_again_reads_nothing_again_until_the_store_changes(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    """A retrieval asks for a phrase's neighbours twice (with and without its tool phrases, a few more the second
    time): the rows re-scored and the filter checks of the first are not read again, and the answers are the exact
    ones, until a memory or a vector changes."""
    store, cache, vectors = indexed
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    query, filters = vectors[100], store.filters()
    first = index.search(query, 10, filters)
    mapped = index._mapped
    assert mapped is not None and mapped.rows_read > 0 and first[0][0] == 101
    read_before = mapped.rows_read
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        again = index.search(query, 10, filters)
    finally:
        store.db.conn.set_trace_callback(None)
    assert again == first
    assert mapped.rows_read == read_before  # the same rows: none read from the file again
    assert not [s for s in statements if "FROM memories" in s]  # the same memories: no filter check again
    in_file = np.asarray(mapped.matrix[index._positions.rows([pk for pk, _ in again])]) @ query  # read the other way
    assert [s for _, s in again] == pytest.approx(in_file.tolist(), abs=1e-7)
    store.db.conn.execute("UPDATE memories SET archived = 1 WHERE pk = 101")
    after = index.search(query, 10, filters)
    assert [pk for pk, _ in after][:9] == [pk for pk, _ in first][1:]
    text = store.db.conn.execute("SELECT text FROM memories WHERE pk = 7").fetchone()[0]
    store.db.save_embeddings(MODEL, [(7, text, to_blob(query), DIM)])  # memory 7 now says exactly the query
    assert index.search(query, 10, filters)[0][0] == 7


@pytest.mark.slow
def test_a_second_process_reads_the_persisted_index(indexed: tuple[Store, Path, npt.NDArray[np.float32]]) -> None:
    store, cache, vectors = indexed
    script = (
        "import json, sys\n"
        "import numpy as np\n"
        "from codememory.store.database import Database\n"
        "from codememory.store.filters import Filters\n"
        "from codememory.embedding.vectors import VectorIndex\n"
        "db = Database.open(__import__('pathlib').Path(sys.argv[1]))\n"
        "index = VectorIndex(db, sys.argv[2], __import__('pathlib').Path(sys.argv[3]), ann_threshold=100)\n"
        "query = np.frombuffer(bytes.fromhex(sys.argv[4]), dtype=np.float32)\n"
        "hits = index.search(query, 3, Filters())\n"
        "print(json.dumps({'hits': [pk for pk, _ in hits], 'method': index.last_method, **index.stats}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(store.store_path), MODEL, str(cache), vectors[42].tobytes().hex()],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "CODEMEMORY_DAEMON_PORT": "1"},
    )
    seen = json.loads(done.stdout)
    assert seen["hits"][0] == 43 and seen["method"] == "ann"
    assert seen["rows_read"] == 0 and seen["ann_builds"] == 0  # mapped the files: nothing read, nothing built


@pytest.mark.slow
def test_a_forgotten_or_reembedded_memory_is_never_found_by_its_old_vector(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    store, cache, vectors = indexed
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    (gone_id,) = store.db.conn.execute("SELECT id FROM memories WHERE pk = 10").fetchone()
    store.forget([gone_id])
    assert 10 not in [pk for pk, _ in index.search(vectors[9], 5, store.filters())]
    moved = _unit(np.random.default_rng(5), 1)[0]
    text = store.db.conn.execute("SELECT text FROM memories WHERE pk = 20").fetchone()[0]
    store.db.save_embeddings(MODEL, [(20, text, to_blob(moved), DIM)])
    assert 20 not in [pk for pk, _ in index.search(vectors[19], 5, store.filters())]
    assert index.search(moved, 1, store.filters())[0][0] == 20
    assert index.cosines(moved, [20])[20] == pytest.approx(1.0, abs=1e-3)


def _version_10_store(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    apply(conn, 0, 10, "2026-11-01T00:00:00.000Z")
    conn.execute("COMMIT")
    return conn


def test_migration_moves_every_vector_into_its_own_table(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old = _version_10_store(path)
    rng = np.random.default_rng(11)
    vectors = _unit(rng, 50)
    for i in range(50):
        old.execute(
            "INSERT INTO memories(id, text, text_hash, created_at, updated_at) VALUES (?, ?, 'h', 't', 't')",
            (f"mem_{i:08x}", f"text {i}"),
        )
    # As version 10 wrote them: float32 in the row; a consolidation copied its source's sequence number.
    rows = [(i + 1, "m", DIM, f"hash{i}", i + 1, vectors[i].tobytes()) for i in range(49)]
    rows.append((50, "m", DIM, "hash49", 7, vectors[49].tobytes()))
    old.executemany("INSERT INTO embeddings VALUES (?, ?, ?, ?, ?, ?)", rows)
    old.execute("UPDATE counters SET value = 49 WHERE name = 'embedding_seq'")
    old.close()

    db = Database.open(path)
    try:
        assert db.schema_version() >= 11
        moved = db.vectors_for("m", list(range(1, 51)))
        assert len(moved) == 50
        for i in range(50):
            dim, blob = moved[i + 1]
            assert dim == DIM and len(blob) == 2 * DIM  # float16 now
            np.testing.assert_array_equal(from_blob(blob, dim), vectors[i].astype(np.float16).astype(np.float32))
        seqs = [r[0] for r in db.conn.execute("SELECT seq FROM embeddings ORDER BY memory_pk")]
        assert len(set(seqs)) == 50 and seqs[:49] == list(range(1, 50)) and seqs[49] == 50  # the copy renumbered
        assert db.embedding_counter() == 50
        hashes = dict(db.conn.execute("SELECT memory_pk, text_hash FROM embeddings"))
        assert hashes[1] == "hash0" and hashes[50] == "hash49"
        db.conn.execute("DELETE FROM memories WHERE pk = 3")  # a vector leaves with its memory
        assert db.conn.execute("SELECT COUNT(*) FROM embedding_vectors").fetchone()[0] == 49
    finally:
        db.close()


@pytest.mark.slow
def test_upkeep_drops_the_rows_of_forgotten_memories(indexed: tuple[Store, Path, npt.NDArray[np.float32]]) -> None:
    store, cache, vectors = indexed
    ids = [r[0] for r in store.db.conn.execute("SELECT id FROM memories WHERE pk > 300 ORDER BY pk")]
    store.forget(ids)
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    before = VectorFiles(cache, MODEL).read_meta()
    assert before is not None and before.rows == 600
    assert index.maintain()
    after = VectorFiles(cache, MODEL).read_meta()
    assert after is not None and after.generation == before.generation + 1 and after.rows == 300
    assert index.search(vectors[120], 1, store.filters())[0][0] == 121
    assert not list((cache / "vectors").glob(f"*.{before.generation}.vec"))  # the old rows' file is gone


@pytest.mark.slow
@pytest.mark.default_model
def test_a_whole_hybrid_search_past_the_graph_neither_builds_nor_scans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through `Store.search` (keywords, session context, re-scoring and all) with the default model: the
    query is embedded for real, the memories' vectors are random ones filed under the model's name."""
    monkeypatch.setenv("CODEMEMORY_SEARCH_ANN_THRESHOLD", "100")
    rng = np.random.default_rng(31)

    def keyword_only_import(n: int, start: int) -> list[tuple[int, str]]:
        with monkeypatch.context() as env:  # another writer without the model, as a CLI import beside a daemon
            env.setenv("CODEMEMORY_EMBEDDING_PROVIDER", "none")
            with Store.init(tmp_path)[0] as writer:
                return _add_memories(writer, n, start)

    first = keyword_only_import(600, 0)
    with Store.open(tmp_path) as store:
        model = store.semantic.model
        assert model is not None
        store.db.save_embeddings(
            model, [(pk, text, to_blob(v), DIM) for (pk, text), v in zip(first, _unit(rng, 600), strict=True)]
        )
        assert store.semantic.maintain()
        cache = store.root / ".codememory" / "cache"
        meta = VectorFiles(cache, model).read_meta()
        assert meta is not None and meta.ann_file
        graph = (cache / "vectors" / meta.ann_file).stat().st_ino
        new = keyword_only_import(2_500, 600)
        vectors = _unit(rng, 2_500)
        store.db.save_embeddings(
            model, [(pk, text, to_blob(v), DIM) for (pk, text), v in zip(new, vectors, strict=True)]
        )
        index = store.semantic.index()
        assert index is not None
        before = dict(index.stats)
        result = store.search("memory number 1234 about topic 10", touch=False)
        assert (result.mode, result.degraded) == ("hybrid", False)
        done = {k: v - before[k] for k, v in index.stats.items()}
        assert done["ann_builds"] == 0 and done["ann_extends"] == 0 and done["full_scans"] == 0
        assert done["rows_read"] == 2_500  # the vectors past the graph, nothing more
        assert (cache / "vectors" / meta.ann_file).stat().st_ino == graph

        live = [pk for pk, _ in first[::40]]  # the graph's nearest answers are now mostly archived: a short answer
        store.db.conn.execute(f"UPDATE memories SET archived = 1 WHERE pk NOT IN ({','.join(map(str, live))})")
        before = dict(index.stats)
        result = store.search("memory number 1234 about topic 10", touch=False, show_held_back=True)
        assert result.hits and {h.memory.id for h in result.hits} <= {m.id for m in store.db.get_by_pks(live).values()}
        assert index.stats["full_scans"] == before["full_scans"] and index.last_method == "ann"


def test_an_index_out_of_the_page_cache_is_read_back_in_one_pass_before_searches_use_it(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    store, cache, vectors = indexed
    used = sorted(p for p in (cache / "vectors").iterdir() if p.suffix in (".vec", ".pks", ".usearch"))
    assert {p.suffix for p in used} == {".vec", ".pks", ".usearch"}
    evict(used)
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    assert index.in_memory() is False  # sampled and found out: a pass is reading the files in
    work = index.reading
    assert work is not None and work.done.wait(60)
    assert [cached_share(p) for p in used] == [1.0] * len(used)
    assert index.in_memory() is True and index.reading is None
    # warming (the daemon, when it opens a store) starts the same pass without being asked by a search
    evict(used)
    warm = index.read_ahead()
    assert warm is not None and warm.done.wait(60)
    assert [cached_share(p) for p in used] == [1.0] * len(used)
    assert index.in_memory() is True
    found = index.search(vectors[7], 5, store.filters())
    assert found[0][0] == store.db.conn.execute("SELECT pk FROM memories ORDER BY pk LIMIT 1 OFFSET 7").fetchone()[0]
    assert index.last_method == "ann"


def test_files_the_cache_cannot_keep_are_read_once_and_then_faulted_in_not_read_again_and_again(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    """Under memory pressure the files are pushed out again as soon as a pass has read them: a probe after the pass
    must not start another pass and answer from keywords again (every request would be degraded while the daemon
    reads the whole index again and again); searches fault in what they need, as without a read-ahead."""
    store, cache, vectors = indexed
    used = sorted(p for p in (cache / "vectors").iterdir() if p.suffix in (".vec", ".pks", ".usearch"))
    evict(used)
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    assert index.in_memory() is False
    work = index.reading
    assert work is not None and work.done.wait(60)
    evict(used)  # out again before any search used them
    assert index.in_memory() is True  # the pass is over: the vectors are used, faulted in where they are out
    assert index.reading is None  # and nothing is read through again
    assert index.search(vectors[3], 1, store.filters())[0][1] == pytest.approx(1.0, abs=1e-3)


def test_a_read_ahead_reads_no_further_than_the_meta_says_whatever_the_files_length(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]],
) -> None:
    """The folder is untrusted (it may be committed with the project): a row file longer than its meta says (a
    crashed writer's leftovers, or a huge sparse file planted there) is probed and read only as far as the rows
    the meta counts, never whole (while a pass runs, the daemon answers from keywords)."""
    store, cache, vectors = indexed
    used = sorted(p for p in (cache / "vectors").iterdir() if p.suffix in (".vec", ".pks", ".usearch"))
    sizes = sum(p.stat().st_size for p in used)
    rows = next(p for p in used if p.suffix == ".vec")
    os.truncate(rows, rows.stat().st_size + (64 << 20))  # 64 MiB of holes after the rows
    evict(used)
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    assert index.in_memory() is False
    work = index.reading
    assert work is not None and work.done.wait(60)
    assert work.bytes_read == sizes
    assert index.search(vectors[5], 1, store.filters())[0][1] == pytest.approx(1.0, abs=1e-3)


def test_a_read_ahead_never_reads_through_a_link_out_of_the_folder(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]], tmp_path: Path
) -> None:
    """A cloned project's cache folder may hold links: the probe and the read-ahead open nothing through them (the
    file a link points at stays out of the page cache), and nothing fails."""
    store, cache, _ = indexed
    folder = cache / "vectors"
    rows = next(p for p in folder.iterdir() if p.suffix == ".vec")
    outside = tmp_path / "outside.bin"
    rows.rename(outside)
    rows.symlink_to(outside)
    evict([outside])
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    index.in_memory()
    work = index.reading or index.read_ahead(known_out=True)
    assert work is not None and work.done.wait(60)
    assert cached_share(outside) < 0.1


def test_a_meta_claiming_absurd_sizes_is_read_as_far_as_the_files_go_and_nothing_fails(
    indexed: tuple[Store, Path, npt.NDArray[np.float32]], caplog: pytest.LogCaptureFixture
) -> None:
    """The meta is untrusted too: row counts no file could hold (past what an offset can say) make the read-ahead
    read the files as far as they go, with no error logged, and the search rebuilds from the table."""
    store, cache, vectors = indexed
    meta_path = VectorFiles(cache, MODEL).meta_path
    meta = json.loads(meta_path.read_text())
    meta.update(rows=10**17, ann_rows=10**17)
    meta_path.write_text(json.dumps(meta))
    used = sorted(p for p in (cache / "vectors").iterdir() if p.suffix in (".vec", ".pks", ".usearch"))
    index = VectorIndex(store.db, MODEL, cache, ann_threshold=100)
    work = index.read_ahead(known_out=True)
    assert work is not None and work.done.wait(60)
    assert work.bytes_read == sum(p.stat().st_size for p in used)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert index.search(vectors[9], 1, store.filters())[0][1] == pytest.approx(1.0, abs=1e-3)
