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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import synthetic
from codememory import Store

HOOK = Path(sys.executable).with_name("codememory-hook")


# An installed package has compiled bytecode; this sandbox sets PYTHONDONTWRITEBYTECODE=1, which would
# make every hook recompile its sources. Give the hook processes a bytecode cache, as bench_core does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = str(Path(__file__).parent / ".work" / "pycache")


def _run(args: list[str], stdin: str, runs: int, before_each: Callable[[], None] = lambda: None) -> list[float]:
    times = []
    subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, check=True, env=ENV)  # warm
    for _ in range(runs):
        before_each()
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
    # Each run injects, as a session's first prompt on the subject does: the record of what the session was
    # already given (which would make every later run print nothing) is removed before it, outside the timing.
    record = root / ".codememory" / "journal" / "claude-bench.injected.json"

    def forget() -> None:
        record.unlink(missing_ok=True)

    _run(["claude", "UserPromptSubmit"], json.dumps(cases["claude UserPromptSubmit"][1]), 3, forget)  # warm-up
    print(f"{args.size} memories, {args.runs} runs each, prompt {prompt!r}")
    print("| Hook | p50 ms | p95 ms |\n|------|-------:|-------:|")
    ENV["XDG_STATE_HOME"] = str(root / "state")  # this run's daemon, never the user's
    ENV["CODEMEMORY_HOOK_NO_DAEMON"] = "1"
    for name, (argv, payload) in cases.items():
        _report(name, _run(argv, json.dumps(payload), args.runs, forget))
    del ENV["CODEMEMORY_HOOK_NO_DAEMON"]
    daemon = _start_daemon(root)
    try:
        argv, payload = cases["claude UserPromptSubmit"]
        _report("claude UserPromptSubmit, daemon running", _run(argv, json.dumps(payload), args.runs, forget))
    finally:
        daemon.terminate()
        daemon.wait(30)
    bare = sorted(_run_python(args.runs))
    print(f"| (python -c pass, same venv) | {statistics.median(bare):.0f} | {bare[int(len(bare) * 0.95)]:.0f} |")


def _report(name: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"| {name} | {statistics.median(times):.0f} | {p95:.0f} |")


def _start_daemon(root: Path) -> subprocess.Popen[bytes]:
    """`codememory daemon run --port 0` with this run's state folder; returns once it has written daemon.json."""
    env = {**ENV, "CODEMEMORY_EMBEDDING_PROVIDER": "none", "CODEMEMORY_NO_CAPTURE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "codememory.daemon", "run", "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    info = root / "state" / "codememory" / "daemon.json"
    deadline = time.monotonic() + 60
    while not info.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the daemon did not start")
        time.sleep(0.05)
    return proc


def _run_python(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


if __name__ == "__main__":
    main()
