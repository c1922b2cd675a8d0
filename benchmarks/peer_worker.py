"""One long-lived search worker for bench_peers.py: loads a store of synthetic memories into one system, then answers
queries read from standard input, one JSON line each, with the in-process milliseconds of the search.

    <venv>/bin/python benchmarks/peer_worker.py SYSTEM WORKDIR MEMORIES.jsonl [MODEL_DIR]

SYSTEM: `codememory` (hybrid search, its default model), `memsearch` (Milvus Lite, dense + BM25, its local
sentence-transformers provider), `mcp-memory-service` (sqlite-vec, `retrieve_hybrid`, sentence-transformers).
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


def codememory_worker(work: Path, records: list[dict[str, Any]], _model: str) -> Any:
    from codememory import Store

    store, _ = Store.init(work)
    with_vectors = work / "loaded"
    if not with_vectors.exists():
        store.import_(work / "memories.jsonl")
        with_vectors.write_text("ok")

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
        loop.run_until_complete(ms.index())
        (work / "loaded").write_text("ok")

    def search(q: str) -> int:
        return len(loop.run_until_complete(ms.search(q, top_k=10)))

    return search


def mcp_memory_service_worker(work: Path, records: list[dict[str, Any]], model: str) -> Any:
    from mcp_memory_service.models.memory import Memory  # type: ignore[import-not-found]
    from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage  # type: ignore[import-not-found]

    storage = SqliteVecMemoryStorage(str(work / "memory.db"), embedding_model=model)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(storage.initialize())
    if not (work / "loaded").exists():
        batch = [
            Memory(content=r["text"], content_hash=hashlib.sha256(r["text"].encode()).hexdigest(), tags=r["tags"])
            for r in records
        ]
        for i in range(0, len(batch), 500):
            loop.run_until_complete(storage.store_batch(batch[i : i + 500]))
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
