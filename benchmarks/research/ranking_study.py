"""Ranking and relevance decision studied offline, on what the product's search gathered for every query.

    python benchmarks/research/ranking_study.py dump [--model default|minilm] [--sets dev,locomo,coding]
    python benchmarks/research/ranking_study.py rank [--model ...]      # ranking weights: a small grid
    python benchmarks/research/ranking_study.py decide [--model ...]    # decision bars: the trade-off curve

`dump` runs every query of the precision split (`bench_precision.py`'s stores) and of LoCoMo-dev and the coding set
(`bench_retrieval.py`'s stores) through `Store`'s own search path with the CLI's defaults (limit 10) and keeps what
the hybrid ranking gathered before ordering (`retrieval.hybrid.gather`: each candidate's evidence, the pool, the
sessions), with each query's labels. `rank` re-orders those candidates with `retrieval.fusion.order` under other
weights and reports answer@1 / recall@5 of the whole ranking per set; `decide` applies the relevance decision
(`retrieval.decision`) with a range of bars to the shipped ranking and reports what search would return: answer@1,
precision, absent → nothing, recall@5 on the precision split, recall@5 of what is returned on LoCoMo-dev and the
coding set. A change of the evidence itself (retrieval/evidence.py, hybrid.gather) needs a new dump; weights and bars
do not. A held-out split is refused.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import bench_precision as bp  # noqa: E402

WORK = HERE.parent / ".work" / "ranking"
HELD_OUT = ("judge4",)  # final judges not yet run; the splits run as judges before are tuning data now


@dataclass
class Case:
    set: str
    store: str
    q: str
    kind: str
    answers: list[str | None]  # keys; None: evidence the store does not hold (counts as missed)
    relevant: set[str]
    keys: dict[int, str]  # pk -> key, for the candidates
    gathered: Any = None  # retrieval.hybrid.Gathered, None when the query took another path
    now: Any = None
    stale_factor: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


Case.__module__ = "ranking_study"  # pickles load from other scripts too
sys.modules.setdefault("ranking_study", sys.modules[__name__])


# ---------------------------------------------------------------------------------------------------- dump
def _capture() -> dict[str, Any]:
    """Wrap hybrid.gather so that the last query's gathered evidence can be read back."""
    from codememory.retrieval import hybrid

    seen: dict[str, Any] = {}
    gather = hybrid.gather

    def recording(*args: Any, **kwargs: Any) -> Any:
        found = gather(*args, **kwargs)
        seen["found"] = found
        seen["now"] = args[-1]
        return found

    hybrid.gather = recording  # type: ignore[assignment]
    return seen


def _case(store: Any, seen: dict[str, Any], base: Case, key_of: dict[int, str]) -> Case:
    seen.clear()
    store.search(base.q, limit=bp.LIMIT, touch=False)
    found = seen.get("found")
    if found is not None:
        found.meaning_hits = found.meaning_hits or set()
        base.gathered, base.now = found, seen["now"]
        base.keys = {pk: key_of.get(pk, f"pk{pk}") for pk in found.evidence}
    base.stale_factor = store.db.stale_factor
    from codememory.retrieval.search import query_unknown_share
    from codememory.text.query import parse_query

    base.extra["unknown"] = query_unknown_share(store.db, parse_query(base.q))
    return base


def dump_precision(model: str, split: str, seen: dict[str, Any]) -> list[Case]:
    out = []
    for project in bp.load_split(split):
        store = bp.build_store(project, bp.store_dir(model, split, project), reuse=True)
        with store:
            pk_of = dict(store.db.get_pk_map(list(project.ids.values())))
            key_of = {pk_of[mid]: key for key, mid in project.ids.items() if mid in pk_of}
            for q in project.queries:
                base = Case("precision", project.name, q.text, q.kind, list(q.answers), set(q.answers + q.also), {})
                out.append(_case(store, seen, base, key_of))
    return out


def dump_retrieval(name: str, seen: dict[str, Any]) -> list[Case]:
    import bench_retrieval as br

    out = []
    for ds in br.locomo_sets() if name == "locomo" else br.coding_sets():
        store, _info = br.build_store(br.WORK / ds.store_name, ds.memories_file, reuse=True)
        with store:
            br.check_embedded(store, ds.store_name)
            km = br.key_map(store, br.read_jsonl(ds.memories_file), ds.key_field)
            key_of = {pk: mid for mid, pk in store.db.get_pk_map(list(set(km.ids.values())))}
            for q in ds.questions:
                gold = [km.ids.get(e) for e in q.evidence]
                base = Case(name, ds.store_name, q.text, q.category, gold, {g for g in gold if g}, {})
                out.append(_case(store, seen, base, key_of))
    return out


