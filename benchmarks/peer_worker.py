"""One long-lived search worker for bench_peers.py: loads a store of synthetic memories into one system, then answers
queries read from standard input, one JSON line each, with the in-process milliseconds of the search.

    <venv>/bin/python benchmarks/peer_worker.py SYSTEM WORKDIR MEMORIES.jsonl [MODEL_DIR]

SYSTEM: `codememory` (hybrid search, its default model), `memsearch` (Milvus Lite, dense + BM25, its local
sentence-transformers provider), `mcp-memory-service` (sqlite-vec, `retrieve_hybrid`, sentence-transformers; where
Python's sqlite3 cannot load extensions, pysqlite3-binary in the peers' venv stands in for it).
The peers run from a scratch venv that has them installed (see bench_peers.py); none of their code is here.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

POOL = 300  # texts each system's own model embeds for real; every stored vector is a mix of two of them


def pooled(embed: Any, texts: list[str]) -> Any:
    """Stored vectors for `texts` from a pool of POOL real ones of the same model (the search path, query embedding
    included, is untouched: only loading is shortened; embedding 10k memories takes minutes per system here)."""
    import numpy as np

    pool = np.asarray(embed([r for r in texts[:POOL]]), dtype=np.float32)
    pool /= np.linalg.norm(pool, axis=1, keepdims=True)

    def vectors(batch: list[str]) -> Any:
        idx = np.fromiter((int(hashlib.sha1(t.encode()).hexdigest()[:8], 16) for t in batch), dtype=np.int64)
        mixed = pool[idx % POOL] + 0.35 * pool[(idx // POOL) % POOL]
        return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)

    return vectors


def codememory_worker(work: Path, records: list[dict[str, Any]], _model: str) -> Any:
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import vector_pool
    from codememory import Store

    store, _ = Store.init(work)
    if not (work / "loaded").exists():
        os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
        with Store.open(work) as plain:
            plain.import_(work / "memories.jsonl")
        del os.environ["CODEMEMORY_EMBEDDING_PROVIDER"]
        name, pool = vector_pool.pool_vectors()
        vector_pool.load_into(store, name, pool)
        store.semantic.maintain()
        (work / "loaded").write_text("ok")

    def search(q: str) -> int:
        res = store.search(q, limit=10, touch=False)
        if res.degraded:
            sys.exit(f"codememory degraded: {res.degraded_reason}")
        return len(res.hits)

    return search


def memsearch_worker(work: Path, records: list[dict[str, Any]], model: str) -> Any:
    from memsearch import MemSearch  # type: ignore[import-not-found]

    notes = work / "notes"
    if not notes.exists():
        notes.mkdir()
        per_file = 100
        for i in range(0, len(records), per_file):
            body = "".join(f"## {r['id']}\n\n{r['text']}\n\n" for r in records[i : i + per_file])
            (notes / f"notes-{i // per_file:05d}.md").write_text(body)
    ms = MemSearch([str(notes)], embedding_provider="local", embedding_model=model, milvus_uri=str(work / "milvus.db"))
    loop = asyncio.new_event_loop()
    if not (work / "loaded").exists():
        real = ms._embedder.embed
        vectors = pooled(lambda texts: loop.run_until_complete(real(texts)), [r["text"] for r in records])

        async def fake(texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in vectors(texts)]

        ms._embedder.embed = fake
        loop.run_until_complete(ms.index())
        ms._embedder.embed = real
        (work / "loaded").write_text("ok")

    def search(q: str) -> int:
        return len(loop.run_until_complete(ms.search(q, top_k=10)))

    return search


def mcp_memory_service_worker(work: Path, records: list[dict[str, Any]], model: str) -> Any:
    try:  # sqlite-vec is a loadable extension: a Python whose sqlite3 cannot load one gets pysqlite3's SQLite
        import pysqlite3.dbapi2  # type: ignore[import-not-found]

        sys.modules["sqlite3"] = pysqlite3.dbapi2
    except ImportError:
        pass
    from mcp_memory_service.models.memory import Memory  # type: ignore[import-not-found]
    from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage  # type: ignore[import-not-found]

    storage = SqliteVecMemoryStorage(str(work / "memory.db"), embedding_model=model)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(storage.initialize())
    if not (work / "loaded").exists():
        real = storage.embedding_model
        vectors = pooled(lambda texts: real.encode(texts, convert_to_numpy=True), [r["text"] for r in records])

        class Pooled:
            def encode(self, texts: list[str], **_kw: Any) -> Any:
                return vectors(list(texts))

            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

        storage.embedding_model = Pooled()
        batch = [
            Memory(content=r["text"], content_hash=hashlib.sha256(r["text"].encode()).hexdigest(), tags=r["tags"])
            for r in records
        ]
        for i in range(0, len(batch), 500):
            loop.run_until_complete(storage.store_batch(batch[i : i + 500]))
        storage.embedding_model = real
        (work / "loaded").write_text("ok")

    def search(q: str) -> int:
        return len(loop.run_until_complete(storage.retrieve_hybrid(q, n_results=10)))

    return search


WORKERS = {
    "codememory": codememory_worker,
    "memsearch": memsearch_worker,
    "mcp-memory-service": mcp_memory_service_worker,
}


def main() -> None:
    system, work, source = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    model = sys.argv[4] if len(sys.argv) > 4 else ""
    work.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    if not (work / "memories.jsonl").exists():
        (work / "memories.jsonl").write_text(source.read_text())
    t0 = time.perf_counter()
    search = WORKERS[system](work, records, model)
    print(json.dumps({"ready": True, "load_s": round(time.perf_counter() - t0, 1)}), flush=True)
    for line in sys.stdin:
        q = json.loads(line)["q"]
        t0 = time.perf_counter()
        hits = search(q)
        print(json.dumps({"ms": (time.perf_counter() - t0) * 1000, "hits": hits}), flush=True)


if __name__ == "__main__":
    main()
