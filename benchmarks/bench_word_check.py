"""Keyword search with two ways of checking which candidates hold each query word, alternating query by query in
one process, against a bare FTS5 query of the same expression (bench_scale's keyword arms):

- **old**: each word asked of the store's keyword index (`MATCH ? AND rowid BETWEEN ...`, then the keys one by
  one when the range holds too many matches), as before the candidates' own small index;
- **new**: the store as it is (`TextSearch.fts_subsets`).

Both must return the same memories in the same order for every query (checked). Needs a store built by
`bench_scale.py --keyword-only --work DIR`:

    python benchmarks/bench_word_check.py --work benchmarks/.work/import/scale --size 100000 --queries 80
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import make_queries
from codememory import Store
from codememory.store.connection import chunks
from codememory.text.query import parse_query


def old_subset(self: Any, match: str, pks: Sequence[int]) -> set[int]:
    wanted = set(pks)
    if not wanted:
        return set()
    rows = self.conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid BETWEEN ? AND ? LIMIT 2000",
        (match, min(wanted), max(wanted)),
    ).fetchall()
    if len(rows) < 2000:
        return {r[0] for r in rows if r[0] in wanted}
    out: set[int] = set()
    for chunk in chunks(sorted(wanted)):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({marks})"
        out.update(r[0] for r in self.conn.execute(sql, (match, *chunk)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=80)
    args = parser.parse_args()
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
    store = Store.open(args.work / f"store-{args.size}")
    db = store.db
    new_subset, new_subsets = type(db).fts_subset, type(db).fts_subsets
    with (args.work / f"memories-{args.size}.jsonl").open() as lines:
        records = [json.loads(line) for line in itertools.islice(lines, 20_000)]
    kinds = make_queries(records, args.queries, 0)
    result: dict[str, Any] = {"memories": args.size, "load_before": os.getloadavg()}
    for kind in ("single", "multi", "phrase"):
        times: dict[str, list[float]] = {"old": [], "new": [], "bare": []}
        for i, q in enumerate(kinds[kind]):
            order = ["old", "new", "bare"] if i % 2 else ["bare", "new", "old"]
            found = {}
            for arm in order:
                if arm == "old":
                    db.fts_subset = types.MethodType(old_subset, db)  # type: ignore[method-assign]
                    db.fts_subsets = lambda ms, pks: [db.fts_subset(m, pks) for m in ms]  # type: ignore[method-assign]
                else:
                    db.fts_subset = types.MethodType(new_subset, db)  # type: ignore[method-assign]
                    db.fts_subsets = types.MethodType(new_subsets, db)  # type: ignore[method-assign]
                t0 = time.perf_counter()
                if arm == "bare":
                    sql = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT 10"
                    db.conn.execute(sql, (parse_query(q).fts,)).fetchall()
                else:
                    hits = store.search(q, mode="lexical", limit=10, touch=False).hits
                    found[arm] = [(h.memory.id, h.match) for h in hits]
                if i >= 3:  # warm-up
                    times[arm].append(time.perf_counter() - t0)
            assert found["old"] == found["new"], q
        p50 = {arm: statistics.median(v) * 1000 for arm, v in times.items()}
        result[kind] = {f"{arm}_p50_ms": round(ms, 2) for arm, ms in p50.items()}
        result[kind] |= {f"{arm}_over_bare": round(p50[arm] / p50["bare"], 2) for arm in ("old", "new")}
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