def dump(model: str, sets: list[str]) -> None:
    import bench_retrieval as br

    bp.set_model(model)
    for key, value in br.MODELS[model].items():
        os.environ[f"CODEMEMORY_EMBEDDING_{key.upper()}"] = value
    br.WORK = br.WORK / model  # type: ignore[misc]
    seen = _capture()
    (WORK / model).mkdir(parents=True, exist_ok=True)
    for name in sets:
        if name in HELD_OUT:
            sys.exit(f"the {name} split is held out: never used for tuning")
        t0 = time.perf_counter()
        cases = dump_retrieval(name, seen) if name in ("locomo", "coding") else dump_precision(model, name, seen)
        path = WORK / model / f"{name}.pickle"
        path.write_bytes(pickle.dumps(cases))
        print(f"{name}: {len(cases)} queries in {time.perf_counter() - t0:.0f} s -> {path}", file=sys.stderr)


def load(model: str, name: str) -> list[Case]:
    cases: list[Case] = pickle.loads((WORK / model / f"{name}.pickle").read_bytes())
    return cases


# ---------------------------------------------------------------------------------------------------- rank
def ranked_keys(case: Case, weights: Any) -> list[tuple[str, dict[str, Any]]]:
    """The case's candidates in the order `weights` gives them: (key, parts incl. the evidence)."""
    from codememory.retrieval.fusion import order

    found = case.gathered
    if found is None:
        return []
    out = []
    evidence = found.evidence
    for score, pk, parts in order(evidence, found.pool, found.sessions, weights, case.now, case.stale_factor):
        e = evidence[pk]
        out.append((case.keys.get(pk, f"pk{pk}"), {**parts, "score": score, "e": e, "pk": pk}))
    return out


def ranking_metrics(cases: list[Case], weights: Any) -> dict[str, float]:
    a1, r5 = [], []
    for case in cases:
        if not any(case.answers):
            continue
        keys = [k for k, _ in ranked_keys(case, weights)]
        a1.append(float(bool(keys) and keys[0] in case.answers))
        r5.append(sum(1 for g in case.answers if g is not None and g in keys[:5]) / len(case.answers))
    return {"a1": round(statistics.fmean(a1), 3), "r5": round(statistics.fmean(r5), 3)}


def study_rank(model: str, sets: list[str], grid: dict[str, list[float]]) -> None:
    """Every combination of the listed weights (the others as shipped)."""
    import itertools

    from codememory.retrieval.hybrid import RANK_WEIGHTS

    data = {name: load(model, name) for name in sets}
    names = list(grid)
    for values in itertools.product(*(grid[n] for n in names)):
        weights = replace(RANK_WEIGHTS, **dict(zip(names, values, strict=True)))
        row = {name: ranking_metrics(cases, weights) for name, cases in data.items()}
        print(" ".join(f"{n}={v}" for n, v in zip(names, values, strict=True)), row, flush=True)


# -------------------------------------------------------------------------------------------------- decide
def ranked_cases(
    model: str, sets: list[str], lexical: bool = False
) -> dict[str, list[tuple[Case, list[tuple[str, dict[str, Any]]]]]]:
    """Each set's cases with their candidates in the shipped ranking's order; `lexical`: only the keyword matches,
    in about the order keyword-only search gives them (every content word first, then by BM25), with no meaning."""
    from codememory.retrieval.hybrid import RANK_WEIGHTS

    out = {}
    for name in sets:
        cases = []
        for c in load(model, name):
            ranked = ranked_keys(c, RANK_WEIGHTS)
            if lexical:
                ranked = [(k, {**p, "e": replace(p["e"], meaning=None)}) for k, p in ranked if p["e"].keyword > 0]
                ranked.sort(key=lambda r: (r[1]["e"].coverage < 0.999, -r[1]["e"].keyword))
            cases.append((c, ranked))
        out[name] = cases
    return out


def fit(cases: list[tuple[Case, list[tuple[str, dict[str, Any]]]]], top: int = 50, l2: float = 1.0) -> list[float]:
    """Logistic regression by Newton's method (numpy) of p(relevant) on [word coverage, meaning, 1], over each query's
    first `top` candidates (a candidate is relevant when it is an answer or also_relevant)."""
    xs, ys = [], []
    for case, ranked in cases:
        for key, parts in ranked[:top]:
            e = parts["e"]
            xs.append([min(max(e.coverage, 0.0), 1.0), e.meaning if e.meaning is not None else 0.0, 1.0])
            ys.append(1.0 if key in case.relevant else 0.0)
    return [round(v, 3) for v in logistic_fit(xs, ys, l2, rounds=50)]


