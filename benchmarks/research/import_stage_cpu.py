"""CPU time per memory of each stage of an import's work, in one process, for two trees of the code alternating
(each round runs every stage once per tree, each tree in a fresh process with its `src` first on PYTHONPATH):
parsing and checking a line (JSON, scrubbing, every field), the instruction check, the entities, and the writing
process's SQL (a whole keyword-only import into a fresh store in that process, minus the stages above).

    git archive <commit> src | tar -x -C /tmp/base
    python benchmarks/research/import_stage_cpu.py --base-src /tmp/base/src [--file F] [--rounds 3]

Figures are process CPU time (`time.process_time`), not wall, so that the load of a shared machine moves them less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CODE = r"""
import json, os, sys, tempfile, time
os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"; os.environ["CODEMEMORY_DAEMON_PORT"] = "1"
import codememory.service.transfer as T
from codememory.service.memory_entities import entities_in
from codememory.text.instructions import is_instruction_like
from codememory.store.memories import memory_row
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
warm = T.parse_jsonl(lines[:300]).memories
[(entities_in(m.text), is_instruction_like(m.text)) for m in warm]
def cpu(f):
    t = time.process_time(); out = f(); return (time.process_time() - t) / len(lines) * 1e6, out
parse, mems = cpu(lambda: T.parse_jsonl(lines).memories)
rows, _ = cpu(lambda: [memory_row(m) for m in mems])
check, _ = cpu(lambda: [is_instruction_like(m.text) for m in mems])
ents, _ = cpu(lambda: [entities_in(m.text) for m in mems])
T.cores = lambda: 1  # the whole import in this process: its SQL is what is left beyond the stages above
from codememory import Store
d = tempfile.mkdtemp(); store, _ = Store.init(d)
whole, _ = cpu(lambda: store.import_(sys.argv[1]))
print(json.dumps({"parse_scrub_validate": parse + rows, "instruction_check": check, "entities": ents,
                  "import_whole": whole, "writer_rest": whole - parse - rows - check - ents}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base-src", required=True, type=Path)
    parser.add_argument("--file", type=Path, default=HERE / ".work" / "import-10000.jsonl")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sources = {"base": str(args.base_src.resolve()), "branch": str(HERE.parent / "src")}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    load = [os.getloadavg()]
    for i in range(args.rounds):
        for name in list(sources) if i % 2 == 0 else list(reversed(sources)):
            env = {**os.environ, "PYTHONPATH": sources[name]}
            out = subprocess.run(
                [sys.executable, "-c", CODE, str(args.file)], capture_output=True, text=True, env=env, check=False
            )
            if out.returncode:
                sys.exit(out.stderr[-2000:])
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    load.append(os.getloadavg())
    result: dict[str, object] = {}
    for stage in runs["base"][0]:
        base = statistics.median(r[stage] for r in runs["base"])
        branch = statistics.median(r[stage] for r in runs["branch"])
        result[stage] = {"base_us": round(base, 1), "branch_us": round(branch, 1), "ratio": round(branch / base, 2)}
    result["load"] = load
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
