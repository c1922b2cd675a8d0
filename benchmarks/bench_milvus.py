"""The organisation's memory on Milvus Lite: recall of the remote hybrid against the local hybrid, publish
throughput, query latency by collection size, and the cost of publishing a delta.

    python benchmarks/bench_milvus.py [--sizes 10000,100000] [--skip-recall] [--out benchmarks/results-milvus.json]

1. Recall (LoCoMo-dev, as bench_retrieval.py loads and scores it): each conversation is a project; its memories
   are imported (embedded with the default model) and published; every question runs as the local hybrid
   (`Store.search`, mode hybrid) and its two legs alone, as each remote leg alone (to find where the two sides
   differ), and as the remote search with each ranker (`ARMS`), filtered to that project. Evidence recall@5 is
   pooled over all questions.
2. Publish throughput: memories per second of the first publish of each conversation (vectors already stored).
3. Latency at N memories (synthetic.py texts, RANDOM unit vectors: the engine's cost does not depend on what the
   vectors mean, and embedding 100k texts would take half an hour here): rows upserted straight into a
   collection (sessions of 20 turns), then hybrid queries (a random vector + two words) with a project filter
   (every project but one of 20): 10 opening a new connection each (as every search did before), 50 through a
   kept connection (the daemon's), 50 ranked by the local fusion (ranker "local", the default).
4. Delta at N: a local store of N synthetic memories (no embedding model for the bulk), its rows already in the
   collection and in the cursor (as after a publish); a publish with no fingerprints in the cursor (every row
   rebuilt, as before) and one with them are timed; then 100 memories are edited, forgotten or archived and the
   publish that follows is timed.
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
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_retrieval as br  # noqa: E402
import synthetic  # noqa: E402
from codememory import Store  # noqa: E402
from codememory.core.config import RemoteConfig  # noqa: E402
from codememory.remote import cursor as cursors  # noqa: E402
from codememory.remote import org_fusion  # noqa: E402
from codememory.remote.milvus import MilvusRemote, connect, reuse_connections  # noqa: E402
from codememory.remote.org_search import search_remote  # noqa: E402
from codememory.remote.publish import _row, publish  # noqa: E402
from codememory.remote.records import scan  # noqa: E402

WORK = HERE / ".work" / "milvus"
QUERIES = 50
PROJECTS = 20  # the synthetic organisation's projects (partition key values)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


ARMS = {  # what each recall row ranks (see `recall`)
    "local hybrid": "Store.search, mode hybrid (z-scored BM25 0.6 + cosine 0.4, neighbouring turns, boosts)",
    "local BM25 leg": "FTS5 BM25 over the OR of the query's content words (the hybrid's keyword leg)",
    "local dense leg": "the query's e5 vector against the stored vectors (the hybrid's meaning leg)",
    "remote BM25 leg, raw question": "Milvus BM25 over the question as typed",
    "remote BM25 leg": "Milvus BM25 over the query's content words (what is sent now)",
    "remote dense leg": "Milvus HNSW COSINE, the same query vector",
    "remote rrf, 10 per leg, raw question (before)": "RRFRanker(60) as first shipped",
    "remote rrf": "RRFRanker(60), 50 per leg, content words",
    "remote weighted": "WeightedRanker(0.5, 0.5), 50 per leg, content words",
    "remote local fusion (default)": (
        "ranker local: 50 per leg from Milvus + neighbouring turns, ranked and decided as locally "
        "(fusion.order, decision.decide)"
    ),
}


PRODUCT_ARMS = (("remote rrf", "rrf"), ("remote weighted", "weighted"), ("remote local fusion (default)", "local"))


def recall(db: Path) -> dict[str, Any]:
    from codememory.retrieval.search import embedding_text
    from codememory.store.filters import Filters
    from codememory.text.query import parse_query

    os.environ["CODEMEMORY_REMOTE_URI"] = str(db)
    rows: dict[str, list[dict[str, float]]] = {arm: [] for arm in ARMS}
    publish_rate = []
    for ds in br.locomo_sets():
        store, _info = br.build_store(WORK / "locomo" / ds.store_name, ds.memories_file, reuse=True)
        with store:
            store.config.remote.project = ds.store_name
            started = time.perf_counter()
            done = publish(store)
            publish_rate.append(done.sent / (time.perf_counter() - started))
            keys = br.key_map(store, br.read_jsonl(ds.memories_file), ds.key_field)
            ids = {pk: mid for mid, pk in dict(store.db.get_pk_map([m.id for m in store.db.iter_all()])).items()}
            expr = f'project == "{ds.store_name}"'
            reuse_connections()  # one connection for the diagnostic legs and search_remote alike
            with connect(store.config.remote) as remote:
                remote.open()
                for q in ds.questions:
                    gold = [keys.ids.get(e) for e in q.evidence]

                    def add(arm: str, found: list[str], gold: list[str | None] = gold) -> None:
                        rows[arm].append(br.score(found, gold))

                    local = store.search(q.text, mode="hybrid", limit=br.K, touch=False)
                    add("local hybrid", [h.memory.id for h in local.hits])
                    parsed = parse_query(q.text)
                    fts = parsed.keyword_fts()
                    lex = store.db.fts_search(fts, Filters(), br.K) if fts else []
                    add("local BM25 leg", [ids[pk] for pk, _ in lex])
                    qvec = store.semantic.embed_query(embedding_text(parsed))
                    assert qvec is not None
                    add("local dense leg", [ids[pk] for pk, _ in store.semantic.neighbours(qvec, br.K, Filters())])
                    words = " ".join(parsed.content_words()) or embedding_text(parsed)
                    vector = [float(x) for x in qvec.reshape(-1)]
                    add(
                        "remote BM25 leg, raw question",
                        [r["memory_id"] for r in remote.leg("sparse", q.text, expr, br.K)],
                    )
                    add("remote BM25 leg", [r["memory_id"] for r in remote.leg("sparse", words, expr, br.K)])
                    add("remote dense leg", [r["memory_id"] for r in remote.leg("dense", vector, expr, br.K)])
                    before = remote.hybrid(q.text, vector, expr, br.K, pool=br.K, ranker="rrf")
                    add("remote rrf, 10 per leg, raw question (before)", [r["memory_id"] for r in before])
                    for arm, ranker in (
                        ("remote rrf", "rrf"),
                        ("remote weighted", "weighted"),
                        ("remote local fusion (default)", "local"),
                    ):
                        store.config.remote.ranker = ranker
                        hits, status = search_remote(store, q.text, limit=br.K, projects=[ds.store_name])
                        assert status.ok and status.mode == "hybrid", status
                        add(arm, [h.id for h in hits])
    reuse_connections(False)
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
                        "key": f"p{((start + i) // 20) % PROJECTS}/mem_{start + i:08x}",
                        "project": f"p{((start + i) // 20) % PROJECTS}",
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
                        "session": f"s{(start + i) // 20}",
                        "seq": (start + i) % 20,
                        "dense": vec.tolist(),
                    }
                    for i, (m, vec) in enumerate(zip(chunk, vectors, strict=True))
                ]
            )
        upsert_s = time.perf_counter() - started
    from codememory.text.query import parse_query

    words = synthetic.single_words()
    projects = [f"p{i}" for i in range(PROJECTS)]

    def query(i: int) -> tuple[str, list[float], str]:
        q = rng.standard_normal(dim).astype("float32")
        q /= np.linalg.norm(q)
        text = f"{random.Random(i).choice(words)} {random.Random(i + 1000).choice(words)}"
        return text, q.tolist(), f'project != "{projects[i % len(projects)]}"'

    def timed(run: Any, count: int) -> list[float]:
        times = []
        for i in range(count + 3):
            text, vector, expr = query(i)
            t0 = time.perf_counter()
            run(text, vector, expr)
            if i >= 3:  # warm-up
                times.append((time.perf_counter() - t0) * 1000)
        return times

    def fresh(text: str, vector: list[float], expr: str) -> None:  # as every search did before: connect,
        with MilvusRemote(cfg) as remote:  # describe and load the collection, search, close
            remote.open()
            remote.hybrid(text, vector, expr, 10)

    fresh_times = timed(fresh, 10)
    reuse_connections()

    def kept(text: str, vector: list[float], expr: str) -> None:
        with connect(cfg) as remote:
            remote.open()
            remote.hybrid(text, vector, expr, 10)

    def fused(text: str, vector: list[float], expr: str) -> None:
        with connect(cfg) as remote:
            remote.open()
            org_fusion.fused(remote, parse_query(text), text, vector, expr, 10, 50, 0.4, datetime.now(UTC))

    times = timed(kept, QUERIES)
    fused_times = timed(fused, QUERIES)
    reuse_connections(False)
    return {
        "n": n,
        "upsert_per_s": round(n / upsert_s, 1),
        "fresh_connection_p50_ms": round(pct(fresh_times, 0.5), 1),
        "query_p50_ms": round(pct(times, 0.5), 1),
        "local_fusion_p50_ms": round(pct(fused_times, 0.5), 1),
        "local_fusion_p95_ms": round(pct(fused_times, 0.95), 1),
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
        items = scan(store, name, model, {}, {}).rebuilt
        with MilvusRemote(cfg) as remote:
            remote.ensure(model, 384)
            for start in range(0, len(items), 1000):
                chunk = items[start : start + 1000]
                vectors = rng.standard_normal((len(chunk), 384)).astype("float32")
                remote.upsert([_row(o, v.tolist()) for o, v in zip(chunk, vectors, strict=True)])
        cursor = cursors.load(store.root, str(db), cfg.collection, name, model)
        cursor.sent = {o.memory_id: o.content_hash for o in items}
        cursor.save()
        noop_started = time.perf_counter()  # no fingerprints in the cursor yet: every memory is rebuilt and
        noop = publish(store)  # hashed, as every publish did before the cursor kept them
        noop_s = time.perf_counter() - noop_started
        assert noop.sent == 0 and noop.deleted == 0, noop  # the cursor matched the collection
        noop_started = time.perf_counter()
        noop = publish(store)  # fingerprints recorded: one SQL row per memory
        fast_s = time.perf_counter() - noop_started
        assert noop.sent == 0 and noop.deleted == 0, noop
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
        "noop_publish_no_fingerprints_s": round(noop_s, 2),
        "noop_publish_s": round(fast_s, 2),
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
        print("| LoCoMo-dev (5 conversations) | n | recall@5 | recall@10 | what it ranks |")
        print("| --- | --- | --- | --- | --- |")
        for arm, r in results["recall"].items():
            print(f"| {arm} | {r['n']} | {r['r@5']:.3f} | {r['r@10']:.3f} | {ARMS[arm]} |")
        print(f"\nFirst publish: {results['publish_per_s']} memories/s (vectors stored locally)\n")
    print(
        "| memories | upsert/s | rrf query p50 / p95 ms, new connection each | kept connection | local fusion "
        "(default) | publish, nothing changed: every row rebuilt / fingerprints | publish 100 changes |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for s in results["sizes"]:
        print(
            f"| {s['n']:,} | {s['upsert_per_s']:,.0f} | {s['fresh_connection_p50_ms']} | "
            f"{s['query_p50_ms']} / {s['query_p95_ms']} | {s['local_fusion_p50_ms']} / {s['local_fusion_p95_ms']} | "
            f"{s['noop_publish_no_fingerprints_s']} s / {s['noop_publish_s']} s | "
            f"{s['delta_publish_s']} s ({s['sent']} sent, {s['deleted']} deleted) |"
        )
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
