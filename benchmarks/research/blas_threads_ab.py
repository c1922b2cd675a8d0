"""A search's vector products on one BLAS thread against OpenBLAS's default thread count, in one process, the two
arms alternating round by round: numpy is imported before codememory here (as in the benchmarks' peer worker), so
OpenBLAS starts with a thread per core and only the search's own limit (core/blas_threads.py) brings it to one.
Two measures per arm: the ranking alone (the phrase's vector embedded just before, taken from the query cache) and
a whole search of a fresh phrase; wall and CPU milliseconds (the CPU clock counts every thread of the process).

    python benchmarks/research/blas_threads_ab.py --project /tmp/copy-of-a-store [--rounds 60]

Opening the store may migrate it: give it a copy of a store another run still needs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy  # noqa: F401  # first, on purpose: OpenBLAS reads its thread count when numpy loads it

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_scale
import codememory.embedding.vectors as vectors_module
import codememory.retrieval.hybrid as hybrid_module
from codememory import Store
from codememory.core.blas_threads import blas_threads

LIMITS = (hybrid_module.one_blas_thread, vectors_module.one_blas_thread)


def use_limit(on: bool) -> None:
    hybrid_module.one_blas_thread = LIMITS[0] if on else contextlib.nullcontext  # type: ignore[assignment]
    vectors_module.one_blas_thread = LIMITS[1] if on else contextlib.nullcontext  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    print(f"OpenBLAS threads outside a search: {blas_threads()}, load {os.getloadavg()}")
    store = Store.open(args.project)
    phrases = bench_scale.phrases(10 + 4 * args.rounds, random.Random(args.seed))
    for q in phrases[:5]:
        store.search(q, limit=10, touch=False)
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    fresh = iter(phrases[5:])
    for r in range(args.rounds):
        for on in (False, True) if r % 2 == 0 else (True, False):
            use_limit(on)
            arm = "one thread" if on else "default"
            for what in ("ranking", "search"):
                q = next(fresh)
                if what == "ranking":
                    store.semantic.embed_query(q)  # into the query cache: the search below only ranks
                t, c = time.perf_counter(), time.process_time()
                store.search(q, limit=10, touch=False)
                wall.setdefault(f"{what}, {arm}", []).append(time.perf_counter() - t)
                cpu.setdefault(f"{what}, {arm}", []).append(time.process_time() - c)
    use_limit(True)
    for key in sorted(wall):
        print(
            f"{key:22s} wall p50 {statistics.median(wall[key]) * 1000:6.1f} ms, "
            f"CPU p50 {statistics.median(cpu[key]) * 1000:6.1f} ms"
        )
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
