"""What the layered layout costs at start-up, and what it changed in the code's shape, against an earlier commit.

The entry points run on every prompt (hooks) and every command (CLI), so moving modules into packages must
not make them slower. Each probe runs as a fresh process, alternating between the two source trees in one
run (the machine is shared and noisy: the ratio is the figure, not the milliseconds), with a bytecode cache
as an installed package has.

    .venv/bin/python benchmarks/bench_layout.py [--before fd1620a] [--runs 40]

The earlier tree is checked out with `git worktree` into benchmarks/.work/ and put first on PYTHONPATH, so
both run on the same interpreter and dependencies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work"

# (label, python arguments, stdin): each is what an entry point pays before doing its work.
PROBES = [
    ("`codememory --help` (CLI start-up)", ["-c", "from codememory.cli.main import main; main()", "--help"], ""),
    (
        "hook `claude PostToolUse` (journal append)",
        ["-c", "from codememory.hooks.dispatch import main; main()", "claude", "PostToolUse"],
        '{"tool_name": "Edit", "tool_input": {"file_path": "src/app.py"}, "cwd": "%(project)s"}',
    ),
    ("`import codememory; open_store`", ["-c", "from codememory import open_store"], ""),
    ("daemon status (`python -m codememory.daemon`)", ["-m", "codememory.daemon", "status"], ""),
]


def _old_names(arg: str) -> str:
    """The same probe at the earlier commit, where the hook module had its old name."""
    return arg.replace("codememory.hooks.dispatch", "codememory.hooks")


def _tree(before: str) -> Path:
    path = WORK / f"layout-{before}"
    if not (path / "src" / "codememory").is_dir():
        WORK.mkdir(exist_ok=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(path), before], check=True)
    return path / "src"


def _shape(src: Path) -> dict[str, float]:
    """Top-level modules, packages, the longest module and how many modules are over 500 lines."""
    package = src / "codememory"
    lines = {p: len(p.read_text(encoding="utf-8").splitlines()) for p in package.rglob("*.py")}
    top = [p for p in package.glob("*.py") if p.name != "__init__.py"]
    packages = [p for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    return {
        "top-level modules": len(top),
        "packages": len(packages),
        "modules": len(lines),
        "longest module (lines)": max(lines.values()),
        "modules over 500 lines": sum(1 for n in lines.values() if n > 500),
    }


def _env(src: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPATH=str(src),
        PYTHONPYCACHEPREFIX=str(WORK / "pycache"),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".state"),
        CODEMEMORY_HOOK_NO_DAEMON="1",
    )
    return env


def _once(args: list[str], stdin: str, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1):  # `daemon status` exits 1 when no daemon runs
        raise SystemExit(f"{args} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="fd1620a", help="the commit to compare with (default: before the layout)")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    trees = {"before": _tree(args.before), "now": REPO / "src"}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        project = home / "project"
        project.mkdir()
        init = ["-c", f"from codememory import Store; Store.init({str(project)!r})[0].close()"]
        subprocess.run([sys.executable, *init], check=True, env=_env(trees["now"], home))
        for label, argv, stdin in PROBES:
            times: dict[str, list[float]] = {"before": [], "now": []}
            for _ in range(args.runs + 1):  # the first round warms the bytecode caches
                for name, src in trees.items():
                    probe = [_old_names(a) if name == "before" else a for a in argv]
                    times[name].append(_once(probe, stdin % {"project": project}, _env(src, home), project))
            before, now = (statistics.median(times[n][1:]) for n in ("before", "now"))
            print(f"| {label} | {before:.0f} | {now:.0f} | {now / before:.2f} |")
    print()
    shape_before, shape_now = _shape(trees["before"]), _shape(trees["now"])
    for key in shape_now:
        print(f"| {key} | {shape_before[key]:g} | {shape_now[key]:g} |")


if __name__ == "__main__":
    main()
