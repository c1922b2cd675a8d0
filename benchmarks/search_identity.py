"""What `Store.search` returns, written down to compare two trees of the code: a change meant only to make search
faster must leave every answer as it was.

    PYTHONPATH=/tmp/base/src python benchmarks/search_identity.py --out /tmp/base.json   # e.g. main, from git archive
    python benchmarks/search_identity.py --out /tmp/new.json --compare /tmp/base.json

It searches every query of the released precision splits (their stores as bench_precision.py builds them, default
model, reused when present), with and without the held-back results listed, and 100 queries of each kind of
bench_core.py on its 10k store (built by `bench_core.py --sizes 10000`), all with `touch=False`. Per search it keeps
the ids in order, how each matched, the held-back count, the mode, whether it degraded and whether the typo pass ran
(scores are left out: the recency nudge moves them as the clock does). `--compare` lists the searches that differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_core
import bench_precision

HERE = Path(__file__).resolve().parent
SPLITS = ("dev", "judge", "judge2", "judge3", "judge4", "judge5", "judge6")  # the released ones only
STORE_10K = HERE / ".work" / "store-10000"
MEMORIES_10K = HERE / ".work" / "memories-10000.jsonl"


def answer(result: Any) -> list[Any]:
    return [[h.memory.id, h.match] for h in result.hits] + [
        result.held_back,
        result.mode,
        result.degraded,
        result.fuzzy_used,
    ]


def searches() -> dict[str, list[Any]]:
    from codememory import Store

    out: dict[str, list[Any]] = {}
    bench_precision.set_model("default")
    for split in SPLITS:
        for project in bench_precision.load_split(split):
            store = bench_precision.build_store(
                project, bench_precision.store_dir("default", split, project), reuse=True
            )
            for q in project.queries:
                for listed in (False, True):
                    result = store.search(q.text, limit=bench_precision.LIMIT, touch=False, show_held_back=listed)
                    out[f"{split}/{project.name}/{listed}/{q.text}"] = answer(result)
            store.close()
    if STORE_10K.exists():
        records = [json.loads(line) for line in MEMORIES_10K.read_text().splitlines()]
        with Store.open(STORE_10K) as store:
            for kind, queries in bench_core.make_queries(records, 100, 10_001).items():
                for q in queries:
                    out[f"10k/{kind}/{q}"] = answer(store.search(q, touch=False))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path, help="another run's --out: list the searches that differ")
    args = parser.parse_args()
    found = searches()
    args.out.write_text(json.dumps(found, sort_keys=True) + "\n")
    hits = sum(len(v) - 4 for v in found.values())
    print(f"{len(found)} searches, {hits} results, {sum(v[-4] for v in found.values())} held back")
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = sorted(k for k in before.keys() | found.keys() if before.get(k) != found.get(k))
        print(f"differ: {len(differ)}")
        for key in differ[:20]:
            print(f"  {key}\n    before {before.get(key)}\n    now    {found.get(key)}")
        if differ:
            sys.exit(1)


if __name__ == "__main__":
    main()
