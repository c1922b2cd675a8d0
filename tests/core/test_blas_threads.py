"""A query's vector products run on one BLAS thread: the pool is one thread inside, restored when the last of
overlapping users leaves, and a search's cosines are bit for bit those of numpy's product on its default threads."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

from codememory import Store
from codememory.core.blas_threads import one_blas_thread
from codememory.embedding.vectors import VectorIndex, to_blob


def _blas_threads() -> list[int]:
    return [int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_pool_restored_after_the_last_overlapping_user() -> None:
    before = _blas_threads()
    assert before, "numpy's BLAS was not found"
    inside = threading.Event()
    leave = threading.Event()
    seen: list[list[int]] = []

    def other_search() -> None:
        with one_blas_thread():
            inside.set()
            leave.wait(10)
            seen.append(_blas_threads())

    worker = threading.Thread(target=other_search)
    with one_blas_thread():
        assert _blas_threads() == [1] * len(before)
        worker.start()
        assert inside.wait(10)
        with one_blas_thread():  # nested in the same thread
            assert _blas_threads() == [1] * len(before)
    # this thread left first: the other one is still inside, so the pool stays at one thread
    assert _blas_threads() == [1] * len(before)
    leave.set()
    worker.join(10)
    assert seen == [[1] * len(before)]
    assert _blas_threads() == before


def test_a_scan_on_one_thread_gives_the_cosines_of_the_default_product(tmp_path: Path) -> None:
    dim, n = 384, 600  # well over the size at which OpenBLAS splits a product across its threads
    store = Store.init(tmp_path)[0]
    try:
        dump = tmp_path / "m.jsonl"
        dump.write_text("".join(json.dumps({"text": f"memory {i} on topic {i % 13}"}) + "\n" for i in range(n)))
        assert store.import_(dump).added == n
        rows = store.db.conn.execute("SELECT pk, text FROM memories ORDER BY pk").fetchall()
        rng = np.random.default_rng(7)
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.db.save_embeddings("unit", [(pk, t, to_blob(v), dim) for (pk, t), v in zip(rows, vectors, strict=True)])
        index = VectorIndex(store.db, "unit", None, ann_threshold=10**9)  # exact: every row scanned
        pks = np.array([pk for pk, _ in rows])
        stored = index.vectors(pks.tolist())  # as kept (float16 in the store)
        matrix = np.vstack([stored[pk] for pk in pks.tolist()])
        for query in vectors[[5, 300, 599]]:
            expected = matrix @ query  # default threads, outside any limit
            best = np.argsort(-expected, kind="stable")[:20]
            hits = index.search(query, 20, store.filters())
            assert [pk for pk, _ in hits] == pks[best].tolist()
            assert [cos for _, cos in hits] == expected[best].tolist()  # the same float32 values, to the bit
    finally:
        store.close()


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    """Nothing here may leave the pool limited for the tests after it."""
    before = _blas_threads()
    yield
    assert _blas_threads() == before
