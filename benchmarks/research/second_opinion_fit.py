"""The second model's cosine as evidence of the calibrated likelihood, both ways, judged left out and on the guard.

    python benchmarks/research/second_opinion_fit.py ROWS.pickle [--guard GUARD.pickle] [--record-guard]

Session 10's second opinion only penalised (a candidate outside MiniLM's first two of the query's ten loses 0.5
log-odds): precision rose left out, but the retrieval guard (LoCoMo-dev and coding recall@5 as returned) fell,
because in a conversation log or the coding set many memories answer one question and the penalty held back all but
two. This study gives the decision the second model's evidence as features of the likelihood, so that agreement of
both models can also admit a candidate the bar holds back today (a paraphrase answer), and disagreement lowers it:

- `fit`: a logistic regression, on the candidates of the training splits (the first `POOL` of each query, label:
  an answer or also-relevant memory), of relevance on the recorded likelihood's log-odds and the second model's
  evidence (its cosine, whether it ranks the candidate first / among its first two of the pool, its cosine less the
  pool's best); the candidate's likelihood becomes the fitted probability (`--only-likelihood` semantics: the
  background likelihood, which keeps conversation runs through `Bars.strong`, is left as it is). An offset on the
  fitted log-odds is chosen on the training splits with the model.
- `shift`: the same evidence as a fixed, hand-formed shift: `w · (cosine − c)`, clipped to [−down, +up].
- `rank` (what search uses, retrieval/second_opinion.py): outside the second model's first one or two of the pool
  −down; its first at a cosine ≥ c +up (`--spare-keyword-hits`: a keyword hit is never lowered, a candidate lacking
  the value asked for gains nothing, as search does).

`--gate-only`: the moved likelihoods decide only whether the query is answered; an answered query keeps today's
results. A setting is chosen by bench_precision's objective on the other splits, among every form and among those
whose replayed guard passes (LoCoMo-dev ≥ −0.005, coding not lower); the left-out split's figures are the result.

The decision never reorders (retrieval/decision.py keeps the ranking's order): the second model only decides keep or
hold back, so the guard's `hybrid-order` arm cannot move and `hybrid` (as returned) moves only by what is kept.

`--record-guard` records, with the shipped code (second opinion off), the decision's inputs of every LoCoMo-dev and
coding question of bench_retrieval.py on its reused stores, and MiniLM's cosine of each question's first `POOL`
candidates; the guard is then replayed offline (re-run unchanged, it reproduces the returned top 10; checked,
printed) and every form's LoCoMo-dev / coding recall@5 as returned is printed beside its left-out figures.
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import second_opinion_study as study  # noqa: E402

import bench_precision as bp  # noqa: E402

POOL = 10
SPLITS = study.SPLITS
Shift = Callable[[dict[str, Any]], dict[str, float]]  # row -> key -> new log-odds of the likelihood


# ------------------------------------------------------------------------------------------- guard rows
def record_guard(path: Path, sets: str = "locomo,coding") -> None:
    import os

    import bench_retrieval as br
    import codememory.retrieval.decision as decision_module
    import codememory.retrieval.search as search_module

    os.environ["CODEMEMORY_SECOND_MODEL"] = "0"  # the decision without it (on by default where installed)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for key, value in br.MODELS["default"].items():
        os.environ[f"CODEMEMORY_EMBEDDING_{key.upper()}"] = value
    work = br.WORK / "default"
    seen: dict[str, Any] = {}
    decide = search_module.decide

    def spy(order: Any, bars: Any, unknown_share: float = 0.0) -> Any:
        seen.update(order=order, bars=bars, share=unknown_share)
        return decide(order, bars, unknown_share)

    search_module.decide = spy  # type: ignore[assignment]
    decision_module.decide = spy  # type: ignore[assignment]  # search's path beside the second opinion
    second = study.minilm()
    rows: list[dict[str, Any]] = []
    names = sets.split(",")  # "locomo", "coding" or single stores ("conv-26")
    chosen = [ds for ds in [*br.locomo_sets(), *br.coding_sets()] if ds.name in names or ds.store_name in names]
    for ds in chosen:
        store, _ = br.build_store(work / ds.store_name, ds.memories_file, True)
        with store:
            km = br.key_map(store, br.read_jsonl(ds.memories_file), ds.key_field)
            pk_to_id = {pk: mid for mid, pk in store.db.get_pk_map(list(km.ids.values()))}
            texts = {pk: text for pk, text in store.db.conn.execute("select pk, text from memories")}
            vectors: dict[int, np.ndarray] = {}
            bp.log(f"guard {ds.store_name}: {len(ds.questions)} questions")
            for q in ds.questions:
                seen.clear()
                res = store.search(q.text, mode="hybrid", limit=br.K, touch=False)
                order = seen.get("order", [])
                pool = [e[1] for e in order[:POOL] if e[1] in texts]
                todo = [pk for pk in pool if pk not in vectors]
                if todo:
                    for pk, vec in zip(
                        todo, second.encode([texts[pk] for pk in todo], normalize_embeddings=True), strict=True
                    ):
                        vectors[pk] = vec
                qvec = second.encode([q.text], normalize_embeddings=True)[0]
                rows.append(
                    {
                        "set": ds.name,
                        "q": q.text,
                        "gold": [km.ids.get(e) for e in q.evidence],
                        "share": seen.get("share", 0.0),
                        "bars": seen.get("bars"),
                        "ranked": [(pk_to_id.get(e[1], str(e[1])), dict(e[3]), e[2]) for e in order],
                        "second": {pk_to_id.get(pk, str(pk)): float(vectors[pk] @ qvec) for pk in pool},
                        "returned": [h.memory.id for h in res.hits],
                    }
                )
    path.write_bytes(pickle.dumps(rows))


# ------------------------------------------------------------------------------------------- features
def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def pool_features(row: dict[str, Any]) -> dict[str, list[float]]:
    """Per candidate of the query's first `POOL` with a likelihood: [log-odds, cosine, first, top two, gap]."""
    pool = [(k, e, m) for k, e, m in row["ranked"][:POOL] if e.get("likelihood") is not None]
    cos = {k: row["second"].get(k, 0.0) for k, _, _ in pool}
    if not cos:
        return {}
    order = sorted(cos, key=lambda k: -cos[k])
    rank = {k: i for i, k in enumerate(order)}
    best = cos[order[0]]
    return {
        k: [
            _logit(e["likelihood"]),
            cos[k],
            float(rank[k] == 0),
            float(rank[k] < 2),
            cos[k] - best,
            float(m == "exact" or (e.get("coverage") or 0.0) >= 1.0),  # a keyword hit: every word of the query
            float("lacks" in e),  # lowered: it holds no value of the kind the question asks for
        ]
        for k, e, m in pool
    }