def logistic_fit(xs: list[list[float]], ys: list[float], l2: float, rounds: int) -> list[float]:
    """L2-regularised logistic regression by Newton's method; the last feature is the intercept (not regularised)."""
    import numpy as np

    x, y = np.array(xs), np.array(ys)
    w = np.zeros(x.shape[1])
    reg = np.eye(x.shape[1]) * l2
    reg[-1, -1] = 0.0
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        grad = x.T @ (p - y) + reg @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return [float(v) for v in w]


def with_likelihood(cases: list[tuple[Case, list[tuple[str, dict[str, Any]]]]], cal: Any) -> list[tuple[Case, list]]:
    """Each case's candidates as decision entries (score, position, key, {"likelihood"}), computed once."""
    from codememory.retrieval.evidence import likelihood

    return [
        (
            case,
            [
                (
                    parts["score"],
                    i,
                    key,
                    {"likelihood": likelihood(parts["e"].coverage, parts["e"].meaning, cal.weights)},
                )
                for i, (key, parts) in enumerate(ranked)
            ],
        )
        for case, ranked in cases
    ]


def decided_metrics(cases: list[tuple[Case, list]], bars: Any) -> dict[str, float | None]:  # type: ignore[type-arg]
    """What search would return (at most 10, in ranking order) with these bars (`cases` from `with_likelihood`)."""
    from codememory.retrieval.decision import decide

    a1, r5, absent, good, shown = [], [], [], 0, 0
    for case, entries in cases:
        kept = [key for _, _, key, _ in decide(entries, bars, case.extra.get("unknown", 0.0))[0]][: bp.LIMIT]
        shown += len(kept)
        good += sum(1 for k in kept if k in case.relevant)
        if any(case.answers):
            a1.append(float(bool(kept) and kept[0] in case.answers))
            r5.append(sum(1 for g in case.answers if g is not None and g in kept[:5]) / len(case.answers))
        else:
            absent.append(float(not kept))

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 3) if values else None

    return {
        "a1": mean(a1),
        "precision": round(good / shown, 3) if shown else None,
        "absent": mean(absent),
        "r5": mean(r5),
        "per_query": round(shown / len(cases), 2),
    }


def study_decide(
    model: str,
    sets: list[str],
    answer: list[float],
    keep: list[float],
    ratio: list[float],
    unknown: list[float],
    lexical: bool = False,
) -> None:
    import itertools

    from codememory.retrieval.decision import Bars
    from codememory.retrieval.evidence import Calibration, Weights, calibration_for

    data = ranked_cases(model, sets, lexical)
    shipped = calibration_for(None if lexical else bp.MODEL_NAMES[model])
    if lexical:  # coverage alone: the bars are chosen on the shipped curve, nothing to fit
        cal = shipped
    else:
        w = fit(data[sets[0]])
        print(f"fitted on {sets[0]}: words {w[0]}, meaning {w[1]}, bias {w[2]}; shipped {shipped}")
        cal = Calibration(Weights(w[0], w[1], w[2]), shipped.search, shipped.inject)
    entries = {name: with_likelihood(cases, cal) for name, cases in data.items()}
    for a, k, r, u in itertools.product(answer, keep, ratio, unknown):
        if k > a:
            continue
        row = {name: decided_metrics(cases, Bars(a, k, r, u)) for name, cases in entries.items()}
        print(f"answer={a} keep={k} ratio={r} unknown={u}", row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("dump", "rank", "decide"))
    parser.add_argument("--model", default="default", choices=sorted(bp.MODELS))
    parser.add_argument("--sets", default="dev,locomo,coding")
    for name in ("keyword", "meaning", "coverage", "neighbour", "covered", "tie", "spread"):
        parser.add_argument(f"--{name}", default="", help=f"rank: RankWeights.{name} values to try")
    for name in ("answer", "keep", "ratio", "unknown"):
        parser.add_argument(f"--{name}", default="", help=f"decide: Bars.{name} values to try")
    parser.add_argument("--lexical", action="store_true", help="decide: keyword-only search (no model)")
    args = parser.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    if args.what == "dump":
        dump(args.model, sets)
    elif args.what == "decide":
        study_decide(
            args.model,
            sets,
            [float(v) for v in (args.answer or "0.1,0.15,0.2,0.3").split(",")],
            [float(v) for v in (args.keep or "0.02,0.05,0.1,0.15").split(",")],
            [float(v) for v in (args.ratio or "0,0.1,0.25,0.5").split(",")],
            [float(v) for v in (args.unknown or "0").split(",")],
            args.lexical,
        )
    elif args.what == "rank":
        grid = {
            name: [float(v) for v in getattr(args, name).split(",") if v]
            for name in ("keyword", "meaning", "coverage", "neighbour", "covered", "tie", "spread")
            if getattr(args, name)
        }
        study_rank(args.model, sets, grid)


if __name__ == "__main__":
    main()
