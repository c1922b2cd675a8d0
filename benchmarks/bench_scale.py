"""Large stores with vectors: hybrid and keyword search against their floors, the first search after 5,000 new
memories, import rate and bytes per memory, at 100k and 1M memories.

    python benchmarks/bench_scale.py [--sizes 100000,1000000] [--rounds 40] [--reuse] [--out FILE]

Per size: the synthetic memories (benchmarks/synthetic.py) are imported keyword-only (timed: the import rate; the
pass that reads a large import's entities after it is timed on its own),
then every memory gets a vector of the default model from a pool of real ones (vector_pool.py: embedding 1M texts
would take a day here) and the vector index is brought up to date once (`Semantic.maintain`, as `import` or the
daemon would). Then, in one process, alternating arm by arm in each round so that load on the shared machine hits
both sides alike:

- **hybrid** `Store.search(q)` (limit 10, the default mode) against its **floor**: one query embedding by the same
  model, the vector index's top 50 (usearch over the same graph file; numpy when the store has no graph) and one
  FTS5 BM25 query (`ORDER BY bm25 LIMIT 50`) of the same keywords. Each arm gets its own fresh phrases, so each
  pays its own query embedding.
- **keyword** `Store.search(q, mode="lexical")` against a bare FTS5 query of the same expression
  (`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT 10`), for single words, 2-3
  words of one memory and quoted phrases (bench_core's query kinds).
- **5,000 new memories**: imported with vectors while the process holds the store; then the first hybrid search
  (it reads those 5,000 vectors, appends them to the index's files and scores them exactly), and the first search
  of a fresh process (`python -c` opening the store: start-up included).

Ratios are the figures to compare (medians of the same rounds); milliseconds depend on the machine's load.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
import vector_pool
from bench_core import log, machine, make_queries, pct
from codememory import Store
from codememory.embedding.vector_files import VectorFiles
from codememory.text.query import parse_query

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "scale"  # --work changes it
NEW = 5_000


def phrases(count: int, rng: random.Random) -> list[str]:
    """Distinct search phrases built from the synthetic vocabulary (as bench_retrieval's requests are)."""
    techs = [t for group in synthetic.TECH_GROUPS.values() for t in group]
    makers: list[Callable[[], str]] = [
        lambda: f"{rng.choice(synthetic.PHRASES)} {rng.choice(('in', 'with', 'for'))} {rng.choice(techs)}",
        lambda: f"{rng.choice(synthetic.VERBS)} {rng.choice(synthetic.NOUNS)} for {rng.choice(synthetic.PURPOSES)}",
        lambda: f"{rng.choice(synthetic.ERRORS)} when {rng.choice(synthetic.CONDITIONS)}",
        lambda: f"{rng.choice(synthetic.AREAS)} {rng.choice(synthetic.NOUNS)} {rng.choice(synthetic.PHRASES)}",
    ]
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        p = rng.choice(makers)()
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def build(n: int, reuse: bool, vectors: bool = True) -> tuple[Path, dict[str, Any]]:
    project = WORK / f"store-{n}"
    marker = project / "built.json"
    if reuse and marker.exists():
        return project, dict(json.loads(marker.read_text()), reused=True)
    jsonl = WORK / f"memories-{n}.jsonl"
    if not jsonl.exists():
        synthetic.write_jsonl(jsonl, n, 0)
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
    try:
        store, _ = Store.init(project)
        t0 = time.perf_counter()
        report = store.import_(jsonl, entities="later")  # the import alone; the pass is timed below
        import_s = time.perf_counter() - t0
        t0 = time.perf_counter()  # the entities' pass after a large import (the daemon's, or the command's own)
        store.fill_pending_entities(workers=os.cpu_count() or 1)
        entities_s = time.perf_counter() - t0
        store.close()
    finally:
        del os.environ["CODEMEMORY_EMBEDDING_PROVIDER"]
    assert report.added == n, report.to_dict()
    log(f"[{n:,}] keyword-only import: {import_s:.1f} s = {n / import_s:,.0f} memories/s; entities {entities_s:.1f} s")
    if not vectors:
        return project, _built(project, n, import_s, 0.0, 0.0, entities_s)
    model, pool = vector_pool.pool_vectors()
    with Store.open(project) as store:
        t0 = time.perf_counter()
        vector_pool.load_into(store, model, pool)
        vectors_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.semantic.maintain()
        index_s = time.perf_counter() - t0
        store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return project, _built(project, n, import_s, vectors_s, index_s, entities_s)


def _built(
    project: Path, n: int, import_s: float, vectors_s: float, index_s: float, entities_s: float
) -> dict[str, Any]:
    dot = project / ".codememory"
    info = {
        "memories": n,
        "import_keyword_only_s": round(import_s, 2),
        "import_per_s": round(n / import_s),
        "entity_pass_s": round(entities_s, 2),
        "pooled_vectors_s": round(vectors_s, 1),
        "index_build_s": round(index_s, 1),
        "db_bytes": sum(p.stat().st_size for p in dot.glob("memory.db*")),
        "cache_bytes": folder_bytes(dot / "cache"),
    }
    info["db_bytes_per_memory"] = round(info["db_bytes"] / n)
    info["cache_bytes_per_memory"] = round(info["cache_bytes"] / n)
    log(
        f"[{n:,}] vectors {vectors_s:.0f} s, index {index_s:.0f} s; store {info['db_bytes_per_memory']} B/memory, "
        f"index cache {info['cache_bytes_per_memory']} B/memory"
    )
    (project / "built.json").write_text(json.dumps(info) + "\n")
    return dict(info, reused=False)


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def compare(store: Store, n: int, rounds: int, seed: int) -> dict[str, Any]:
    """Hybrid search against its floor, and keyword search against bare FTS5, alternating every round."""
    rng = random.Random(seed)
    embedder = store.semantic.embedder()
    assert embedder is not None, store.semantic.reason
    index = store.semantic.index()
    assert index is not None
    index.refresh()
    files = VectorFiles(store.root / ".codememory" / "cache", embedder.name)
    meta = files.read_meta()
    opened = files.open_ann(meta) if meta is not None else None
    mapped = files.map_rows(meta) if meta is not None else None
    conn = store.db.conn
    qs = phrases(2 * (rounds + 3), rng)

    def floor(q: str) -> None:
        qv = embedder.embed_query(q)
        if opened is not None:
            opened[0].search(qv, 50)
        elif mapped is not None:
            sims = mapped.matrix @ qv
            sims.argpartition(-50)[-50:]
        conn.execute(
            "SELECT rowid, bm25(memories_fts) AS s FROM memories_fts WHERE memories_fts MATCH ? ORDER BY s LIMIT 50",
            (parse_query(q).keyword_fts(),),
        ).fetchall()

    def hybrid(q: str) -> None:
        res = store.search(q, limit=10, touch=False)
        if res.mode != "hybrid" or res.degraded:
            sys.exit(f"hybrid search degraded: {res.degraded_reason}")

    arms: dict[str, list[float]] = {"floor": [], "hybrid": []}
    for i in range(rounds + 3):
        order = [("floor", floor), ("hybrid", hybrid)] if i % 2 else [("hybrid", hybrid), ("floor", floor)]
        for j, (name, fn) in enumerate(order):
            q = qs[2 * i + j]
            t0 = time.perf_counter()
            fn(q)
            if i >= 3:  # warm-up rounds
                arms[name].append(time.perf_counter() - t0)
    out: dict[str, Any] = {
        "hybrid_p50_ms": median_ms(arms["hybrid"]),
        "hybrid_p95_ms": round(pct(arms["hybrid"], 95) * 1000, 2),
        "floor_p50_ms": median_ms(arms["floor"]),
        "hybrid_over_floor": round(statistics.median(arms["hybrid"]) / statistics.median(arms["floor"]), 2),
        "vector_method": index.last_method,
    }
    return out | compare_keyword(store, n, rounds, seed)


def compare_keyword(store: Store, n: int, rounds: int, seed: int) -> dict[str, Any]:
    """Keyword search against a bare FTS5 query of the same expression, alternating every query."""
    conn = store.db.conn
    out: dict[str, Any] = {}
    with (WORK / f"memories-{n}.jsonl").open() as lines:
        records = [json.loads(line) for line in itertools.islice(lines, 20_000)]
    kinds = make_queries(records, rounds + 3, seed)
    for kind in ("single", "multi", "phrase"):
        lexical: list[float] = []
        bare: list[float] = []
        for i, q in enumerate(kinds[kind]):
            fts = parse_query(q).fts
            pair = [
                ("lexical", lambda q=q: store.search(q, mode="lexical", limit=10, touch=False)),
                (
                    "bare",
                    lambda fts=fts: conn.execute(
                        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT 10", (fts,)
                    ).fetchall(),
                ),
            ]
            for name, fn in pair if i % 2 else reversed(pair):
                t0 = time.perf_counter()
                fn()
                if i >= 3:
                    (lexical if name == "lexical" else bare).append(time.perf_counter() - t0)
        out[f"keyword_{kind}_p50_ms"] = median_ms(lexical)
        out[f"keyword_{kind}_p95_ms"] = round(pct(lexical, 95) * 1000, 2)
        out[f"bare_fts_{kind}_p50_ms"] = median_ms(bare)
        out[f"keyword_{kind}_over_bare"] = round(statistics.median(lexical) / statistics.median(bare), 2)
    return out


def after_new(store: Store, project: Path, n: int, seed: int) -> dict[str, Any]:
    """Add NEW memories with vectors while the store is open; time the first search after, here and in a fresh
    process."""
    extra = WORK / f"new-{n}.jsonl"
    records = synthetic.generate(NEW, seed=seed + 99)
    for r in records:
        r["id"] = "mem_" + os.urandom(4).hex()
    extra.write_text("".join(json.dumps(r) + "\n" for r in records))
    model, pool = vector_pool.pool_vectors()
    before = store.count()
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
    try:
        with Store.open(project) as writer:  # another writer, as a CLI import beside a running daemon would be
            writer.import_(extra)
    finally:
        del os.environ["CODEMEMORY_EMBEDDING_PROVIDER"]
    with Store.open(project) as writer:
        vector_pool.load_into(writer, model, pool)
    index = store.semantic.index()
    assert index is not None
    read_before = index.stats["rows_read"]
    q = phrases(1, random.Random(seed + 7))[0] + " after the import"
    t0 = time.perf_counter()
    res = store.search(q, limit=10, touch=False)
    first_s = time.perf_counter() - t0
    script = (
        "import sys, time\nfrom codememory import Store\nt0 = time.perf_counter()\ns = Store.open(sys.argv[1])\n"
        "r = s.search(sys.argv[2], limit=10, touch=False)\nprint(time.perf_counter() - t0, r.mode)\n"
    )
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(project), q + " again"], capture_output=True, text=True, check=True
    )
    fresh_wall = time.perf_counter() - t0
    fresh_in = float(done.stdout.split()[0])
    return {
        "added": store.count() - before,
        "first_search_after_ms": round(first_s * 1000, 1),
        "rows_read_by_it": index.stats["rows_read"] - read_before,
        "vector_method": index.last_method,
        "mode": res.mode,
        "fresh_process_open_and_search_ms": round(fresh_in * 1000, 1),
        "fresh_process_wall_ms": round(fresh_wall * 1000, 1),
    }


