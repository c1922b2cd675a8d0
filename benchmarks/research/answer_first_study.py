"""Why is the answer not first, and why does an answerable question get nothing? Causes, and orders judged left out.

    python benchmarks/research/answer_first_study.py ROWS.pickle[,ROWS2.pickle] [--causes] [--guard G1,G2,...]

Rows: second_opinion_study.py's records of every released precision split's queries (the decision's inputs with the
second opinion off, MiniLM's cosine to every memory of the store). The shipped decision is replayed on them
(second_opinion_fit.rank_shift: outside MiniLM's first two of the pool −0.5, its first at cosine ≥ 0.5 +2, keyword
hits spared): re-run unchanged, it gives what search returns today.

`--causes` sorts every answerable query whose answer is not first, or that gets nothing, by cause (the first that
applies): nothing returned, and where the answer stood; the answer returned but behind another, and whether the two
models agree on it; the answer held back; the answer among no candidate.

Without `--causes`, `--family` judges changes on the replay (the shipped decision is "before"; every form is
judged against it), each setting chosen on the other splits by bench_precision's objective, the left-out split's
figures the result, and with `--guard` the form's LoCoMo-dev / coding recall@5 as returned (second_opinion_fit's
guard rows; a form must pass it to be chosen):

- `both` (built: second_opinion.py `Form.both_*`): the ranking's first decided candidate, when MiniLM places it
  first of the pool too, at a cosine ≥ c and ≥ g above its own second, gains u log-odds;
- `gap`: the same for MiniLM's first wherever the ranking has it;
- `order`: the kept set reordered, MiniLM's first moved first (when the default model's cosine is near the best);
- `likelihood`: the kept set reordered by the moved likelihood, past a margin;
- `gate`: a query-level gate learned by logistic regression on the other splits (admit or drop whole answers).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import second_opinion_fit as fit  # noqa: E402
import second_opinion_study as study  # noqa: E402

import bench_precision as bp  # noqa: E402

SPLITS = [*study.SPLITS, "judge9"]
fit.SPARE = True
SHIPPED = fit.rank_shift(2, 0.5, 2.0, 0.5)


def shipped(row: dict[str, Any]) -> list[str]:
    return fit.decided(row, SHIPPED(row))


def minilm_pool_rank(row: dict[str, Any]) -> dict[str, int]:
    pool = [k for k, e, _ in row["ranked"][: fit.POOL] if e.get("likelihood") is not None]
    return {k: i for i, k in enumerate(sorted(pool, key=lambda k: -row["second"].get(k, 0.0)))}


def cause(row: dict[str, Any], got: list[str]) -> str | None:
    answers = set(row["answers"])
    if not answers or (got and got[0] in answers):
        return None
    keys = [k for k, _, _ in row["ranked"]]
    where = min((keys.index(a) for a in answers if a in keys), default=None)
    second = minilm_pool_rank(row)
    store_rank = sorted(row["second"], key=lambda k: -row["second"][k])
    m_store = min(store_rank.index(a) for a in answers if a in store_rank)
    if where is None:
        return f"answer among no candidate (MiniLM store rank {'first' if m_store == 0 else '2+'})"
    m_first = any(second.get(a) == 0 for a in answers)
    explain = {k: e for k, e, _ in row["ranked"]}
    if not got:
        return f"nothing returned; answer ranked {'first' if where == 0 else '2-10' if where < 10 else '11+'}" + (
            ", MiniLM first of pool" if m_first else ""
        )
    first = got[0]
    if any(a in got for a in answers):
        a = next(a for a in got if a in answers)
        ea, ef = explain[a], explain[first]
        kinds = []
        if m_first:
            kinds.append("MiniLM puts it first")
        if (ea.get("cosine") or 0) > (ef.get("cosine") or 0):
            kinds.append("e5 cosine higher")
        if (ef.get("coverage") or 0) > (ea.get("coverage") or 0):
            kinds.append("the first covers more words")
        if first in row["also"]:
            kinds.append("first is also-relevant")
        return "answer returned behind another: " + (", ".join(kinds) or "no signal prefers it")
    held = f"answer held back (ranked {'2-10' if where < 10 else '11+'})"
    return held + (", MiniLM first of pool" if m_first else "")


def causes(rows: list[dict[str, Any]]) -> None:
    tally: Counter[str] = Counter()
    per_split: dict[str, Counter[str]] = {}
    for r in rows:
        c = cause(r, shipped(r))
        if c:
            tally[c] += 1
            per_split.setdefault(r["split"], Counter())[c] += 1
    answerable = sum(1 for r in rows if r["answers"])
    print(f"{answerable} answerable queries, {sum(tally.values())} with the answer not first\n")
    for c, n in tally.most_common():
        print(f"{n:4d}  {c}")


Order = Callable[[dict[str, Any], list[str]], list[str]]


def agreement_first(margin: float, min_cos: float, needs_e5: bool) -> Order:
    """The kept candidate MiniLM places first of the pool moves first when the default model's cosine of it is within
    `margin` of the kept set's best and MiniLM's cosine reaches `min_cos`."""

    def order(row: dict[str, Any], got: list[str]) -> list[str]:
        if len(got) < 2:
            return got
        rank = minilm_pool_rank(row)
        top = next((k for k in got if rank.get(k) == 0), None)
        if top is None or top == got[0] or row["second"].get(top, 0.0) < min_cos:
            return got
        explain = {k: e for k, e, _ in row["ranked"]}
        best = max((explain[k].get("cosine") or 0.0) for k in got)
        if needs_e5 and (explain[top].get("cosine") or 0.0) < best - margin:
            return got
        return [top, *(k for k in got if k != top)]

    return order


def gap_shift(up: float, centre: float, gap: float) -> fit.Shift:
    """The shipped shift, and the candidate MiniLM places first of the pool, by `gap` or more above its second (it
    stands out for the second model too), at a cosine of `centre` or more, not lacking the value asked for and not
    given the shipped agreement already, gains `up`."""

    def make(row: dict[str, Any]) -> dict[str, float]:
        out = SHIPPED(row)
        feats = fit.pool_features(row)
        cos = sorted((f[1] for f in feats.values()), reverse=True)
        margin = cos[0] - cos[1] if len(cos) > 1 else 0.0
        for k, f in feats.items():
            if f[2] and f[1] < 0.5 and f[1] >= centre and margin >= gap and not f[6]:
                out[k] += up
        return out

    return make


def both_first_shift(up: float, centre: float, gap: float) -> fit.Shift:
    """The shipped shift, and the ranking's first decided candidate, when MiniLM also places it first of the pool at
    a cosine of `centre` or more and `gap` or more above its second, not lacking the value asked for and not given
    the shipped agreement already, gains `up`: both models' first choice."""

    def make(row: dict[str, Any]) -> dict[str, float]:
        out = SHIPPED(row)
        feats = fit.pool_features(row)
        if not feats:
            return out
        cos = sorted((f[1] for f in feats.values()), reverse=True)
        margin = cos[0] - cos[1] if len(cos) > 1 else 0.0
        first = next(iter(feats))
        f = feats[first]
        if f[2] and f[1] < 0.5 and f[1] >= centre and margin >= gap and not f[6]:
            out[first] += up
        return out

    return make


