"""Benchmark of the CLI as a user meets it: start-up (`--version`, `--help`) and a question `search` and a `store`,
with and without the daemon, each as a ratio to a bare Python start that imports sqlite3 and json.

Every case is a fresh process of an installed `codememory`, in an isolated home (its own config, registry, state
folder and daemon) with a registered project of `--size` memories (benchmarks/synthetic.py, seeded) and the default
embedding model. One round runs every case once, in turn, so that a load on the machine falls on all of them alike;
the figures are medians over `--rounds` rounds. Several installs can be compared in the same rounds
(`--codememory NAME=PATH`, e.g. a venv of main beside this branch's): they share the home and the daemon (started
by the first one named).

    .venv/bin/python benchmarks/bench_cli_startup.py --codememory new=/path/to/venv/bin/codememory \\
        [--codememory old=/path/to/other/venv/bin/codememory] [--rounds 15] [--size 200]
"""

from __future__ import annotations

import argparse
import itertools
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

WORK = Path(__file__).parent / ".work" / "cli-startup"
QUESTION = "why did we choose httpx for the webhook worker?"


def _env(home: Path, daemon: bool) -> dict[str, str]:
    # A user's install has compiled bytecode (pip compiles at install); this sandbox sets PYTHONDONTWRITEBYTECODE=1,
    # which would make an editable install recompile every module on every start.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "XDG_", "PYTHONDONTWRITE"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_STATE_HOME=str(home / "state"))
    env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    if not daemon:
        env["CODEMEMORY_HOOK_NO_DAEMON"] = "1"  # never ask the daemon, as when none runs
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--codememory", action="append", metavar="NAME=PATH", help="an installed codememory script")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    named = args.codememory or [f"this={Path(sys.executable).parent}/codememory"]
    installs = dict(item.split("=", 1) for item in named)
    shutil.rmtree(WORK, ignore_errors=True)
    home, project = WORK / "home", WORK / "project"
    project.mkdir(parents=True)
    first = next(iter(installs.values()))
    python = str(Path(first).with_name("python"))
    setup = _env(home, daemon=False)
    subprocess.run([first, "init", "--assistants", "none"], env=setup, cwd=project, check=True, capture_output=True)
    data = WORK / "memories.jsonl"
    synthetic.write_jsonl(data, args.size, seed=0)
    subprocess.run([first, "import", str(data)], env=setup, cwd=project, check=True, capture_output=True)
    subprocess.run([first, "store", "Use httpx, not requests, in the webhook worker: we need HTTP/2"], env=setup,
                   cwd=project, check=True, capture_output=True)  # fmt: skip
    subprocess.run([first, "embed"], env=setup, cwd=project, check=True, capture_output=True)

    counter = itertools.count()
    bare = [python, "-c", "import sqlite3, json"]
    cases: dict[str, tuple[list[str], bool]] = {"python -c 'import sqlite3, json'": (bare, False)}
    for name, script in installs.items():
        cases[f"{name}: --version"] = ([script, "--version"], False)
        cases[f"{name}: --help"] = ([script, "--help"], False)
        for daemon in (False, True):
            where = "daemon" if daemon else "no daemon"
            cases[f"{name}: search, {where}"] = ([script, "search", QUESTION], daemon)
            cases[f"{name}: store, {where}"] = ([script, "store", "-q", "NOTE"], daemon)  # NOTE: made unique per run

    started = subprocess.run([first, "daemon", "start", "--port", "0", "--json"], env=_env(home, True), cwd=project,
                             capture_output=True, text=True, check=True)  # fmt: skip
    print(f"daemon: {json.loads(started.stdout)['pid']}", file=sys.stderr)
    times: dict[str, list[float]] = {name: [] for name in cases}
    try:
        for round_ in range(args.rounds + 1):  # the first round warms caches and the daemon's stores: not counted
            for name, (argv, daemon) in cases.items():
                argv = [a if a != "NOTE" else f"Benchmark note {next(counter)}: retries back off 2^n s" for a in argv]
                elapsed = _timed(argv, _env(home, daemon), project)
                if round_:
                    times[name].append(elapsed)
    finally:
        subprocess.run([first, "daemon", "stop"], env=_env(home, True), capture_output=True, check=False)
    base = statistics.median(times[next(iter(cases))])
    results = {name: {"median_ms": round(statistics.median(t), 1), "ratio": round(statistics.median(t) / base, 2)}
               for name, t in times.items()}  # fmt: skip
    print(f"{args.rounds} rounds, {args.size + 1} memories, question {QUESTION!r}")
    print("| case | median ms | × python start |\n|------|---------:|-------:|")
    for name, figures in results.items():
        print(f"| {name} | {figures['median_ms']:.0f} | {figures['ratio']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "size": args.size + 1, "results": results}, indent=2))


if __name__ == "__main__":
    main()
