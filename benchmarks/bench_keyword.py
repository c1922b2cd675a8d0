"""Keyword-only retrieval quality: what `codememory search "<question>"` finds with no embedding model
(`[embedding] provider = "none"`), on LoCoMo-dev and the coding set.

    python benchmarks/bench_keyword.py [--sets locomo,coding] [--out benchmarks/results-keyword.json]

Each store is built under benchmarks/.work/keyword/ (gitignored) with provider "none" written in its
`.codememory/config.toml`, so nothing is embedded and every search is keyword-only whatever the default
provider is. Arms, top 10 each, touch=False:

- `search`: `Store.search(q, limit=10)`, exactly what the CLI runs by default (and MCP `memory_search`);
- `bm25-nostop`: the reference of bench_retrieval.py, FTS5 BM25 over the OR of the question's words
  after dropping its 55 stopwords (no all-words tier, no typo pass).

Evidence mapping and metrics are bench_retrieval.py's (recall@5, recall@10, hit@5 per question, means
pooled over a set's stores; per LoCoMo category or coding kind).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import log, machine
from bench_retrieval import (
    DataSet,
    aggregate,
    bm25_ids,
    coding_sets,
    f3,
    key_map,
    locomo_sets,
    nostop_query,
    read_jsonl,
    score,
    src_digest,
)
from codememory import Store

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "keyword"
NO_MODEL = '[embedding]\nprovider = "none"\n'
K = 10
ARMS = ("search", "bm25-nostop")
TARGET_LOCOMO_R5 = 0.55  # issue 12: keyword-only recall@5 on LoCoMo-dev


def build_store(project: Path, source: Path) -> Store:
    shutil.rmtree(project, ignore_errors=True)
    (project / ".codememory").mkdir(parents=True)
    (project / ".codememory" / "config.toml").write_text(NO_MODEL, encoding="utf-8")
    store, _ = Store.init(project)
    report = store.import_(source)
    if report.invalid:
        raise RuntimeError(f"{source}: invalid lines {report.to_dict()['invalid'][:3]}")
    return store


def evaluate(sets: list[DataSet]) -> dict[str, Any]:
    per_q: list[dict[str, Any]] = []
    matches: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    query_ms: list[float] = []
    for ds in sets:
        with build_store(WORK / ds.store_name, ds.memories_file) as store:
            km = key_map(store, read_jsonl(ds.memories_file), ds.key_field)
            pk_to_id = {pk: mid for mid, pk in store.db.get_pk_map(list(km.ids.values()))}
            for q in ds.questions:
                gold = [km.ids.get(e) for e in q.evidence]
                t0 = time.perf_counter()
                res = store.search(q.text, limit=K, touch=False)
                query_ms.append((time.perf_counter() - t0) * 1000)
                modes[res.mode] += 1
                matches.update(h.match for h in res.hits[:5])
                runs = {
                    "search": [h.memory.id for h in res.hits],
                    "bm25-nostop": bm25_ids(store, nostop_query(q.text), pk_to_id),
                }
                per_q.append({"category": q.category, "scores": {arm: score(ids, gold) for arm, ids in runs.items()}})
        log(f"[{sets[0].name}] {ds.store_name}: {len(ds.questions)} questions")
    query_ms.sort()
    return {
        "questions": len(per_q),
        "overall": {arm: aggregate([q["scores"][arm] for q in per_q]) for arm in ARMS},
        "by_category": {
            cat: {arm: aggregate([q["scores"][arm] for q in per_q if q["category"] == cat]) for arm in ARMS}
            for cat in sets[0].categories
        },
        "top5_match_kinds": dict(matches),
        "result_modes": dict(modes),
        "search_p50_ms": round(query_ms[len(query_ms) // 2], 2),
    }


def n_of(res: dict[str, Any], category: str) -> int:
    n: int = res["by_category"][category]["search"]["n"]
    return n


def table(name: str, res: dict[str, Any]) -> str:
    cats = list(res["by_category"])
    lines = [
        f"#### {name}: {res['questions']} questions, keyword only (recall@5 per category)",
        "",
        "| arm | R@5 | R@10 | H@5 | " + " | ".join(f"{c} ({n_of(res, c)})" for c in cats) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(cats),
    ]
    for arm in ARMS:
        o = res["overall"][arm]
        cells = [f3(o["r@5"]), f3(o["r@10"]), f3(o["h@5"])] + [f3(res["by_category"][c][arm].get("r@5")) for c in cats]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    lines += ["", f"Top-5 hits by pass: {res['top5_match_kinds']}; search p50 {res['search_p50_ms']} ms."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="locomo,coding", help="comma-separated: locomo, coding")
    parser.add_argument("--out", default=str(HERE / "results-keyword.json"), help="JSON results file")
    args = parser.parse_args()
    loaders = {"locomo": locomo_sets, "coding": coding_sets}
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    if unknown := [s for s in names if s not in loaders]:
        sys.exit(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(loaders)}")
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "command": " ".join(["python benchmarks/bench_keyword.py", *sys.argv[1:]]),
        "machine": {**machine(), "src_sha1": src_digest()},
        "config": {"embedding": {"provider": "none"}, "k": K, "target_locomo_r5": TARGET_LOCOMO_R5},
        "sets": {},
    }
    for name in names:
        results["sets"][name] = evaluate(loaders[name]())
        o = results["sets"][name]["overall"]
        log(f"[{name}] R@5 " + ", ".join(f"{arm} {o[arm]['r@5']:.3f}" for arm in ARMS))
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n\n".join(table(name, res) for name, res in results["sets"].items()))
    if "locomo" in results["sets"]:
        r5 = results["sets"]["locomo"]["overall"]["search"]["r@5"]
        verdict = "met" if r5 >= TARGET_LOCOMO_R5 else "NOT met"
        print(f"\nLoCoMo-dev keyword-only recall@5 {r5:.3f} (target ≥ {TARGET_LOCOMO_R5}): {verdict}")


if __name__ == "__main__":
    main()
