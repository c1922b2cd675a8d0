"""Extraction time per session, this tree against a base commit, in one run (rules only, no model):

    .venv/bin/python benchmarks/bench_extraction_speed.py --base b6f7097
    .venv/bin/python benchmarks/bench_extraction_speed.py --base main --sets main heldout --rounds 5

The base commit's `src/` is exported with `git archive` into benchmarks/.work/speed/<commit>/. A worker process per
round and tree (alternating base, this tree, base, …, so a busy machine weighs on both alike) rebuilds the OpenCode
sessions of the sets from their recordings with that tree's own capture code, then times that tree's
`heuristic_candidates` on each session, every cache of the extraction and text modules cleared before each session (a
session is extracted once in real use). Prints the per-session p50 and the total of each tree and their ratio, in
wall time and in the process's CPU time (on a shared, loaded machine the CPU time is the steadier of the two).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work" / "speed"


def export(ref: str) -> Path:
    """`ref`'s src/ under WORK (once per commit)."""
    commit = subprocess.run(["git", "rev-parse", "--short", ref], cwd=REPO, capture_output=True, text=True, check=True)
    target = WORK / commit.stdout.strip()
    if not (target / "src" / "codememory").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(suffix=".tar") as tar:
            subprocess.run(["git", "archive", "-o", tar.name, ref, "src"], cwd=REPO, check=True)
            with tarfile.open(tar.name) as archive:
                archive.extractall(target, filter="data")
    return target / "src"


def worker(sets: list[str]) -> dict[str, Any]:
    """In a process whose `codememory` is the tree under test: the sessions' extraction times (ms)."""
    import importlib
    import pkgutil

    sys.path.insert(0, str(HERE))
    import codememory.extract as extract_pkg
    import codememory.text as text_pkg
    import extraction_corpus as corpus
    from codememory.capture.opencode_db import OpenCodeDB
    from codememory.extract.heuristic import heuristic_candidates

    caches = []
    # the text modules' caches too (a sentence's mood is cached there): a warm cache from the round before would
    # flatter the tree that has one
    modules = [*pkgutil.iter_modules(extract_pkg.__path__, "codememory.extract.")]
    modules += pkgutil.iter_modules(text_pkg.__path__, "codememory.text.")
    for info in modules:
        module = importlib.import_module(info.name)
        caches += [f for f in vars(module).values() if callable(getattr(f, "cache_clear", None))]
    times: list[float] = []
    cpu_times: list[float] = []  # the process's CPU time: what the rules cost, whatever else the machine runs
    memories = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in sets:
            data = corpus.SETS[name]
            recordings = []
            for item in corpus.load_items(None, data):
                path = data / "recorded" / f"{item['name']}.json"
                if item["source"] == "opencode" and path.exists():
                    project = Path(tmp) / name / item["name"]
                    project.mkdir(parents=True)
                    recordings.append((json.loads(path.read_text(encoding="utf-8")), project, Path(tmp)))
            db = Path(tmp) / f"{name}.db"
            corpus.load_recordings(db, recordings)
            with OpenCodeDB(db) as reader:
                for recording, _, _ in recordings:
                    for session_id in recording["sessions"]:
                        info, turns, todos = (
                            reader.session(session_id),
                            reader.turns(session_id),
                            reader.todos(session_id),
                        )
                        for cache in caches:
                            cache.cache_clear()
                        started, cpu = time.perf_counter(), time.process_time()
                        memories += len(heuristic_candidates(turns, info, todos))
                        times.append((time.perf_counter() - started) * 1000)
                        cpu_times.append((time.process_time() - cpu) * 1000)
    return {"times_ms": times, "cpu_ms": cpu_times, "memories": memories}


def run_worker(src: Path, sets: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", *sets], env=env, capture_output=True, text=True, check=True, timeout=900
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="main", help="the commit to compare against (default main)")
    parser.add_argument("--sets", nargs="+", default=["main", "heldout", "heldout2", "blind_a", "blind_b"])
    parser.add_argument("--rounds", type=int, default=3, help="worker runs per tree, alternating (default 3)")
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker)))
        return 0
    trees = {"base": export(args.base), "this": REPO / "src"}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    for n in range(args.rounds):
        for name, src in trees.items():
            runs[name].append(run_worker(src, args.sets))
            print(f"round {n + 1}/{args.rounds} {name}: {sum(runs[name][-1]['times_ms']):.0f} ms", file=sys.stderr)
    out: dict[str, Any] = {"base": args.base, "sets": args.sets, "rounds": args.rounds}
    for name, results in runs.items():
        per_session = [statistics.median(r["times_ms"][i] for r in results) for i in range(len(results[0]["times_ms"]))]
        cpu = [statistics.median(r["cpu_ms"][i] for r in results) for i in range(len(results[0]["cpu_ms"]))]
        out[name] = {
            "sessions": len(per_session),
            "p50_ms": round(statistics.median(per_session), 2),
            "total_ms": round(sum(per_session), 1),
            "cpu_p50_ms": round(statistics.median(cpu), 2),
            "cpu_total_ms": round(sum(cpu), 1),
            "memories": results[0]["memories"],
        }
    out["ratio_p50"] = round(out["this"]["p50_ms"] / out["base"]["p50_ms"], 2)
    out["ratio_total"] = round(out["this"]["total_ms"] / out["base"]["total_ms"], 2)
    out["ratio_cpu_p50"] = round(out["this"]["cpu_p50_ms"] / out["base"]["cpu_p50_ms"], 2)
    out["ratio_cpu_total"] = round(out["this"]["cpu_total_ms"] / out["base"]["cpu_total_ms"], 2)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