FEATURE_SETS = {
    "cos": [0, 1],
    "cos+first": [0, 1, 2],
    "cos+top2": [0, 1, 3],
    "cos+gap": [0, 1, 4],
    "cos+first+gap": [0, 1, 2, 4],
    "all": [0, 1, 2, 3, 4],
}


def fit(rows: list[dict[str, Any]], cols: list[int], c: float) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    xs, ys = [], []
    for r in rows:
        relevant = set(r["answers"]) | set(r["also"])
        for k, f in pool_features(r).items():
            xs.append([f[i] for i in cols])
            ys.append(int(k in relevant))
    model = LogisticRegression(C=c, max_iter=1000).fit(np.array(xs), np.array(ys))
    return model.coef_[0], float(model.intercept_[0])


def fitted_shift(coef: np.ndarray, intercept: float, cols: list[int], offset: float) -> Shift:
    def make(row: dict[str, Any]) -> dict[str, float]:
        return {
            k: float(np.dot(coef, [f[i] for i in cols])) + intercept + offset for k, f in pool_features(row).items()
        }

    return make


def rank_shift(top: int, down: float, up: float, centre: float) -> Shift:
    """Outside the second model's first `top` of the pool: −down; its first with cosine ≥ centre: +up."""

    def make(row: dict[str, Any]) -> dict[str, float]:
        return {
            k: f[0]
            - (down if not (f[3] if top == 2 else f[2] if top == 1 else 1.0) and not (SPARE and f[5]) else 0.0)
            + (up if f[2] and f[1] >= centre and not (SPARE and f[6]) else 0.0)
            for k, f in pool_features(row).items()
        }

    return make


def hand_shift(w: float, centre: float, down: float, up: float) -> Shift:
    def make(row: dict[str, Any]) -> dict[str, float]:
        return {k: f[0] + min(max(w * (f[1] - centre), -down), up) for k, f in pool_features(row).items()}

    return make


