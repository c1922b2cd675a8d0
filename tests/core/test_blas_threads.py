"""A query's vector products run on one BLAS thread even where numpy was imported before codememory (and OpenBLAS
took a thread per core): one thread inside, the pool restored when the last of overlapping users leaves, and the
products the same to the bit. In a fresh interpreter, since this one imported codememory (and its
OPENBLAS_NUM_THREADS=1) before numpy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
