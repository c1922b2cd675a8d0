"""Keyword-only import rate of two versions of codememory, alternating in one run: each round imports the same JSON
Lines file into a fresh store in a fresh process, once with each `src/` (the other version's sources come first on
PYTHONPATH), so load on a shared machine falls on both alike. A version that leaves a large import's entities to a
pass after it has that pass timed too, on every core as the import command runs it when no daemon serves the
project (`entity_pass_s`, and the rate with it). The import's CPU time per memory is reported beside its rate, in
the writing process and in its worker processes (`cpu_us_*`): on a shared machine it moves far less than the rate.

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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic

HERE = Path(__file__).resolve().parent
CODE = (
    "import sys, time\nfrom codememory import Store\ns, _ = Store.init(sys.argv[1])\n"
    # the import alone: a version that can leave the entities to the pass after it is asked to (its default reads
    # them before it returns)
    # (`--entities now`: the default, entities read before the import returns, as `bench_core.py` times it)
    "import inspect\nlater = {'entities': 'later'} if 'entities' in inspect.signature(s.import_).parameters else {}\n"
    "later = {} if sys.argv[3] == 'now' else later\n"
    # CPU time of the import: this process (the writer) and its worker processes, reaped when the import returns
    "import resource\ndef cpu(who):\n    u = resource.getrusage(who)\n    return u.ru_utime + u.ru_stime\n"
    "me, kids = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)\n"
    "t = time.perf_counter()\nr = s.import_(sys.argv[2], **later)\nimported = time.perf_counter() - t\n"
    "me, kids = cpu(resource.RUSAGE_SELF) - me, cpu(resource.RUSAGE_CHILDREN) - kids\n"
    # a version that leaves the entities of a large import to a pass after it: that pass, timed on its own
    "import os\nfill = getattr(s, 'fill_pending_entities', None)\nt = time.perf_counter()\n"
    "filled = fill(workers=os.cpu_count() or 1) if fill else 0\n"
    "print(imported, r.added, time.perf_counter() - t, filled, me, kids)\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-src", required=True, type=Path)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--entities",
        choices=("later", "now"),
        default="later",
        help="later: the import alone, then the entity pass timed apart; now: the default import (entities read "
        "before it returns), the whole of it timed",
    )
    args = parser.parse_args()
    source = HERE / ".work" / f"import-{args.size}.jsonl"
    if not source.exists():
        source.parent.mkdir(parents=True, exist_ok=True)
        synthetic.write_jsonl(source, args.size, 0)
    sources = {"base": str(args.base_src.resolve()), "branch": str(HERE.parent / "src")}
    seconds: dict[str, list[float]] = {name: [] for name in sources}
    entity_pass: dict[str, list[tuple[float, int]]] = {name: [] for name in sources}
    cpu: dict[str, list[tuple[float, float]]] = {name: [] for name in sources}  # (writer, workers) seconds
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
                    [sys.executable, "-c", CODE, str(project), str(source), args.entities],
                    capture_output=True,
                    text=True,
                    env=env,
                )
                if out.returncode:
                    sys.exit(out.stderr[-2000:])
                took, added, fill_s, filled, writer_s, workers_s = out.stdout.split()
                assert int(added) == args.size, out.stdout
                seconds[name].append(float(took))
                entity_pass[name].append((float(fill_s), int(filled)))
                cpu[name].append((float(writer_s), float(workers_s)))
    load.append(os.getloadavg())
    result: dict[str, Any] = {}
    for name, v in seconds.items():
        median = statistics.median(v)
        fill_s = statistics.median(s for s, _ in entity_pass[name])
        result[name] = {
            "median_s": median,
            "per_s": round(args.size / median),
            "entity_pass_s": round(fill_s, 2),  # 0 for a version that reads entities inside the import
            "entities_filled": max(n for _, n in entity_pass[name]),
            "with_entity_pass_per_s": round(args.size / (median + fill_s)),
            # CPU per memory of the import alone (medians over the rounds): steadier than the rate on a shared machine
            "cpu_us_writer": round(statistics.median(w for w, _ in cpu[name]) / args.size * 1e6, 1),
            "cpu_us_workers": round(statistics.median(k for _, k in cpu[name]) / args.size * 1e6, 1),
            "cpu_us_total": round(statistics.median(w + k for w, k in cpu[name]) / args.size * 1e6, 1),
        }
    result["entities"] = args.entities
    result["speedup"] = round(statistics.median(seconds["base"]) / statistics.median(seconds["branch"]), 2)
    result["load"] = load
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
