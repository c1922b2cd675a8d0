"""A query's vector products run on one BLAS thread even where numpy was imported before codememory (and OpenBLAS
took a thread per core): one thread inside, the pool restored when the last of overlapping users leaves, and the
products the same to the bit; searches starting together all find OpenBLAS, a failing one gives the threads back, a
user's own OPENBLAS_NUM_THREADS is kept, and a real vector index search is on one thread while it runs (observed from
SQLite's trace callback). In a fresh interpreter, since this one imported codememory (and its
OPENBLAS_NUM_THREADS=1) before numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, threading
import numpy as np  # first: OpenBLAS starts with its default thread count
from codememory.core.blas_threads import blas_threads, one_blas_thread

out = {"before": blas_threads()}
inside, leave, seen = threading.Event(), threading.Event(), []

def other_search():
    with one_blas_thread():
        inside.set()
        leave.wait(10)
        seen.append(blas_threads())

worker = threading.Thread(target=other_search)
with one_blas_thread():
    out["inside"] = blas_threads()
    worker.start()
    inside.wait(10)
    with one_blas_thread():
        out["nested"] = blas_threads()
out["first_left"] = blas_threads()  # the other thread is still inside
leave.set()
worker.join(10)
out["other"] = seen
out["after"] = blas_threads()

rng = np.random.default_rng(7)
matrix = rng.standard_normal((3000, 384)).astype(np.float32)  # well over where OpenBLAS splits a product
queries = rng.standard_normal((5, 384)).astype(np.float32)
default = [(matrix @ q).tobytes() for q in queries]
with one_blas_thread():
    single = [(matrix @ q).tobytes() for q in queries]
out["same_products"] = default == single
print(json.dumps(out))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS takes one thread on one core anyway")
def test_one_thread_inside_restored_after_the_last_user_and_the_same_products() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["before"] is not None and out["before"] > 1  # numpy's OpenBLAS was found, on its default threads
    assert out["inside"] == out["nested"] == out["first_left"] == 1
    assert out["other"] == [1]
    assert out["after"] == out["before"]
    assert out["same_products"]


def _run(script: str, **env_extra: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**env, **env_extra}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    return out


FIRST_USERS_AND_A_FAILING_SEARCH = r"""
import json, threading
import numpy as np
from codememory.core.blas_threads import blas_threads, one_blas_thread

start, seen = threading.Barrier(8), []
def first_user():
    start.wait()
    seen.append(blas_threads())  # all at once, before anyone has looked OpenBLAS up
users = [threading.Thread(target=first_user) for _ in range(8)]
for u in users: u.start()
for u in users: u.join(10)

before = blas_threads()
try:
    with one_blas_thread():
        inside = blas_threads()
        raise KeyError("a search that fails")
except KeyError:
    raised = True
print(json.dumps({"first_users": seen, "before": before, "inside": inside, "raised": raised, "after": blas_threads()}))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS takes one thread on one core anyway")
def test_searches_starting_together_all_find_openblas_and_a_failing_one_gives_the_threads_back() -> None:
    out = _run(FIRST_USERS_AND_A_FAILING_SEARCH)
    assert out["first_users"] == [out["before"]] * 8  # none saw "not looked up yet" as "no OpenBLAS"
    assert out["raised"] and out["inside"] == 1
    assert out["after"] == out["before"] and isinstance(out["before"], int) and out["before"] > 1


USERS_OWN_THREADS = r"""
import json
import numpy as np
from threadpoolctl import threadpool_info
from codememory.core.blas_threads import blas_threads, one_blas_thread

def openblas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]

with one_blas_thread():
    inside = openblas_threads()
print(json.dumps({"driven": blas_threads(), "inside": inside, "after": openblas_threads()}))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS takes one thread on one core anyway")
def test_an_openblas_thread_count_the_user_chose_is_kept_inside_a_search() -> None:
    pytest.importorskip("threadpoolctl")  # an observer independent of the module under test
    out = _run(USERS_OWN_THREADS, OPENBLAS_NUM_THREADS="2")
    assert out["driven"] is None
    assert out["inside"] == out["after"] == [2]


A_REAL_INDEX_SEARCH = r"""
import json, sys
from pathlib import Path
import numpy as np  # first, as a program embedding codememory may do
from codememory import Store
from codememory.core.blas_threads import blas_threads
from codememory.embedding.vector_rows import to_blob
from codememory.embedding.vectors import VectorIndex

store = Store.init(Path(sys.argv[1]))[0]
dump = Path(sys.argv[1]) / "bulk.jsonl"
dump.write_text("".join(json.dumps({"text": f"memory number {i} about topic {i % 7}"}) + "\n" for i in range(40)))
store.import_(dump)
rows = store.db.conn.execute("SELECT pk, text FROM memories ORDER BY pk").fetchall()
vectors = np.random.default_rng(3).standard_normal((len(rows), 384)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
store.db.save_embeddings("random", [(pk, text, to_blob(v), 384) for (pk, text), v in zip(rows, vectors)])
index = VectorIndex(store.db, "random", None, ann_threshold=10_000)
during = []  # the thread count each time the search asks SQLite something, i.e. while it is running
store.db.conn.set_trace_callback(lambda _sql: during.append(blas_threads()))
hits = index.search(vectors[5], 3, store.filters())
store.db.conn.set_trace_callback(None)
outside = []
store.db.conn.set_trace_callback(lambda _sql: outside.append(blas_threads()))
store.db.conn.execute("SELECT count(*) FROM memories").fetchone()
store.db.conn.set_trace_callback(None)
print(json.dumps({"top": hits[0][0] == rows[5][0], "during": during, "outside": outside, "after": blas_threads()}))
store.close()
"""


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS takes one thread on one core anyway")
def test_a_vector_index_search_runs_on_one_blas_thread_and_sql_outside_it_does_not(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", A_REAL_INDEX_SEARCH, str(tmp_path)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["top"]
    assert out["during"] and set(out["during"]) == {1}
    assert out["outside"] and all(n > 1 for n in out["outside"]) and out["after"] == out["outside"][0]
