"""What pulled memory files that do not parse cost every later call: `codememory list --json` (one CLI process, one
store open) in a project whose `.codememory/memories/` holds N broken files, against the same call in a project with
none, alternating, median wall time of --runs processes each; the first call (which reads and remembers them) is
timed apart. `--src` runs another checkout's code (e.g. main's) the same way, for the before/after ratio.

    .venv/bin/python benchmarks/bench_broken_files.py [--files 20000] [--runs 5] [--src /path/to/other/src]
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

CLI = [sys.executable, "-c", "from codememory.cli.main import main; main()"]  # the code PYTHONPATH finds first


def project(base: Path, env: dict[str, str], broken: int) -> Path:
    root = base / f"proj-{len(list(base.glob('proj-*')))}"
    root.mkdir()
    subprocess.run(
        [*CLI, "--project", str(root), "init", "--assistants", "none"], env=env, check=True, capture_output=True
    )
    for i in range(broken):
        mid = f"mem_{(i * 0x9E3779B1) % 2**32:08x}"
        path = root / ".codememory" / "memories" / mid[4:6] / f"{mid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'{{"format": 1, "id": "{mid}", "text": ')  # cut off: not JSON
    old = time.time() - 10  # past the walk's "folder still changing" window
    for shard in (root / ".codememory" / "memories").glob("??"):
        os.utime(shard, (old, old))
    return root


def timed(env: dict[str, str], root: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, "--project", str(root), "list", "--json"], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--src", help="another checkout's src folder, measured the same way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "XDG_"))}
        env |= {"HOME": str(base), "XDG_CONFIG_HOME": str(base / "c"), "XDG_STATE_HOME": str(base / "s")}
        env["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
        variants = {"this checkout": {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}}
        if args.src:
            variants = {"--src": {**env, "PYTHONPATH": args.src}, **variants}
        for name, venv in variants.items():
            empty, broken = project(base, venv, 0), project(base, venv, args.files)
            timed(venv, empty)
            first = timed(venv, broken)
            pairs = [(timed(venv, empty), timed(venv, broken)) for _ in range(args.runs)]
            none_ms = statistics.median(p[0] for p in pairs) * 1000
            some_ms = statistics.median(p[1] for p in pairs) * 1000
            print(
                f"{name}: first call {first * 1000:.0f} ms; later calls {some_ms:.0f} ms with {args.files:,} broken "
                f"files vs {none_ms:.0f} ms with none ({some_ms / none_ms:.2f}x)"
            )


if __name__ == "__main__":
    main()
