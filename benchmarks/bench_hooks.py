"""Benchmark of the hook entry point: wall time of the `codememory-hook` process, as an assistant runs it.

100 runs of `codememory-hook claude UserPromptSubmit` (and of PostToolUse, the other per-step hook)
against a 1k-memory store (benchmarks/synthetic.py, seeded; no embedding model configured), each a fresh
process with the payload on stdin. Prints p50/p95 in milliseconds.

    .venv/bin/python benchmarks/bench_hooks.py [--runs 100] [--size 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import synthetic
from codememory import Store

HOOK = Path(sys.executable).with_name("codememory-hook")


# An installed package has compiled bytecode; this sandbox sets PYTHONDONTWRITEBYTECODE=1, which would
# make every hook recompile its sources. Give the hook processes a bytecode cache, as bench_core does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = str(Path(__file__).parent / ".work" / "pycache")


def _run(args: list[str], stdin: str, runs: int) -> list[float]:
    times = []
    subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, check=True, env=ENV)  # warm
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, check=True, env=ENV)
        times.append((time.perf_counter() - start) * 1000)
        assert done.returncode == 0
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    root = Path(__file__).parent / ".work" / "hooks"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    data = root / "memories.jsonl"
    records = synthetic.write_jsonl(data, args.size, seed=0)
    store, _ = Store.init(root)
    with store:
        store.import_(data)
    prompt = " ".join(str(records[7]["text"]).split()[:8])
    base = {"session_id": "bench", "transcript_path": "", "cwd": str(root)}
    cases = {
        "claude UserPromptSubmit": (
            ["claude", "UserPromptSubmit"],
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt},
        ),
        "claude PostToolUse (Edit)": (
            ["claude", "PostToolUse"],
            {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {"file_path": "a.py"}},
        ),
    }
    _run(["claude", "UserPromptSubmit"], json.dumps(cases["claude UserPromptSubmit"][1]), 3)  # warm-up
    print(f"{args.size} memories, {args.runs} runs each, prompt {prompt!r}")
    print("| Hook | p50 ms | p95 ms |\n|------|-------:|-------:|")
    for name, (argv, payload) in cases.items():
        times = sorted(_run(argv, json.dumps(payload), args.runs))
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(f"| {name} | {statistics.median(times):.0f} | {p95:.0f} |")
    bare = sorted(_run_python(args.runs))
    print(f"| (python -c pass, same venv) | {statistics.median(bare):.0f} | {bare[int(len(bare) * 0.95)]:.0f} |")


def _run_python(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


if __name__ == "__main__":
    main()