# ------------------------------------------------------------------------------------------- replay
# --spare-keyword-hits: a candidate holding every word of the query is never lowered, and one lacking the kind of
# value the question asks for gains nothing from agreement (as search does)
SPARE = False
GATE_ONLY = False  # --gate-only: the second model decides only whether the query is answered at all


def decided(row: dict[str, Any], new: dict[str, float] | None) -> list[str]:
    """The decision re-run on the recorded inputs, the likelihood of the keys in `new` set to those log-odds. With
    `GATE_ONLY`, the moved likelihoods decide only whether the query is answered: answered both ways, today's
    results; answered only with them, theirs (admitted); answered only today, nothing."""
    from codememory.retrieval.decision import decide

    if row["bars"] is None:
        return list(row["returned"])
    order, moved = [], []
    for i, (key, explain, _) in enumerate(row["ranked"]):
        e = {n: explain[n] for n in ("likelihood", "background_likelihood") if explain.get(n) is not None}
        order.append((0.0, i, "", e))
        if new and key in new and "likelihood" in e:
            e = {**e, "likelihood": study._sig(new[key])}
        moved.append((0.0, i, "", e))
    kept, _ = decide(moved, row["bars"], row["share"])
    if GATE_ONLY and new:
        today, _ = decide(order, row["bars"], row["share"])
        strict = [e for e in today if e[3].get("likelihood") is None]
        answered_now = len(today) > len(strict)
        answered_moved = any(e[3].get("likelihood") is not None for e in kept)
        kept = today if answered_now and answered_moved else kept if answered_moved else strict
    return [row["ranked"][e[1]][0] for e in kept]


def guard(rows: list[dict[str, Any]], make: Shift | None) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for r in rows:
        got = set(decided(r, make(r) if make else None)[:5])
        n = len(r["gold"]) or 1
        out.setdefault(r["set"], []).append(sum(1 for g in r["gold"] if g is not None and g in got) / n)
    return {s: float(np.mean(v)) for s, v in out.items()}


