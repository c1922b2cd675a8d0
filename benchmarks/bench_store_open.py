"""Benchmark of opening a store: what every CLI call and hook process pays before doing anything.

`Database.open` on an existing 200-memory store, timed inside a fresh process (the first open of a process
is what a hook pays; the second shows the per-process cache). With `--cold`, the user's cached digest of
the expected schema (state folder, see store/schema.py) is removed before each run, so each process builds
the expected schema from the migrations in memory. Prints medians in milliseconds.

    .venv/bin/python benchmarks/bench_store_open.py [--runs 25] [--cold]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import sys, time
from pathlib import Path
from codememory.store.database import Database
path = Path(sys.argv[1])
t = time.perf_counter(); db = Database.open(path); first = time.perf_counter() - t; db.close()
t = time.perf_counter(); db = Database.open(path); second = time.perf_counter() - t; db.close()
print(first * 1000, second * 1000)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--cold", action="store_true", help="no cached schema digest: build it in each process")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    env = {**os.environ, "XDG_STATE_HOME": str(root / "state"), "XDG_CONFIG_HOME": str(root / "config")}
    seed = (
        "import sys\nfrom codememory import Store\ns, _ = Store.init(sys.argv[1])\n"
        "for i in range(200): s.add(f'memory {i} about topic {i % 17}')\ns.close()\n"
    )
    subprocess.run([sys.executable, "-c", seed, str(root)], check=True, env=env)
    firsts: list[float] = []
    seconds: list[float] = []
    for _ in range(args.runs):
        if args.cold:
            shutil.rmtree(root / "state" / "codememory" / "schema", ignore_errors=True)
        out = subprocess.run(
            [sys.executable, "-c", PROBE, str(root / ".codememory" / "memory.db")],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        first, second = map(float, out.split())
        firsts.append(first)
        seconds.append(second)
    cold = " (cold cache)" if args.cold else ""
    print(
        f"first open in a process: median {statistics.median(firsts):.2f} ms (min {min(firsts):.2f}); "
        f"second open: median {statistics.median(seconds):.2f} ms; runs={args.runs}{cold}"
    )
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
