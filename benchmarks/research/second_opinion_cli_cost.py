"""The second opinion's cost in `codememory search`: a process per search, with and without it, alternating.

    python benchmarks/research/second_opinion_cli_cost.py PROJECT_DIR QUERY... [--rounds 8]

PROJECT_DIR holds a store built with the default model (a copy: searches with the second opinion keep their
candidates' second vectors in it). One warm-up search per query with it on keeps those vectors, as a store that has
been searched before has them; then every round runs each query once with `CODEMEMORY_SECOND_MODEL=0` and once
without (the default, on), the order alternating, and the medians and their ratio are printed. `--against SRC`:
instead, both on, once with another checkout's `src` first on `PYTHONPATH` (e.g. main's) and once with this one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CLI = Path(sys.executable).with_name("codememory")


AGAINST = ""  # --against SRC: the "without" arm runs that src, the second opinion on


def timed(project: Path, query: str, second: bool) -> float:
    env = dict(os.environ)
    env.pop("CODEMEMORY_SECOND_MODEL", None)
    if not second and AGAINST:
        env["PYTHONPATH"] = AGAINST
    elif not second:
        env["CODEMEMORY_SECOND_MODEL"] = "0"
    start = time.perf_counter()
    subprocess.run(
        [str(CLI), "--project", str(project), "search", query, "--json"], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("queries", nargs="+")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--against", default="", help="another checkout's src, timed against this one's")
    args = parser.parse_args()
    global AGAINST
    AGAINST = args.against
    for q in args.queries:
        timed(args.project, q, True)
    on: list[float] = []
    off: list[float] = []
    for n in range(args.rounds):
        for i, q in enumerate(args.queries):
            first_on = (n + i) % 2 == 0
            for second in (first_on, not first_on):
                (on if second else off).append(timed(args.project, q, second))
    a, b = statistics.median(off) * 1000, statistics.median(on) * 1000
    arms = ("against", "this tree") if AGAINST else ("without", "with")
    print(f"{len(on)} pairs: median {arms[0]} {a:.0f} ms, {arms[1]} {b:.0f} ms, ratio {b / a:.3f}")


if __name__ == "__main__":
    main()
