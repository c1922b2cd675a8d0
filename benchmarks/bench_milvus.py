"""The organisation's memory on Milvus Lite: recall of the remote hybrid against the local hybrid, publish
throughput, query latency by collection size, and the cost of publishing a delta.

    python benchmarks/bench_milvus.py [--sizes 10000,100000] [--skip-recall] [--out benchmarks/results-milvus.json]

1. Recall (LoCoMo-dev, as bench_retrieval.py loads and scores it): each conversation is a project; its memories
   are imported (embedded with the default model) and published; every question runs as the local hybrid
   (`Store.search`, mode hybrid) and as the remote hybrid (dense + BM25 fused in Milvus, filtered to that
   project), with both of Milvus's rankers. Evidence recall@5 is pooled over all questions.
2. Publish throughput: memories per second of the first publish of each conversation (vectors already stored).
3. Latency at N memories (synthetic.py texts, RANDOM unit vectors: the engine's cost does not depend on what the
   vectors mean, and embedding 100k texts would take half an hour here): rows upserted straight into a
   collection, then 50 hybrid queries (a random vector + two words) p50/p95, with a project filter
   (every project but one of 20).
4. Delta at N: a local store of N synthetic memories (no embedding model for the bulk), its rows already in the
   collection and in the cursor (as after a publish); 100 memories are edited, forgotten or archived and the
   publish that follows is timed (the scan and hash of N memories, 100 embedded, sent or deleted).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_retrieval as br  # noqa: E402
import synthetic  # noqa: E402
from codememory import Store  # noqa: E402
from codememory.core.config import RemoteConfig  # noqa: E402
from codememory.remote import cursor as cursors  # noqa: E402
from codememory.remote.milvus import MilvusRemote  # noqa: E402
from codememory.remote.org_search import search_remote  # noqa: E402
from codememory.remote.publish import _row, publish  # noqa: E402
from codememory.remote.records import Outgoing, outgoing  # noqa: E402

WORK = HERE / ".work" / "milvus"
QUERIES = 50
PROJECTS = 20  # the synthetic organisation's projects (partition key values)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def recall(db: Path) -> dict[str, Any]:
    os.environ["CODEMEMORY_REMOTE_URI"] = str(db)
    rows: dict[str, list[dict[str, float]]] = {"local hybrid": [], "remote rrf": [], "remote weighted": []}
    publish_rate = []
    for ds in br.locomo_sets():
        store, _info = br.build_store(WORK / "locomo" / ds.store_name, ds.memories_file, reuse=True)
        with store:
            store.config.remote.project = ds.store_name
            started = time.perf_counter()
            done = publish(store)
            publish_rate.append(done.sent / (time.perf_counter() - started))
            keys = br.key_map(store, br.read_jsonl(ds.memories_file), ds.key_field)
            for q in ds.questions:
                gold = [keys.ids.get(e) for e in q.evidence]
                local = store.search(q.text, mode="hybrid", limit=br.K, touch=False)
                rows["local hybrid"].append(br.score([h.memory.id for h in local.hits], gold))
                for ranker in ("rrf", "weighted"):
                    store.config.remote.ranker = ranker
                    hits, status = search_remote(store, q.text, limit=br.K, projects=[ds.store_name])
                    assert status.ok and status.mode == "hybrid", status
                    rows[f"remote {ranker}"].append(br.score([h.id for h in hits], gold))
    return {
        "recall": {arm: br.aggregate(r) for arm, r in rows.items()},
        "publish_per_s": round(statistics.fmean(publish_rate), 1),
    }


def latency(db: Path, n: int, dim: int = 384) -> dict[str, Any]:
    import numpy as np

    cfg = RemoteConfig(uri=str(db), collection=f"bench_{n}")
    rng = np.random.default_rng(0)
    memories = synthetic.generate(n, seed=1)
    with MilvusRemote(cfg) as remote:
        remote.ensure("random", dim)
        started = time.perf_counter()
        for start in range(0, n, 1000):
            chunk = memories[start : start + 1000]
            vectors = rng.standard_normal((len(chunk), dim)).astype("float32")
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            remote.upsert(
                [
                    {
                        "key": f"p{(start + i) % PROJECTS}/mem_{start + i:08x}",
                        "project": f"p{(start + i) % PROJECTS}",
                        "memory_id": f"mem_{start + i:08x}",
                        "text": m["text"],
                        "category": m["category"],
                        "tags": m["tags"][:64],
                        "entities": [],
                        "importance": float(m["importance"]),
                        "source": "",
                        "created_at": m["created_at"],
                        "updated_at": m["updated_at"],
                        "content_hash": "",
                        "dense": vec.tolist(),
                    }
                    for i, (m, vec) in enumerate(zip(chunk, vectors, strict=True))
                ]
            )
        upsert_s = time.perf_counter() - started
        words = synthetic.single_words()
        projects = [f"p{i}" for i in range(PROJECTS)]
        times = []
        for i in range(QUERIES + 3):
            q = rng.standard_normal(dim).astype("float32")
            q /= np.linalg.norm(q)
            text = f"{random.Random(i).choice(words)} {random.Random(i + 1000).choice(words)}"
            expr = f'project != "{projects[i % len(projects)]}"'
            t0 = time.perf_counter()
            remote.hybrid(text, q.tolist(), expr, 10)
            if i >= 3:  # warm-up
                times.append((time.perf_counter() - t0) * 1000)
    return {
        "n": n,
        "upsert_per_s": round(n / upsert_s, 1),
        "query_p50_ms": round(pct(times, 0.5), 1),
        "query_p95_ms": round(pct(times, 0.95), 1),
    }


def delta(db: Path, n: int, changes: int = 100) -> dict[str, Any]:
    """Publishing `changes` edits in a store of `n` (see the module docstring)."""
    import numpy as np

    project = WORK / f"delta-{n}"
    shutil.rmtree(project, ignore_errors=True)
    (project / ".codememory").mkdir(parents=True)
    source = project / "in.jsonl"
    synthetic.write_jsonl(source, n, seed=2)
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"  # the bulk import without embedding (the vectors are
    store, _ = Store.init(project)  # random below; only the changed ones get a real vector in the timed publish)
    store.import_(source)
    store.close()
    del os.environ["CODEMEMORY_EMBEDDING_PROVIDER"]
    os.environ["CODEMEMORY_REMOTE_URI"] = str(db)
    os.environ["CODEMEMORY_REMOTE_COLLECTION"] = f"delta_{n}"
    rng = np.random.default_rng(0)
    with Store.open(project) as store:
        cfg = store.config.remote
        name = "delta"
        store.config.remote.project = name
        model = store.semantic.model or ""
        items = [o for o in outgoing(store, name, model) if isinstance(o, Outgoing)]
        with MilvusRemote(cfg) as remote:
            remote.ensure(model, 384)
            for start in range(0, len(items), 1000):
                chunk = items[start : start + 1000]
                vectors = rng.standard_normal((len(chunk), 384)).astype("float32")
                remote.upsert([_row(o, v.tolist()) for o, v in zip(chunk, vectors, strict=True)])
        cursor = cursors.load(store.root, str(db), cfg.collection, name, model)
        cursor.sent = {o.memory_id: o.content_hash for o in items}
        cursor.save()
        noop_started = time.perf_counter()
        noop = publish(store)
        noop_s = time.perf_counter() - noop_started
        assert noop.sent == 0 and noop.deleted == 0, noop  # the cursor matched the collection
        ids = [o.memory_id for o in items[:changes]]
        for i, mid in enumerate(ids[: changes // 2]):  # half replaced by a new memory, a quarter forgotten, archived
            store.add(f"Replacement {i}: the earlier rule no longer holds after review round {i}", supersedes=[mid])
        store.forget(ids[changes // 2 : changes * 3 // 4])
        store.archive(ids[changes * 3 // 4 :])
        started = time.perf_counter()
        done = publish(store)
        seconds = time.perf_counter() - started
    return {
        "n": n,
        "noop_publish_s": round(noop_s, 2),
        "delta_publish_s": round(seconds, 2),
        "sent": done.sent,
        "deleted": done.deleted,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated collection sizes for latency and delta")
    parser.add_argument("--skip-recall", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results-milvus.json")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="bench-milvus-"))
    os.environ["XDG_STATE_HOME"] = str(home / "state")  # cursors of this run only
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    results: dict[str, Any] = {"date": date.today().isoformat(), "sizes": []}
    if not args.skip_recall:
        results.update(recall(home / "locomo.db"))
    for n in [int(s) for s in args.sizes.split(",") if s]:
        results["sizes"].append({**latency(home / f"lat-{n}.db", n), **delta(home / f"delta-{n}.db", n)})
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"Milvus Lite {results['date']}\n")
    if "recall" in results:
        print("| LoCoMo-dev (5 conversations) | n | recall@5 | recall@10 |\n| --- | --- | --- | --- |")
        for arm, r in results["recall"].items():
            print(f"| {arm} | {r['n']} | {r['r@5']:.3f} | {r['r@10']:.3f} |")
        print(f"\nFirst publish: {results['publish_per_s']} memories/s (vectors stored locally)\n")
    print("| memories | upsert/s | hybrid query p50 ms | p95 ms | publish, nothing changed s | publish 100 changes s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for s in results["sizes"]:
        print(
            f"| {s['n']:,} | {s['upsert_per_s']:,.0f} | {s['query_p50_ms']} | {s['query_p95_ms']} | "
            f"{s['noop_publish_s']} | {s['delta_publish_s']} ({s['sent']} sent, {s['deleted']} deleted) |"
        )
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