Form = Callable[[dict[str, Any]], list[str]]


def as_form(shift: fit.Shift | None = None, order: Order | None = None) -> Form:
    def form(row: dict[str, Any]) -> list[str]:
        got = fit.decided(row, (shift or SHIPPED)(row))
        return order(row, got) if order else got

    return form


def by_likelihood(margin: float) -> Order:
    """The kept candidates in the order of their likelihood moved by the second opinion (what the decision weighs),
    the ranking's first keeping its place unless another's log-odds exceed its own by `margin`."""

    def order(row: dict[str, Any], got: list[str]) -> list[str]:
        if len(got) < 2:
            return got
        moved = SHIPPED(row)
        base = {k: fit._logit(e["likelihood"]) for k, e, _ in row["ranked"] if e.get("likelihood") is not None}
        lo = {k: moved.get(k, base.get(k, 99.0)) for k in got}
        best = max(got, key=lambda k: lo[k])
        if best == got[0] or lo[best] < lo[got[0]] + margin:
            return got
        return [best, *(k for k in got if k != best)]

    return order


def figures(rows: list[dict[str, Any]], form: Form) -> tuple[float, float, float, float]:
    return study.figures(rows, [form(r)[: bp.LIMIT] for r in rows])


def guard(grows: list[dict[str, Any]], form: Form) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for r in grows:
        got = set(form(r)[:5]) if r["bars"] is not None else set(r["returned"][:5])
        n = len(r["gold"]) or 1
        out.setdefault(r["set"], []).append(sum(1 for g in r["gold"] if g is not None and g in got) / n)
    return {s: round(float(np.mean(v)), 4) for s, v in out.items()}


