"""Does an everyday word that no memory holds say less about "the store cannot answer this" than a name does?

    python benchmarks/research/unknown_words_study.py [--words /usr/share/dict/american-english-small]

Search's relevance decision (src/codememory/retrieval/decision.py) raises the bar a query's best candidate must clear
by `Bars.unknown` × the share of the query's word weight that no memory holds. On the released precision splits many
answerable questions that return nothing are held back by everyday words ("right", "many", "order", "ship") while
the unknown words of questions nothing answers look like names ("kafka", "pagerduty"). This study measures, with each
released split left out in turn, two changes in what that share counts:

- **everyday**: an unknown word in a list of common English words (SCOWL size 35, as Debian's `wamerican-small`
  ships it; lower-case entries only) and not a name in the technical vocabulary (src/codememory/data/
  tech_vocabulary.txt: "celery", "flask", "swift") counts `alpha` of its weight (0: not at all), with the unknown bar
  re-chosen beside it;
- **paraphrased**: an unknown word counts nothing when one of the query's best candidates is, among all the store's
  memories, the nearest in meaning to the word alone (its vector against theirs): evidence that the memory says the
  word another way ("ship" → "deploy"); for everyday words only, or for every unknown word.

Every query of every split goes once through `Store.search` (the CLI's defaults, the stores of
`benchmarks/bench_precision.py --reuse`); the decision's inputs (each candidate's likelihoods, the bars, the query's
word weights and unknown words) are recorded, and each variant re-runs only the decision (`decision.decide`) on
them: a re-run with the shipped share reproduces every query's results exactly (checked, printed). The objective
that chooses a variant on the other four splits is bench_precision's: the sum of answer@1, precision,
absent → nothing and recall@5, each capped at its target. Results: benchmarks/README.md, "Precision on project-sized
stores".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_precision as bp  # noqa: E402

SPLITS = ["dev", "judge", "judge2", "judge3", "judge4"]
TECH_VOCABULARY = HERE.parent.parent / "src" / "codememory" / "data" / "tech_vocabulary.txt"


def tech_words() -> set[str]:
    out: set[str] = set()
    for line in TECH_VOCABULARY.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        for name in [parts[0], *(parts[2].split(",") if len(parts) > 2 and parts[2] else [])]:
            out.update(name.split())
    return out


def record() -> list[dict[str, Any]]:
    """Every query's decision inputs, and for each unknown word the cosine of its vector to every memory."""
    import codememory.retrieval.search as search_module
    from codememory.retrieval.query_words import query_words
    from codememory.text.query import parse_query

    seen: dict[str, Any] = {}
    decide = search_module.decide

    def spy(order: Any, bars: Any, unknown_share: float = 0.0) -> Any:
        seen.update(order=order, bars=bars, share=unknown_share)
        return decide(order, bars, unknown_share)

    search_module.decide = spy  # type: ignore[assignment]
    bp.set_model("default")
    rows = []
    for split in SPLITS:
        for project in bp.load_split(split):
            store = bp.build_store(project, bp.store_dir("default", split, project), True)
            key_of = {v: k for k, v in project.ids.items()}
            pk_key = {pk: key_of.get(mid, mid) for pk, mid in store.db.conn.execute("select pk, id from memories")}
            vectors = store.semantic.vectors(list(pk_key))
            keys = [pk_key[pk] for pk in vectors]
            matrix = np.stack([vectors[pk] for pk in vectors])
            nearest: dict[str, str] = {}
            for q in project.queries:
                seen.clear()
                res = store.search(q.text, limit=bp.LIMIT, touch=False)
                qw = query_words(store.db, parse_query(q.text))
                unknown = [w for w in qw.content if w not in qw.corrections and not qw.counts.get(w, 0)]
                for w in unknown:
                    if w not in nearest:
                        vec = store.semantic.embed_query(w)
                        nearest[w] = keys[int(np.argmax(matrix @ vec))]
                rows.append(
                    {
                        "split": split,
                        "q": q.text,
                        "answers": q.answers,
                        "also": q.also,
                        "share": seen.get("share", 0.0),
                        "bars": seen.get("bars"),
                        "weights": qw.weights(),
                        "unknown": unknown,
                        "nearest": {w: nearest[w] for w in unknown},
                        "ranked": [
                            (pk_key.get(e[1], "?"), e[3].get("likelihood"), e[3].get("background_likelihood"))
                            for e in seen.get("order", [])
                        ],
                        "returned": [key_of.get(h.memory.id, h.memory.id) for h in res.hits],
                    }
                )
    return rows


def returned(row: dict[str, Any], share: float, unknown_bar: float | None = None) -> list[str]:
    from dataclasses import replace

    from codememory.retrieval.decision import decide

    bars = row["bars"]
    if bars is None:
        return list(row["returned"])
    if unknown_bar is not None:
        bars = replace(bars, unknown=unknown_bar)
    order = [
        (0.0, i, "", {k: v for k, v in (("likelihood", p), ("background_likelihood", bg)) if v is not None})
        for i, (_, p, bg) in enumerate(row["ranked"])
    ]
    kept, _ = decide(order, bars, share)
    return [row["ranked"][e[1]][0] for e in kept[: bp.LIMIT]]


