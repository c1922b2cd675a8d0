"""Learning which sentences are durable knowledge from every labelled extraction set, judged on a set left out.

    .venv/bin/python benchmarks/research/extraction_learn.py              # leave-one-set-out table
    .venv/bin/python benchmarks/research/extraction_learn.py --bars 0.2 0   # fixed bars (admit from, veto below)

Every OpenCode recording of the labelled sets (benchmarks/data/extraction/<set>/recorded/) is read into turns by
codememory's own OpenCode reader; the rules run on each session (extract.heuristic.heuristic_candidates); each rule
memory and each sentence no rule memory holds (extraction_units.open_units) becomes a unit with its features
(extraction_units.features): a rule memory is positive when it matches a required label of its session (the
bench's matching), a sentence when it matches a required label the rules' memories missed (else it would only be
a duplicate).
A logistic model (numpy, L2) learns durable-or-not, a softmax head the category. For each set left out: the model
and its two bars (veto a rule memory below, admit a sentence from) are chosen on the other sets only (the bars by
an inner leave-one-set-out over them), then the left-out set is scored twice in-process with the bench's scorer:
the rules alone, and the rules judged by the model (extraction_units.judged). The table is the main result; then,
left out, how many sentences no rule kept the model ranks from a few bars up and how many of them are right, and
which families of knowledge the rules miss. OpenCode recordings only (the Claude Code ones are the same scripts).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import extraction_units as learned  # noqa: E402

import extraction_corpus as corpus  # noqa: E402
import extraction_score as scoring  # noqa: E402
from bench_extraction import DEFAULT_MUST_NOT  # noqa: E402
from codememory.capture.opencode_db import OpenCodeDB  # noqa: E402
from codememory.extract.heuristic import heuristic_candidates  # noqa: E402

SETS = ("main", "blind_a", "blind_b", "heldout", "heldout2", "blind_judge", "blind_judge2", "blind_judge3")
ADMITS = (0.15, 0.2, 0.25, 0.3, 0.4, 2.0)  # 2.0: admit nothing
VETOES = (0.0, 0.05, 0.1)  # 0.0: drop nothing
L2 = 1.0
STEPS = 300


@dataclass
class Session:
    set: str
    item: str
    spans: list[tuple[list[Any], list[Any], list[learned.Unit]]]  # per recorded session: turns, rule memories,
    # and the sentences no rule memory holds (learned.open_units)
    units: list[learned.Unit]  # rule units of judged memories and open sentence units, of every span
    targets: np.ndarray  # 1: matches a required label
    label_category: list[str]  # the first matching label's category ("" when none)
    labels: list[scoring.Label]
    forbidden: list[scoring.Forbidden]


def read_sessions(set_name: str, work: Path) -> list[Session]:
    out = []
    for item in corpus.load_items(None, corpus.SETS[set_name]):
        recording = Path(item["data"]) / "recorded" / f"{item['name']}.json"
        if item["source"] != "opencode" or not recording.exists():
            continue
        db = work / f"{set_name}-{item['name']}.db"
        project = work / "p" / item["name"]
        corpus.load_recordings(db, [(json.loads(recording.read_text()), project, work / "home")])
        labels = [scoring.Label.from_dict(lb) for lb in item["labels"]]
        forbidden = [scoring.Forbidden.from_dict(f) for f in [*DEFAULT_MUST_NOT, *item.get("must_not", [])]]
        spans = []
        units: list[learned.Unit] = []
        with OpenCodeDB(db) as oc:
            for info in oc.sessions():  # one span per session, as capture extracts them
                turns = oc.turns(info.session_id)
                got = heuristic_candidates(turns, info, oc.todos(info.session_id))
                opened = learned.open_units(got, turns)
                spans.append((turns, got, opened))
                units += [learned.rule_unit(c, turns) for c in got if learned.judged_rule(c)]
                units += opened
        required = [lb for lb in labels if not lb.optional]
        # a rule memory is right when it matches a label; a sentence no rule kept is worth admitting only when it
        # matches a label the rules' memories missed (else it would be a duplicate)
        ruled = [c.text for _, got, _ in spans for c in got]
        missed = [lb for lb in required if not any(scoring.matches(lb.match, t) for t in ruled)]
        cats = [
            next((lb.category for lb in (required if u.position == "rule" else missed)
                  if scoring.matches(lb.match, u.text)), "")
            for u in units
        ]  # fmt: skip
        targets = np.array([c != "" for c in cats], float)
        out.append(Session(set_name, item["name"], spans, units, targets, cats, labels, forbidden))
    return out


# ------------------------------------------------------------------------------------------------ fitting
def design(units: list[learned.Unit], bits: int) -> tuple[np.ndarray, np.ndarray]:
    idx = [np.array(learned.features(u, bits), dtype=np.int64) for u in units]
    return np.concatenate(idx) if idx else np.zeros(0, np.int64), np.array([len(i) for i in idx], np.int64)


def fit_binary(idx: np.ndarray, lens: np.ndarray, y: np.ndarray, dim: int) -> np.ndarray:
    """L2 logistic regression by Adam on hashed features: weights[dim] is the bias."""
    w = np.zeros(dim + 1)
    m, v = np.zeros_like(w), np.zeros_like(w)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    n = len(y)
    for step in range(1, STEPS + 1):
        z = np.add.reduceat(w[idx], starts) + w[-1]
        p = 1 / (1 + np.exp(-np.clip(z, -30, 30)))
        r = (p - y) / n
        g = np.zeros_like(w)
        g[:dim] = np.bincount(idx, weights=np.repeat(r, lens), minlength=dim) + L2 * w[:dim] / n
        g[-1] = r.sum()
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def fit_categories(idx: np.ndarray, lens: np.ndarray, y: np.ndarray, dim: int, k: int) -> np.ndarray:
    """Softmax regression (k classes) by Adam: rows of dim + 1 (the last: the bias)."""
    w = np.zeros((k, dim + 1))
    m, v = np.zeros_like(w), np.zeros_like(w)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    n = max(len(y), 1)
    onehot = np.eye(k)[y]
    for step in range(1, STEPS + 1):
        z = np.stack([np.add.reduceat(w[c, idx], starts) + w[c, -1] for c in range(k)], axis=1)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        r = (p - onehot) / n
        g = np.zeros_like(w)
        for c in range(k):
            g[c, :dim] = np.bincount(idx, weights=np.repeat(r[:, c], lens), minlength=dim) + L2 * w[c, :dim] / n
            g[c, -1] = r[:, c].sum()
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def fit(sessions: list[Session], admit: float = 2.0, veto: float = 0.0) -> learned.Model:
    units = [u for s in sessions for u in s.units]
    y = np.concatenate([s.targets for s in sessions])
    idx, lens = design(units, learned.BITS)
    weights = fit_binary(idx, lens, y, learned.DIM)
    pos = [
        (u, learned.CATEGORIES.index(c))
        for s in sessions
        for u, c in zip(s.units, s.label_category, strict=True)
        if c in learned.CATEGORIES
    ]
    cidx, clens = design([u for u, _ in pos], learned.CATEGORY_BITS)
    cats = fit_categories(cidx, clens, np.array([c for _, c in pos], np.int64), learned.CATEGORY_DIM,
                          len(learned.CATEGORIES))  # fmt: skip
    return learned.Model(
        tuple(float(x) for x in weights), tuple(tuple(float(x) for x in row) for row in cats), admit, veto
    )


# ------------------------------------------------------------------------------------------------ scoring
def memories(candidates: list[Any]) -> list[dict[str, Any]]:
    return [{"text": c.text, "category": c.category, "source": f"said_by:{c.said_by}"} for c in candidates]


def judged(session: Session, model: learned.Model | None) -> list[Any]:
    out = []
    for turns, candidates, opened in session.spans:
        out += candidates if model is None else learned.judged(candidates, turns, model, opened)
    return out


def score(sessions: list[Session], model: learned.Model | None) -> dict[str, Any]:
    scores = [scoring.score_session(s.item, s.labels, s.forbidden, memories(judged(s, model))) for s in sessions]
    summary = scoring.summarise(scores)
    summary["must_not_hits"] = sum(1 for sc in scores for v in sc.verdicts if v.forbidden)
    return summary


def counts(sessions: list[Session], model: learned.Model) -> tuple[int, int, int, int]:
    """(useful, counted memories, matched labels, required labels): summed over sessions for choosing bars."""
    o = score(sessions, model)["overall"]
    return o["useful"], o["stored"] - o["tolerated"], o["matched"], o["labels"]


def f1(useful: int, counted: int, matched: int, required: int) -> float:
    p = useful / counted if counted else 0.0
    r = matched / required if required else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def choose_bars(train: dict[str, list[Session]]) -> tuple[float, float]:
    """The (admit, veto) pair with the best F1 over an inner leave-one-set-out of the training sets."""
    totals: dict[tuple[float, float], np.ndarray] = defaultdict(lambda: np.zeros(4))
    for inner in train:
        model = fit([s for name, ss in train.items() if name != inner for s in ss])
        for admit in ADMITS:
            for veto in VETOES:
                trial = learned.Model(model.weights, model.categories, admit, veto)
                totals[(admit, veto)] += np.array(counts(train[inner], trial))
    return max(totals, key=lambda k: f1(*totals[k]))


def row(summary: dict[str, Any]) -> dict[str, Any]:
    o = summary["overall"]
    cats = {k: v["recall"] for k, v in summary["categories"].items() if v["labels"]}
    return {"precision": o["precision"], "recall": o["recall"], "must_not": summary["must_not_hits"], "cats": cats}


def open_precision(data: dict[str, list[Session]], bars: tuple[float, ...]) -> dict[str, dict[str, Any]]:
    """Left out, fitted on the other sets: of the sentences no rule kept, how many the model ranks from each bar
    up, and how many of those match a label the rules missed."""
    out = {}
    for left in data:
        model = fit([s for name, ss in data.items() if name != left for s in ss])
        scored = [
            (model.probability(u), int(y))
            for s in data[left]
            for u, y in zip(s.units, s.targets, strict=True)
            if u.position != "rule"
        ]
        out[left] = {"open": len(scored), "positive": sum(y for _, y in scored)}
        for bar in bars:
            picked = [y for p, y in scored if p >= bar]
            out[left][f">={bar}"] = f"{sum(picked)}/{len(picked)}"
    return out


def families(data: dict[str, list[Session]]) -> dict[str, int]:
    """What the rules miss that one sentence would carry: the label's category, the sentence's speaker and, for
    the assistant's, whether the user's next turn carried on."""
    found: dict[str, int] = defaultdict(int)
    for ss in data.values():
        for s in ss:
            for u, cat in zip(s.units, s.label_category, strict=True):
                if cat and u.position != "rule":
                    found[f"{cat} / {u.speaker}" + (f" / next turn {u.reply}" if u.reply else "")] += 1
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument(
        "--bars", nargs=2, type=float, metavar=("ADMIT", "VETO"), help="fixed bars instead of choosing them"
    )
    parser.add_argument("--out", type=Path, default=HERE / "extraction-learn.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data = {name: read_sessions(name, Path(tmp)) for name in args.sets}
    for name, ss in data.items():
        n = sum(len(s.units) for s in ss)
        corpus.log(f"{name}: {len(ss)} items, {n} units, {int(sum(s.targets.sum() for s in ss))} positive")
    results: dict[str, Any] = {"command": " ".join(["extraction_learn.py", *(argv or sys.argv[1:])]), "sets": {}}
    for left in args.sets:
        train = {k: v for k, v in data.items() if k != left}
        bars = tuple(args.bars) if args.bars else choose_bars(train)
        model = fit([s for ss in train.values() for s in ss], *bars)
        before, after = row(score(data[left], None)), row(score(data[left], model))
        results["sets"][left] = {"bars": bars, "rules": before, "learned": after}
        corpus.log(f"{left}: bars {bars} rules {before} learned {after}")
    print("| left out | rules P | rules R | rules + model P | rules + model R | bars (admit, veto) | must-not hits |")
    print("|---|---|---|---|---|---|---|")
    for left, r in results["sets"].items():
        a, b = r["rules"], r["learned"]
        print(f"| {left} | {a['precision']} | {a['recall']} | {b['precision']} | {b['recall']} | {r['bars']} | "
              f"{a['must_not']} → {b['must_not']} |")  # fmt: skip
    results["open_sentences"] = open_precision(data, (0.1, 0.2, 0.3))
    print("\n| left out | sentences no rule kept | of them a missed label | from 0.1 | from 0.2 | from 0.3 |")
    print("|---|---|---|---|---|---|")
    for left, r in results["open_sentences"].items():
        print(f"| {left} | {r['open']} | {r['positive']} | {r['>=0.1']} | {r['>=0.2']} | {r['>=0.3']} |")
    results["missed_families"] = families(data)
    print("\n| what the rules miss (label category / speaker / the user's next turn) | sentences |\n|---|---|")
    for family, n in results["missed_families"].items():
        print(f"| {family} | {n} |")
    results["seconds"] = round(time.perf_counter() - started)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    corpus.log(f"{results['seconds']} s; results in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
