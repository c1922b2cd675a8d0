"""Benchmark of what the OpenCode plugin adds to each LLM call: the time of its
`experimental.chat.messages.transform` hook (derive the query, `POST /retrieve`, format and append the HUD),
with the daemon up, killed (daemon.json left behind, the port refuses connections) and absent (no daemon.json).

    python benchmarks/bench_plugin.py [--size 2000] [--calls 200] [--out results.json]

A store of `--size` synthetic memories (benchmarks/synthetic.py, keywords and entities only: no embedding
model) is built under benchmarks/.work/plugin/, a real daemon is started on it (`python -m codememory.daemon
run --port 0`, its own XDG folders), and integrations/opencode/bench/hook-latency.mjs calls the hook of the plugin
bundle (src/codememory/data/opencode/codememory.js, the file `codememory init` installs) `--calls`
times in one session on conversations of one user message and one to five finished tool calls (after 10
warm-up calls), under Node and under the Bun inside the pinned `opencode` binary (the runtime OpenCode runs
plugins in). Targets: p50 <= 50 ms with the daemon up, <= 5 ms with it down.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from bench_core import log, machine, summary
from codememory import Store
from codememory.daemon.client import Client

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work" / "plugin"
DRIVER = REPO / "integrations" / "opencode" / "bench" / "hook-latency.mjs"
OPENCODE = REPO / "integrations" / "opencode" / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
TARGETS = {"up": 50.0, "killed": 5.0, "absent": 5.0}


def build(size: int) -> Path:
    project = WORK / "project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    source = WORK / "memories.jsonl"
    synthetic.write_jsonl(source, size)
    store, _ = Store.init(project)
    with store:
        report = store.import_(source)
    log(f"store: {report.added} memories")
    return project


def register(env: dict[str, str], project: Path) -> None:
    """The daemon serves only projects registered on the machine: `codememory init` without assistants registers
    this one in the benchmark's own config folder."""
    cli = Path(sys.executable).with_name("codememory")
    init = [str(cli), "--project", str(project), "init", "--assistants", "none"]
    subprocess.run(init, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True)


def start_daemon(env: dict[str, str], state: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "codememory.daemon", "run", "--port", "0", "--background"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            info = json.loads((state / "daemon.json").read_text())
            if info["pid"] == proc.pid:
                Client(port=info["port"], token="", timeout=1).health()
                return proc
        except Exception:
            time.sleep(0.05)
    proc.kill()
    sys.exit("the daemon did not start")


def drive(runtime: str, state: Path, project: Path, calls: int) -> dict[str, Any]:
    if runtime == "node":
        cmd, env = ["node", str(DRIVER)], dict(os.environ)
    else:
        cmd, env = [str(OPENCODE), str(DRIVER)], {**os.environ, "BUN_BE_BUN": "1"}
    done = subprocess.run(
        [*cmd, str(state), str(project), str(calls), "10"], capture_output=True, text=True, env=env, timeout=600
    )
    if done.returncode != 0:
        sys.exit(f"{runtime} driver failed: {done.stderr[-2000:]}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "runtime": raw["runtime"],
        "first_call_ms": round(raw["first_ms"], 3),
        **summary(raw["samples_ms"]),
        "injected": raw["injected"],
        "flagged_down": bool(raw["errors"]),
        "reason": raw["reason"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
    project = build(args.size)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "XDG_"))}
    env.update(
        XDG_STATE_HOME=str(WORK / "state"), XDG_CONFIG_HOME=str(WORK / "config"), CODEMEMORY_EMBEDDING_PROVIDER="none"
    )
    register(env, project)
    state = WORK / "state" / "codememory"
    runtimes = ["node"] + (["bun"] if OPENCODE.exists() else [])
    results: dict[str, Any] = {"size": args.size, "calls": args.calls, "machine": machine(), "arms": {}}
    proc = start_daemon(env, state)
    try:
        for rt in runtimes:
            results["arms"][f"up/{rt}"] = drive(rt, state, project, args.calls)
            log(f"up/{rt}: {results['arms'][f'up/{rt}']}")
    finally:
        proc.send_signal(signal.SIGKILL)  # daemon.json stays behind: the plugin meets a refusing port
        proc.wait(timeout=10)
    for rt in runtimes:
        results["arms"][f"killed/{rt}"] = drive(rt, state, project, args.calls)
    (state / "daemon.json").unlink(missing_ok=True)
    for rt in runtimes:
        results["arms"][f"absent/{rt}"] = drive(rt, state, project, args.calls)

    print("| arm | runtime | first call ms | p50 ms | p95 ms | max ms | HUD injected | target p50 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, arm in results["arms"].items():
        kind = name.split("/")[0]
        ok = "✅" if arm["p50_ms"] <= TARGETS[kind] else "❌"
        print(
            f"| {kind} | {arm['runtime']} | {arm['first_call_ms']:.2f} | {arm['p50_ms']:.3f} | {arm['p95_ms']:.3f} | "
            f"{arm['max_ms']:.2f} | {arm['injected']}/{arm['n']} | ≤ {TARGETS[kind]:.0f} {ok} |"
        )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