def learned_gate(rows: list[dict[str, Any]], splits: list[str]) -> None:
    """A query-level gate learned on the other splits (logistic regression of "answerable" on the best moved
    log-odds, MiniLM's best cosine of the pool and its margin, whether the ranking's first is MiniLM's first, and
    whether it lacks the value asked for): a query with nothing returned whose probability reaches `admit` gets
    MiniLM's (or the ranking's) first; one with something returned under `drop` gets nothing. The thresholds are
    chosen on the other splits too."""
    from sklearn.linear_model import LogisticRegression

    def feats(r: dict[str, Any]) -> tuple[list[float], str, str] | None:
        f = fit.pool_features(r)
        if not f or r["bars"] is None:
            return None
        keys = list(f)
        top = max(keys, key=lambda k: f[k][1])
        cos = sorted((v[1] for v in f.values()), reverse=True)
        margin = cos[0] - cos[1] if len(cos) > 1 else 0.0
        return [max(SHIPPED(r).values()), cos[0], margin, float(top == keys[0]), f[keys[0]][6]], top, keys[0]

    data = [feats(r) for r in rows]

    def gated(r: dict[str, Any], x: Any, clf: Any, admit: float, drop: float, pick: str) -> list[str]:
        got = shipped(r)[: bp.LIMIT]
        if x is None:
            return got
        p = clf.predict_proba([x[0]])[0, 1]
        if got and p < drop:
            undecided = {k for k, e, _ in r["ranked"] if e.get("likelihood") is None}
            return [k for k in got if k in undecided]
        if not got and p >= admit:
            return [x[1] if pick == "minilm" else x[2]]
        return got

    grid = [
        (a, d, w) for a in (0.5, 0.6, 0.7, 0.8, 0.9, 2.0) for d in (-1.0, 0.1, 0.2, 0.3) for w in ("minilm", "first")
    ]
    out = []
    for s in splits:
        train = [(r, x) for r, x in zip(rows, data, strict=True) if r["split"] != s and x is not None]
        xs = np.array([x[0] for _, x in train])
        clf = LogisticRegression(C=1.0, max_iter=1000).fit(xs, np.array([int(bool(r["answers"])) for r, _ in train]))

        def score(t: str, g: tuple[float, float, str], clf: Any = clf) -> tuple[float, float, float, float]:
            part = [(r, x) for r, x in zip(rows, data, strict=True) if r["split"] == t]
            return study.figures([r for r, _ in part], [gated(r, x, clf, *g) for r, x in part])

        best = max(grid, key=lambda g: sum(study.objective(score(t, g)) for t in splits if t != s))
        before = study.figures(
            [r for r in rows if r["split"] == s], [shipped(r)[: bp.LIMIT] for r in rows if r["split"] == s]
        )
        out.append((before, score(s, best)))
        print(f"| {s} | {study.fmt(before)} | admit {best[0]}, drop {best[1]}, {best[2]} | {study.fmt(out[-1][1])} |")
    mean = [tuple(float(np.mean([o[i][j] for o in out])) for j in range(4)) for i in (0, 1)]
    print(f"| mean | {study.fmt(mean[0])} | | {study.fmt(mean[1])} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows")
    parser.add_argument("--causes", action="store_true")
    parser.add_argument("--guard", default="")
    parser.add_argument(
        "--family", default="gap", help="both, gap, gate (admission) or order, likelihood (reordering the kept)"
    )
    args = parser.parse_args()
    rows = [r for p in args.rows.split(",") for r in pickle.loads(Path(p).read_bytes())]
    if args.causes:
        causes(rows)
        return
    splits = [s for s in SPLITS if any(r["split"] == s for r in rows)]
    if args.family == "gate":
        learned_gate(rows, splits)
        return
    by_split = {s: [r for r in rows if r["split"] == s] for s in splits}
    forms: dict[str, Form] = {"shipped": as_form()}
    if args.family == "order":
        for margin in (0.0, 0.01, 0.02, 0.03, 0.05, 1.0):
            for min_cos in (0.0, 0.3, 0.4, 0.5, 0.6):
                name = f"agreement first, e5 within {margin}, MiniLM >= {min_cos}"
                forms[name] = as_form(order=agreement_first(margin, min_cos, True))
    elif args.family == "both":
        for up in (1.0, 2.0, 3.0):
            for centre in (0.3, 0.35, 0.4, 0.45):
                for gap in (0.0, 0.05, 0.1, 0.15):
                    forms[f"both first, by {gap}, cos >= {centre}: +{up}"] = as_form(both_first_shift(up, centre, gap))
    elif args.family == "likelihood":
        for m in (0.0, 0.5, 1.0, 2.0, 3.0, 5.0):
            forms[f"most likely first, by {m} log-odds"] = as_form(order=by_likelihood(m))
    else:
        for up in (1.0, 2.0):
            for centre in (0.0, 0.25, 0.3, 0.35, 0.4):
                for gap in (0.1, 0.12, 0.15, 0.2, 0.25):
                    forms[f"MiniLM first by {gap}, cos >= {centre}: +{up}"] = as_form(gap_shift(up, centre, gap))
    table = {n: {s: figures(rs, f) for s, rs in by_split.items()} for n, f in forms.items()}
    grows = [r for g in args.guard.split(",") if g for r in pickle.loads(Path(g).read_bytes())]
    guards = {n: guard(grows, f) for n, f in forms.items()} if grows else {}
    ok = [n for n in forms if not guards or passes(guards[n], guards["shipped"])]
    print("guard (shipped):", guards.get("shipped"), f"; {len(ok)} of {len(forms)} forms pass")
    print("| left out | before | chosen on the others | left out, with it |\n|---|---|---|---|")
    after = []
    for s in splits:
        best = max(ok, key=lambda n: (sum(study.objective(table[n][t]) for t in splits if t != s), n == "shipped"))
        after.append(table[best][s])
        print(f"| {s} | {study.fmt(table['shipped'][s])} | {best} | {study.fmt(table[best][s])} |")
    mean = lambda fs: tuple(float(np.mean([f[i] for f in fs])) for i in range(4))  # noqa: E731
    print(f"| mean | {study.fmt(mean(list(table['shipped'].values())))} | | {study.fmt(mean(after))} |")
    for n in sorted(ok, key=lambda n: -sum(study.objective(f) for f in table[n].values()))[:8]:
        loses = [
            f"{s} {['a@1', 'prec', 'absent', 'r@5'][i]} {table[n][s][i] - table['shipped'][s][i]:+.3f}"
            for s in splits
            for i in range(4)
            if table[n][s][i] < table["shipped"][s][i] - 1e-9
        ]
        print(f"  {n}: {study.fmt(mean(list(table[n].values())))} guard {guards.get(n)} loses {loses}")


def passes(g: dict[str, float], before: dict[str, float]) -> bool:
    return g.get("locomo", 0) >= before["locomo"] - 0.005 and g.get("coding", 0) >= before["coding"] - 1e-9


if __name__ == "__main__":
    main()
