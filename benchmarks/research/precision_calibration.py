"""Fit the relevance decision (src/codememory/retrieval/evidence.py) for one embedding model on a labelled split.

    python benchmarks/research/precision_calibration.py [--split dev] [--model default|minilm] [--out FILE]

Uses the stores `bench_precision.py --split SPLIT --model M` builds (building them when missing). For every query it
runs the product's search with every candidate listed (`show_held_back=True`, limit 200) and records each
candidate's evidence from its explain: `keyword` (BM25 over the query's total word weight), `meaning` (cosine as a
z-score against the background sentences) and `all_words`; a candidate is positive when it is one of the query's
answers or also_relevant memories. Then it fits p(relevant) = sigmoid(k·K + m·M + c) by logistic regression
(K clipped to [0, 1]; candidates holding every word are left out of the fit, they are always shown), and prints, for
a range of bars, what search would score on the split with that decision (answer@1, precision, absent → nothing,
recall@5), so the bar can be chosen. Never run it on the judge split.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_precision as bp  # noqa: E402


def collect(split: str, model: str) -> list[dict[str, Any]]:
    """Per query: its kind, answers, relevant keys and every candidate in rank order with its evidence."""
    bp.set_model(model)
    out = []
    for project in bp.load_split(split):
        key_of = {v: k for k, v in project.ids.items()}
        store = bp.build_store(project, bp.store_dir(model, split, project), reuse=True)
        with store:
            for q in project.queries:
                res = store.search(q.text, limit=200, touch=False, show_held_back=True)
                cands = []
                for h in res.hits:
                    ex = h.explain
                    cands.append(
                        {
                            "key": key_of.get(h.memory.id),
                            "keyword": float(ex.get("keyword") or 0.0),
                            "meaning": ex.get("meaning"),
                            "all_words": bool(ex.get("all_words")),
                            "likelihood": ex.get("likelihood"),
                            "held_back": h.held_back,
                            "match": h.match,
                        }
                    )
                out.append(
                    {
                        "project": project.name,
                        "q": q.text,
                        "kind": q.kind,
                        "answers": q.answers,
                        "relevant": q.answers + q.also,
                        "candidates": cands,
                    }
                )
    return out


def features(c: dict[str, Any]) -> list[float]:
    k = min(max(c["keyword"], 0.0), 1.0)
    m = c["meaning"] if c["meaning"] is not None else 0.0
    return [k, m]


def fit(queries: list[dict[str, Any]], l2: float = 1.0) -> list[float]:
    """Logistic regression by Newton's method (numpy), weights [k, m, k·m, bias]."""
    import numpy as np

    xs, ys = [], []
    for q in queries:
        for c in q["candidates"]:
            if c["all_words"] or c["likelihood"] is None:
                continue
            xs.append([*features(c), 1.0])
            ys.append(1.0 if c["key"] in q["relevant"] else 0.0)
    x, y = np.array(xs), np.array(ys)
    w = np.zeros(x.shape[1])
    reg = np.eye(x.shape[1]) * l2
    reg[-1, -1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        grad = x.T @ (p - y) + reg @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return [round(float(v), 3) for v in w]


def score(queries: list[dict[str, Any]], w: list[float], bar: float) -> dict[str, float]:
    """What search would return with this decision: candidates in the search's own order, kept when all_words or
    p >= bar, at most 10."""
    a1, rec, absent, good, shown, answerable, n_absent = 0.0, 0.0, 0.0, 0, 0, 0, 0
    for q in queries:
        kept = []
        for c in q["candidates"]:
            x = sum(a * b for a, b in zip([*features(c), 1.0], w, strict=True))
            p = 1.0 / (1.0 + math.exp(-x))
            if c["all_words"] or p >= bar:
                kept.append(c["key"])
            if len(kept) == bp.LIMIT:
                break
        shown += len(kept)
        good += sum(1 for k in kept if k in q["relevant"])
        if q["answers"]:
            answerable += 1
            a1 += float(bool(kept) and kept[0] in q["answers"])
            rec += len(set(kept[:5]) & set(q["answers"])) / len(q["answers"])
        else:
            n_absent += 1
            absent += float(not kept)
    return {
        "bar": bar,
        "answer_at_1": round(a1 / max(answerable, 1), 3),
        "precision": round(good / max(shown, 1), 3),
        "absent_empty": round(absent / max(n_absent, 1), 3),
        "recall_at_5": round(rec / max(answerable, 1), 3),
        "per_query": round(shown / max(len(queries), 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--model", default="default", choices=sorted(bp.MODELS))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--dump", type=Path, help="also write the collected candidates here")
    args = parser.parse_args()
    if args.split == "judge":
        sys.exit("the judge split is never used for calibration")
    queries = collect(args.split, args.model)
    if args.dump:
        args.dump.write_text(json.dumps(queries) + "\n")
    w = fit(queries)
    print("weights [keyword, meaning, bias]:", w)
    table = [score(queries, w, bar / 40) for bar in range(1, 30)]
    for row in table:
        print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, "model": args.model, "weights": w, "table": table}) + "\n")


if __name__ == "__main__":
    main()