def main() -> None:
    global WORK
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep stores built by an earlier run")
    parser.add_argument("--no-new", action="store_true", help="skip the 5,000-new-memories step")
    parser.add_argument("--out", default=str(HERE / "results-scale.json"))
    parser.add_argument("--work", type=Path, default=WORK, help="where the stores and their JSONL files are")
    parser.add_argument(
        "--keyword-only", action="store_true", help="stores without vectors: keyword search against bare FTS5 only"
    )
    args = parser.parse_args()
    WORK = args.work
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"command": " ".join(["python benchmarks/bench_scale.py", *sys.argv[1:]])}
    results["machine"] = machine()
    results["load_before"] = os.getloadavg()
    results["sizes"] = []
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        project, info = build(n, args.reuse, vectors=not args.keyword_only)
        with Store.open(project) as store:
            measure = compare_keyword if args.keyword_only else compare
            row = {"build": info, **measure(store, n, args.rounds, args.seed)}
            log(f"[{n:,}] {json.dumps(row)}")
            if not args.no_new and not args.keyword_only:
                row["after_new"] = after_new(store, project, n, args.seed)
                log(f"[{n:,}] after {NEW:,} new: {json.dumps(row['after_new'])}")
        results["sizes"].append(row)
    results["load_after"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    sqlite3.enable_callback_tracebacks(True)
    main()
