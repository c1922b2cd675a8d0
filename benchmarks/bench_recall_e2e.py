"""End-to-end latency of recall as a user meets it: fresh `codememory` / `codememory-hook` processes against a
10k-memory store with the default embedding model, with no daemon and with the daemon running.

    .venv/bin/python benchmarks/bench_recall_e2e.py [--size 10000] [--runs 30] [--reuse] [--out FILE]

Each measured command is a new process, run the way a person or an assistant runs it; the cases are
interleaved run by run (version, search, store, hook, …) so that load on this shared machine hits them alike,
and every figure is also given as a ratio to `codememory --version` from the same rounds.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import synthetic
from codememory import Store

HERE = Path(__file__).parent
BIN = Path(sys.executable).parent
QUESTIONS = [
    "why did we pick {e} for this?",
    "how do we configure {e}",
    "what went wrong with {e} last time",
    "which version of {e} do we use",
]


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CODEMEMORY_")}
    env["PYTHONPYCACHEPREFIX"] = str(HERE / ".work" / "pycache")  # as an installed package has bytecode
    env["XDG_STATE_HOME"] = str(root / "state")  # this run's daemon, never the user's
    env["XDG_CONFIG_HOME"] = str(root / "config")
    return env


def build(root: Path, size: int, reuse: bool, env: dict[str, str]) -> list[dict[str, Any]]:
    data = root / "memories.jsonl"
    marker = root / "built.json"
    if reuse and marker.exists() and json.loads(marker.read_text())["size"] == size:
        return [json.loads(line) for line in data.read_text().splitlines()]
    shutil.rmtree(root, ignore_errors=True)
    (root / "project").mkdir(parents=True)
    records = synthetic.write_jsonl(data, size, seed=0)
    subprocess.run([BIN / "codememory", "--project", root / "project", "init", "--assistants", "none"], env=env,
                   check=True, capture_output=True)  # fmt: skip
    os.environ.update({k: env[k] for k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME")})
    start = time.perf_counter()
    with Store.open(root / "project") as store:
        store.import_(data)
        assert store.db.count_needing_embedding(store.semantic.model or "") == 0, store.semantic.reason
    marker.write_text(json.dumps({"size": size, "import_embed_s": round(time.perf_counter() - start, 1)}))
    return records


def timed(argv: list[Any], env: dict[str, str], stdin: str | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run([str(a) for a in argv], input=stdin, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise SystemExit(f"{argv}: exit {done.returncode}\n{done.stderr}")
    return elapsed


def start_daemon(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [BIN / "codememory", "daemon", "run", "--port", "0"],
        env={**env, "CODEMEMORY_NO_CAPTURE": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    info = root / "state" / "codememory" / "daemon.json"
    deadline = time.monotonic() + 120
    while not info.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the daemon did not start")
        time.sleep(0.05)
    return proc


def rounds(
    root: Path, env: dict[str, str], records: list[dict[str, Any]], runs: int, tag: str
) -> dict[str, list[float]]:
    project = root / "project"
    entities = [e for r in records[:400] for e in r.get("tags", [])][:runs] or ["postgres"] * runs
    out: dict[str, list[float]] = {"version": [], "search": [], "store": [], "hook": []}
    for i in range(runs):
        entity = entities[i % len(entities)]
        question = QUESTIONS[i % len(QUESTIONS)].format(e=entity)
        payload = json.dumps(
            {
                "session_id": f"bench-{tag}-{i}",
                "transcript_path": "",
                "cwd": str(project),
                "hook_event_name": "UserPromptSubmit",
                "prompt": question,
            }
        )
        out["version"].append(timed([BIN / "codememory", "--version"], env))
        out["search"].append(timed([BIN / "codememory", "--project", project, "search", question], env))
        text = f"Run {tag} {i} ({time.time_ns()}): we keep {entity} behind a feature flag until the load test passes"
        out["store"].append(timed([BIN / "codememory", "--project", project, "store", text, "-q"], env))
        out["hook"].append(timed([BIN / "codememory-hook", "claude", "UserPromptSubmit"], env, payload))
    return out


def summary(times: dict[str, list[float]]) -> dict[str, Any]:
    version = statistics.median(times["version"])
    out = {}
    for name, values in times.items():
        p50 = statistics.median(values)
        p95 = sorted(values)[min(len(values) - 1, int(len(values) * 0.95))]
        out[name] = {"p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "x_version": round(p50 / version, 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--reuse", action="store_true", help="keep the store of an earlier run of the same size")
    parser.add_argument("--out", default=str(HERE / "results-recall-e2e.json"))
    args = parser.parse_args()
    root = HERE / ".work" / "recall-e2e"
    env = environment(root)
    records = build(root, args.size, args.reuse, env)
    results: dict[str, Any] = {"size": args.size, "runs": args.runs, **json.loads((root / "built.json").read_text())}
    results["no_daemon"] = summary(rounds(root, {**env, "CODEMEMORY_HOOK_NO_DAEMON": "1"}, records, args.runs, "a"))
    daemon = start_daemon(root, env)
    try:
        rounds(root, env, records, 2, "warm")  # the daemon loads the store and the model on first use
        results["daemon"] = summary(rounds(root, env, records, args.runs, "b"))
    finally:
        daemon.terminate()
        daemon.wait(30)
    results["loadavg_at_end"] = Path("/proc/loadavg").read_text().split()[:3]
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print("| command | no daemon p50 / p95 ms (× version) | daemon p50 / p95 ms (× version) |")
    print("|---|---:|---:|")
    for name in ("version", "search", "store", "hook"):
        a, b = results["no_daemon"][name], results["daemon"][name]
        print(
            f"| {name} | {a['p50_ms']:.0f} / {a['p95_ms']:.0f} ({a['x_version']}) "
            f"| {b['p50_ms']:.0f} / {b['p95_ms']:.0f} ({b['x_version']}) |"
        )


if __name__ == "__main__":
    main()