def figures(rows: list[dict[str, Any]], results: list[list[str]]) -> tuple[float, float, float, float]:
    answerable = [(r, got) for r, got in zip(rows, results, strict=True) if r["answers"]]
    absent = [got for r, got in zip(rows, results, strict=True) if not r["answers"]]
    shown = sum(len(got) for got in results)
    good = sum(k in r["answers"] or k in r["also"] for r, got in zip(rows, results, strict=True) for k in got)
    return (
        sum(bool(got) and got[0] in r["answers"] for r, got in answerable) / len(answerable),
        good / shown if shown else 0.0,
        sum(not got for got in absent) / len(absent),
        sum(len(set(got[:5]) & set(r["answers"])) / len(r["answers"]) for r, got in answerable) / len(answerable),
    )


def objective(f: tuple[float, float, float, float]) -> float:
    targets = bp.TARGETS
    return sum(min(v, t) for v, t in zip(f, (targets[k] for k in targets), strict=True))


def causes(rows: list[dict[str, Any]]) -> None:
    """Why an answerable question's first result is not an answer, counted over the splits."""
    from collections import Counter

    counted: Counter[str] = Counter()
    for r in (r for r in rows if r["answers"]):
        got = r["returned"]
        if got and got[0] in r["answers"]:
            continue
        keys = [e[0] for e in r["ranked"]]
        at = min((keys.index(a) for a in r["answers"] if a in keys), default=None)
        where = "not a candidate" if at is None else "1st" if at == 0 else "2nd-5th" if at < 5 else "6th or later"
        if not got:
            best = max((e[1] for e in r["ranked"] if e[1] is not None), default=0.0)
            why = "unknown words raised the bar" if r["bars"] and best >= r["bars"].answer else "best under the bar"
            counted[f"nothing shown ({why}); the answer ranked {where}"] += 1
        else:
            top = "an also-relevant memory" if got[0] in r["also"] else "an unrelated memory"
            counted[f"{top} first; the answer ranked {where}"] += 1
    print(f"\n| why the first result is not an answer (answerable questions, {len(SPLITS)} splits) | questions |")
    print("|---|---:|")
    for why, n in counted.most_common():
        print(f"| {why} | {n} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=Path, default=Path("/usr/share/dict/american-english-small"))
    args = parser.parse_args()
    if not args.words.exists():
        sys.exit(f"no word list at {args.words} (Debian: apt-get install wamerican-small)")
    everyday = {
        w for w in args.words.read_text(encoding="utf-8", errors="replace").split() if w.isalpha() and w.islower()
    } - tech_words()
    rows = record()
    mismatched = sum(returned(r, r["share"]) != r["returned"][: bp.LIMIT] for r in rows)
    print(f"{len(rows)} queries; the decision re-run on its recorded inputs differs on {mismatched}")
    causes(rows)

    def share(row: dict[str, Any], alpha: float, paraphrase: str | None) -> float:
        weights = row["weights"]
        total = sum(weights.values())
        best = sorted((e for e in row["ranked"] if e[1] is not None), key=lambda e: -e[1])[:3]
        unknown = 0.0
        for w in row["unknown"]:
            common = w in everyday
            if paraphrase and (paraphrase == "all" or common) and row["nearest"][w] in {e[0] for e in best}:
                continue
            unknown += weights[w] * (alpha if common else 1.0)
        return unknown / total if total > 0 else 0.0

    variants: list[tuple[str, float, str | None, float | None]] = [("shipped", 1.0, None, None)]
    variants += [(f"everyday x{a}, bar {b}", a, None, b) for a in (0.0, 0.25, 0.5, 0.75) for b in (2.5, 3.5, 5.0)]
    variants += [(f"paraphrased ({scope})", 1.0, scope, None) for scope in ("everyday", "all")]
    table: dict[tuple[str, str], tuple[float, float, float, float]] = {}
    for name, alpha, paraphrase, bar in variants:
        for split in SPLITS:
            part = [r for r in rows if r["split"] == split]
            table[(name, split)] = figures(part, [returned(r, share(r, alpha, paraphrase), bar) for r in part])

    def fmt(f: tuple[float, float, float, float]) -> str:
        return " / ".join(f"{v:.3f}" for v in f)

    print("\n| left out | shipped | chosen on the other four | left out, with it |\n|---|---|---|---|")
    for split in SPLITS:
        others = [s for s in SPLITS if s != split]
        chosen = max(variants, key=lambda v: (sum(objective(table[(v[0], s)]) for s in others), v[0] == "shipped"))
        print(f"| {split} | {fmt(table[('shipped', split)])} | {chosen[0]} | {fmt(table[(chosen[0], split)])} |")
    print("\n| variant | objective, sum over the five splits |\n|---|---|")
    for name, *_ in variants:
        print(f"| {name} | {sum(objective(table[(name, s)]) for s in SPLITS):.3f} |")


if __name__ == "__main__":
    main()
