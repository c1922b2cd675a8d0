"""Where a hybrid search's CPU goes: a copy of a store with vectors, fresh phrases, cProfile on the process's CPU
clock, and beside it the search against a bare query embedding, alternating.

    python benchmarks/research/hybrid_profile.py --project /tmp/copy-of-a-store [--searches 40]

Opening the store may migrate it: give it a copy of a store another run still needs.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_scale
from codememory import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    n = args.searches
    store = Store.open(args.project)
    qs = bench_scale.phrases(5 + 3 * n + 40, random.Random(args.seed))
    embedder = store.semantic.embedder()
    assert embedder is not None, store.semantic.reason
    for q in qs[:5]:
        store.search(q, limit=10, touch=False)
    whole, bare = [], []
    rest = qs[5:]
    for i in range(n + 20):  # a search and a bare embedding of another fresh phrase, in turn
        t0 = time.perf_counter()
        res = store.search(rest[2 * i], limit=10, touch=False)
        whole.append(time.perf_counter() - t0)
        if res.mode != "hybrid" or res.degraded:
            sys.exit(f"hybrid search degraded: {res.degraded_reason}")
        t0 = time.perf_counter()
        embedder.embed_query(rest[2 * i + 1])
        bare.append(time.perf_counter() - t0)
    print(
        f"p50 search {statistics.median(whole) * 1000:.1f} ms, p50 bare query embedding "
        f"{statistics.median(bare) * 1000:.1f} ms, load {os.getloadavg()}"
    )
    profile = cProfile.Profile(timer=time.process_time)
    profile.enable()
    for q in rest[2 * (n + 20) :]:
        store.search(q, limit=10, touch=False)
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(45)


if __name__ == "__main__":
    main()
