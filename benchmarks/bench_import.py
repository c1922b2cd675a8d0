"""Keyword-only import rate of two versions of codememory, alternating in one run: each round imports the same JSON
Lines file into a fresh store in a fresh process, once with each `src/` (the other version's sources come first on
PYTHONPATH), so load on a shared machine falls on both alike.

    git archive <commit> src | tar -x -C /tmp/base          # the version to compare with
    python benchmarks/bench_import.py --base-src /tmp/base/src [--size 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic

HERE = Path(__file__).resolve().parent
CODE = (
    "import sys, time\nfrom codememory import Store\ns, _ = Store.init(sys.argv[1])\nt = time.perf_counter()\n"
    "r = s.import_(sys.argv[2])\nprint(time.perf_counter() - t, r.added)\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-src", required=True, type=Path)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    source = HERE / ".work" / f"import-{args.size}.jsonl"
    if not source.exists():
        source.parent.mkdir(parents=True, exist_ok=True)
        synthetic.write_jsonl(source, args.size, 0)
    sources = {"base": str(args.base_src.resolve()), "branch": str(HERE.parent / "src")}
    seconds: dict[str, list[float]] = {name: [] for name in sources}
    load = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for name in list(sources) if i % 2 == 0 else list(reversed(sources)):
                project = Path(tmp) / name
                shutil.rmtree(project, ignore_errors=True)
                project.mkdir()
                env = {**os.environ, "PYTHONPATH": sources[name], "CODEMEMORY_EMBEDDING_PROVIDER": "none"}
                env["CODEMEMORY_DAEMON_PORT"] = "1"
                out = subprocess.run(
                    [sys.executable, "-c", CODE, str(project), str(source)], capture_output=True, text=True, env=env
                )
                if out.returncode:
                    sys.exit(out.stderr[-2000:])
                took, added = out.stdout.split()
                assert int(added) == args.size, out.stdout
                seconds[name].append(float(took))
    load.append(os.getloadavg())
    result = {
        name: {"median_s": statistics.median(v), "per_s": round(args.size / statistics.median(v))}
        for name, v in seconds.items()
    }
    result["speedup"] = round(statistics.median(seconds["base"]) / statistics.median(seconds["branch"]), 2)
    result["load"] = load
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
