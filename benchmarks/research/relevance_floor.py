"""Calibrate the relevance floor: how far above the closest background sentence (relevance.py) a memory with no
keyword evidence must be.

    python benchmarks/research/relevance_floor.py [--model default] [--out benchmarks/research/relevance-floor.json]

Needs the stores `bench_retrieval.py --model M` built (it reuses them, building them when missing). For every
question of LoCoMo-dev and the coding set (positives: their evidence is in the store) and for the coding questions
asked of each LoCoMo store and LoCoMo questions asked of the coding store (negatives: nothing there answers them),
it runs the product's hybrid search with no floor and records each of the top 10 hits' cosine minus the query's
closest background sentence, whether keywords (or a typo match) found it, and whether it is evidence. Then, per
candidate margin: the recall@5 lost on the positives and the share of negative hits cut.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_retrieval as br  # noqa: E402
from codememory.text.query import parse_query  # noqa: E402

MARGINS = [round(-0.02 + 0.005 * i, 3) for i in range(17)]


def hits(store: Any, question: str) -> list[dict[str, Any]]:
    """The top 10 with no floor, each hit's cosine given relative to the query's background (relevance.py)."""
    from codememory.embedding.relevance import background
    from codememory.retrieval.search import embedding_text

    res = store.search(question, mode="hybrid", limit=10, touch=False, show_held_back=True)
    qvec = store.semantic.embed_query(embedding_text(parse_query(question)))
    refs = background(store.semantic.embedder())
    base = float((refs @ qvec).max())
    out = []
    for h in res.hits:
        ex = h.explain or {}
        cos = ex.get("cosine")
        keyword = h.match in ("exact", "partial", "fuzzy")
        out.append({"id": h.memory.id, "cosine": None if cos is None else cos - base, "keyword": keyword})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default", choices=sorted(br.MODELS))
    parser.add_argument("--out", default=str(HERE / "relevance-floor.json"))
    args = parser.parse_args()
    br.WORK = br.WORK / args.model
    for key, value in br.MODELS[args.model].items():
        os.environ[f"CODEMEMORY_EMBEDDING_{key.upper()}"] = value
    locomo, coding = br.locomo_sets(), br.coding_sets()
    positives: list[tuple[list[dict[str, Any]], set[str], int]] = []
    negatives: list[list[dict[str, Any]]] = []
    coding_questions = [q.text for q in coding[0].questions]
    locomo_questions = [q.text for ds in locomo for q in ds.questions]
    for ds in locomo + coding:
        store, _ = br.build_store(br.WORK / ds.store_name, ds.memories_file, reuse=True)
        with store:
            km = br.key_map(store, br.read_jsonl(ds.memories_file), ds.key_field)
            for q in ds.questions:
                gold = {km.ids[e] for e in q.evidence if e in km.ids}
                positives.append((hits(store, q.text), gold, len(q.evidence)))
            others = coding_questions if ds.name == "locomo" else locomo_questions[::4]
            for text in others[:60]:
                negatives.append(hits(store, text))
    table = []
    for floor in MARGINS:
        lost = 0.0
        for found, gold, n in positives:
            kept = [h for h in found if h["keyword"] or (h["cosine"] is not None and h["cosine"] >= floor)]
            before = sum(1 for h in found[:5] if h["id"] in gold)
            after = sum(1 for h in kept[:5] if h["id"] in gold)
            lost += (before - after) / max(n, 1)
        neg_total = sum(len(f) for f in negatives)
        neg_cut = sum(1 for f in negatives for h in f if not h["keyword"] and (h["cosine"] or 0) < floor)
        neg_all_cut = sum(1 for f in negatives if all(not h["keyword"] and (h["cosine"] or 0) < floor for h in f))
        table.append(
            {
                "floor": floor,
                "recall5_change": round(-lost / len(positives), 4),
                "negative_hits_cut": round(neg_cut / max(neg_total, 1), 3),
                "negative_queries_empty": round(neg_all_cut / max(len(negatives), 1), 3),
            }
        )
        print(json.dumps(table[-1]))
    Path(args.out).write_text(json.dumps({"model": br.MODELS[args.model], "table": table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
