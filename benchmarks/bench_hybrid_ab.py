"""Hybrid search and proactive retrieval on a large store, before (another source tree) against now, in one run:
two long-lived worker processes over the same store, one job to each in turn (the order alternating every round),
so that load on a shared machine hits both alike; hybrid search's floor (bench_scale.py's: one query embedding, the
vector index's top 50, one BM25 query) is timed in the same rounds. Each job reports wall and CPU milliseconds
(the CPU time moves less with the machine's load), and the ids it returned, which must be the same on both sides.

    python benchmarks/bench_hybrid_ab.py --base-src /tmp/base/src --project benchmarks/.work/scale/store-100000

`--base-src` is the `src` folder of the tree to compare against (`git archive main src | tar -x -C /tmp/base`).
The store is only read (searches and retrievals with `touch=False`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import pct
from bench_retrieval import make_requests
from bench_scale import phrases

ARMS = ("search/base", "search/now", "floor/now", "retrieve/base", "retrieve/now")


def worker(project: Path) -> None:
    """Answer jobs read from standard input, one JSON line each: search, retrieve or floor."""
    from codememory import Store
    from codememory.embedding.vector_files import VectorFiles
    from codememory.text.query import parse_query

    store = Store.open(project)
    embedder = store.semantic.embedder()
    index = store.semantic.index()
    assert embedder is not None and index is not None, store.semantic.reason
    index.refresh()
    files = VectorFiles(store.root / ".codememory" / "cache", embedder.name)
    meta = files.read_meta()
    graph = files.open_ann(meta) if meta is not None else None
    mapped = files.map_rows(meta) if meta is not None else None

    def floor(q: str) -> None:
        qv = embedder.embed_query(q)
        if graph is not None:
            graph[0].search(qv, 50)
        elif mapped is not None:
            (mapped.matrix @ qv).argpartition(-50)[-50:]
        store.db.conn.execute(
            "SELECT rowid, bm25(memories_fts) AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s LIMIT 50",
            (parse_query(q).keyword_fts(),),
        ).fetchall()

    print("ready", flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        t0, c0 = time.perf_counter(), time.process_time()
        ids: list[str] = []
        if job["kind"] == "search":
            ids = [h.memory.id for h in store.search(job["q"], limit=10, touch=False).hits]
        elif job["kind"] == "retrieve":
            ids = [m.id for m in store.retrieve(job["phrases"], entities=job["entities"], touch=False).memories]
        else:
            floor(job["q"])
        took = {"ms": (time.perf_counter() - t0) * 1000, "cpu": (time.process_time() - c0) * 1000}
        print(json.dumps({**took, "ids": ids}), flush=True)


class Worker:
    def __init__(self, project: Path, src: str | None) -> None:
        env = dict(os.environ)
        if src:
            env["PYTHONPATH"] = src
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        if self.stdout.readline().strip() != "ready":
            sys.exit("a worker did not start")

    def ask(self, job: dict[str, Any]) -> dict[str, Any]:
        self.stdin.write(json.dumps(job) + "\n")
        self.stdin.flush()
        answer: dict[str, Any] = json.loads(self.stdout.readline())
        return answer

    def stop(self) -> None:
        self.stdin.close()
        self.proc.wait()


def run(project: Path, base_src: str, rounds: int, seed: int) -> dict[str, Any]:
    workers = {"base": Worker(project, base_src), "now": Worker(project, None)}
    rng = random.Random(seed)
    qs = phrases(2 * (rounds + 3), rng)
    requests = make_requests(rounds + 3, rng, set(qs))
    samples: dict[str, dict[str, list[float]]] = {arm: {"ms": [], "cpu": []} for arm in ARMS}
    same = {"search": 0, "retrieve": 0}
    load = [os.getloadavg()]
    for i in range(rounds + 3):
        jobs: list[tuple[str, str, dict[str, Any]]] = [
            ("base", "search", {"kind": "search", "q": qs[2 * i]}),
            ("now", "search", {"kind": "search", "q": qs[2 * i]}),
            ("now", "floor", {"kind": "floor", "q": qs[2 * i + 1]}),
            ("base", "retrieve", {"kind": "retrieve", "phrases": requests[i][0], "entities": requests[i][1]}),
            ("now", "retrieve", {"kind": "retrieve", "phrases": requests[i][0], "entities": requests[i][1]}),
        ]
        got = {}
        for side, kind, job in jobs if i % 2 else reversed(jobs):
            answer = got[(side, kind)] = workers[side].ask(job)
            if i >= 3:  # warm-up rounds
                samples[f"{kind}/{side}"]["ms"].append(answer["ms"])
                samples[f"{kind}/{side}"]["cpu"].append(answer["cpu"])
        for kind in same:
            same[kind] += got[("base", kind)]["ids"] == got[("now", kind)]["ids"]
    load.append(os.getloadavg())
    for w in workers.values():
        w.stop()
    out: dict[str, Any] = {"rounds": rounds, "load": [[round(x, 1) for x in v] for v in load], "same_ids": same}
    for arm, by in samples.items():
        out[arm] = {
            f"{unit}_{q}": round(statistics.median(v) if q == "p50" else pct(v, 95), 1)
            for unit, v in by.items()
            for q in ("p50", "p95")
        }
    floor = statistics.median(samples["floor/now"]["ms"])
    out["hybrid_over_floor"] = {
        side: round(statistics.median(samples[f"search/{side}"]["ms"]) / floor, 2) for side in ("base", "now")
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True, help="a store with vectors (bench_scale.py's)")
    parser.add_argument("--base-src", help="the src folder of the tree to compare against")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", help="also write the results as JSON to this file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.project)
        return
    if not args.base_src:
        parser.error("--base-src is required")
    results = {"command": " ".join(["python benchmarks/bench_hybrid_ab.py", *sys.argv[1:]])}
    results.update(run(args.project.resolve(), args.base_src, args.rounds, args.seed))
    print(json.dumps(results, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