def split_figures(rows: list[dict[str, Any]], make: Shift | None) -> tuple[float, float, float, float]:
    return study.figures(rows, [decided(r, make(r) if make else None)[: bp.LIMIT] for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path)
    parser.add_argument("--guard", type=Path, default=Path("/tmp/x24on2_guard.pickle"))
    parser.add_argument("--record-guard", action="store_true")
    parser.add_argument("--guard-sets", default="locomo,coding", help="what --record-guard records")
    parser.add_argument("--family", default="fit", help="fit, rank or shift")
    parser.add_argument("--gate-only", action="store_true", help="the second model decides only answered or not")
    parser.add_argument("--spare-keyword-hits", action="store_true", help="never lower a keyword hit")
    args = parser.parse_args()
    global GATE_ONLY
    GATE_ONLY = args.gate_only
    global SPARE
    SPARE = args.spare_keyword_hits
    if args.record_guard:
        record_guard(args.guard, args.guard_sets)
        return
    rows = pickle.loads(args.rows.read_bytes())
    global SPLITS
    SPLITS = [s for s in study.SPLITS if any(r["split"] == s for r in rows)]
    # --guard a.pickle,b.pickle: rows recorded in parts (--guard-sets), read together
    grows = [r for g in str(args.guard).split(",") if Path(g).exists() for r in pickle.loads(Path(g).read_bytes())]
    print(f"precision replay reproduces {sum(decided(r, None)[: bp.LIMIT] == r['returned'] for r in rows)}/{len(rows)}")
    if grows:
        same = sum(decided(r, None)[:10] == r["returned"][:10] for r in grows)
        GUARD_BEFORE.update(guard(grows, None))
        print(f"guard replay reproduces {same}/{len(grows)}; before {GUARD_BEFORE}")
    by_split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    before = {s: split_figures(rs, None) for s, rs in by_split.items()}
    forms: dict[str, Callable[[list[dict[str, Any]]], Shift]] = {}
    if args.family == "fit":
        for fname, cols in FEATURE_SETS.items():
            for c in (0.1, 1.0):
                for offset in (-1.0, -0.5, 0.0, 0.5, 1.0):

                    def trained(train: list[dict[str, Any]], cols: list[int] = cols, c: float = c, o: float = offset):
                        coef, intercept = fit(train, cols, c)
                        return fitted_shift(coef, intercept, cols, o)

                    forms[f"fit {fname} C {c} offset {offset}"] = trained
    elif args.family == "rank":
        for top in (1, 2):
            for down in (0.0, 0.5, 1.0, 2.0):
                for up in (0.0, 0.5, 1.0, 2.0):
                    for centre in (0.4, 0.5, 0.6) if up else (0.0,):
                        if down == up == 0.0:
                            continue
                        shift = rank_shift(top, down, up, centre)
                        forms[f"rank top {top} -{down}, first with cos >= {centre} +{up}"] = lambda train, s=shift: s
    else:
        for w in (4.0, 8.0, 16.0):
            for centre in (0.3, 0.4, 0.5, 0.6):
                for down in (0.0, 0.5, 1.0):
                    for up in (0.0, 0.5, 1.0, 2.0):
                        if down == up == 0.0:
                            continue
                        shift = hand_shift(w, centre, down, up)
                        forms[f"shift {w} x (cos - {centre}) in [-{down}, +{up}]"] = lambda train, s=shift: s
    # every form's figures on each split, trained on the other splits (fit) or fixed (shift)
    left_out: dict[str, dict[str, tuple[float, float, float, float]]] = {n: {} for n in forms}
    on_train: dict[str, dict[str, float]] = {n: {} for n in forms}
    guards: dict[str, dict[str, float]] = {}
    for name, trained in forms.items():
        memo: dict[tuple[int, str], tuple[float, float, float, float]] = {}
        alive: list[Shift] = []

        def figures_of(make: Shift, t: str, memo: dict[Any, Any] = memo) -> tuple[float, float, float, float]:
            if (id(make), t) not in memo:  # a fixed form is the same object on every fold
                memo[id(make), t] = split_figures(by_split[t], make)
            return memo[id(make), t]

        for s in SPLITS:
            rest = [r for t in SPLITS if t != s for r in by_split[t]]
            make = trained(rest)
            alive.append(make)  # ids stay unique while memoised
            left_out[name][s] = figures_of(make, s)
            on_train[name][s] = sum(study.objective(figures_of(make, t)) for t in SPLITS if t != s)
        if grows:
            guards[name] = guard(grows, trained([r for r in rows]))
        bp.log(f"{name}: guard {guards.get(name)}")
    report(by_split, before, left_out, on_train, guards)


def report(
    by_split: dict[str, Any],
    before: dict[str, tuple[float, float, float, float]],
    left_out: dict[str, dict[str, tuple[float, float, float, float]]],
    on_train: dict[str, dict[str, float]],
    guards: dict[str, dict[str, float]],
) -> None:
    mean = lambda fs: tuple(float(np.mean([f[i] for f in fs])) for i in range(4))  # noqa: E731
    for label, allowed in (("any form", list(left_out)), ("forms the guard replay passes", passing(guards))):
        print(f"\n### chosen on the other splits among {label} ({len(allowed)})\n")
        print("| left out | before | chosen | left out, with it |\n|---|---|---|---|")
        after = []
        for s in SPLITS:
            if not allowed:
                break
            best = max(allowed, key=lambda n: on_train[n][s])
            after.append(left_out[best][s])
            print(f"| {s} | {study.fmt(before[s])} | {best} | {study.fmt(left_out[best][s])} |")
        if after:
            print(f"| mean | {study.fmt(mean(list(before.values())))} | | {study.fmt(mean(after))} |")
    print("\nbest forms by the sum of left-out objectives (mean left out; guard replay):")
    ranked = sorted(left_out, key=lambda n: -sum(study.objective(f) for f in left_out[n].values()))
    for n in ranked[:15]:
        losses = [
            f"{s} {['a@1', 'prec', 'absent', 'r@5'][i]} {left_out[n][s][i] - before[s][i]:+.3f}"
            for s in SPLITS
            for i in range(4)
            if left_out[n][s][i] < before[s][i] - 1e-9
        ]
        print(f"  {n}: {study.fmt(mean(list(left_out[n].values())))}  guard {guards.get(n)}  loses: {losses}")


GUARD_BEFORE: dict[str, float] = {}


def passing(guards: dict[str, dict[str, float]]) -> list[str]:
    if not GUARD_BEFORE:
        return list(guards)
    return [
        n
        for n, g in guards.items()
        if g.get("locomo", 0) >= GUARD_BEFORE["locomo"] - 0.005 and g.get("coding", 0) >= GUARD_BEFORE["coding"] - 1e-9
    ]


if __name__ == "__main__":
    main()
