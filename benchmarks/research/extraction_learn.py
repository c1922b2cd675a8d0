"""Learning which sentences are durable knowledge from every labelled extraction set, judged on a set left out.

    .venv/bin/python benchmarks/research/extraction_learn.py              # leave-one-set-out table
    .venv/bin/python benchmarks/research/extraction_learn.py --write      # and fit on all, write the package model

Every OpenCode recording of the labelled sets (benchmarks/data/extraction/<set>/recorded/) is read into turns by
codememory's own OpenCode reader; the rules run on each session (extract.heuristic.rule_candidates); each rule
memory and each sentence no rule memory holds (extract.learned.open_units) becomes a unit with its features
(extract.learned.features), positive when it matches a required label of its session (the bench's matching).
A logistic model (numpy, L2) learns durable-or-not, a softmax head the category. For each set left out: the model
and its two bars (veto a rule memory below, admit a sentence from) are chosen on the other sets only (the bars by
an inner leave-one-set-out over them), then the left-out set is scored twice in-process with the bench's scorer:
the rules alone, and the rules judged by the model (extract.learned.judged). The table is the main result.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
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

import extraction_corpus as corpus  # noqa: E402
import extraction_score as scoring  # noqa: E402
from bench_extraction import DEFAULT_MUST_NOT  # noqa: E402

from codememory.capture.opencode_db import OpenCodeDB  # noqa: E402
from codememory.extract import learned  # noqa: E402
from codememory.extract.heuristic import rule_candidates  # noqa: E402

SETS = ("main", "blind_a", "blind_b", "heldout", "heldout2", "blind_judge", "blind_judge2", "blind_judge3")
ADMITS = (0.5, 0.6, 0.7, 0.8, 0.9, 2.0)  # 2.0: admit nothing
VETOES = (0.0, 0.03, 0.06, 0.1, 0.15, 0.2)  # 0.0: drop nothing
L2 = 1.0
STEPS = 300


@dataclass
class Session:
    set: str
    item: str
    spans: list[tuple[list[Any], list[Any]]]  # per recorded session: its turns and the rules' memories
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
                got = rule_candidates(turns, info, oc.todos(info.session_id))
                spans.append((turns, got))
                units += [learned.rule_unit(c, turns) for c in got if learned.judged_rule(c)]
                units += learned.open_units(got, turns)
        required = [lb for lb in labels if not lb.optional]
        cats = [next((lb.category for lb in required if scoring.matches(lb.match, u.text)), "") for u in units]
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
    for turns, candidates in session.spans:
        out += candidates if model is None else learned.judged(candidates, turns, model)
    return out


def score(sessions: list[Session], model: learned.Model | None) -> dict[str, Any]:
    scores = [
        scoring.score_session(s.item, s.labels, s.forbidden, memories(judged(s, model))) for s in sessions
    ]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--write", action="store_true", help="fit on every set and write the package's model")
    parser.add_argument("--no-nested", action="store_true", help="bars chosen on the training sets' own fit")
    parser.add_argument("--out", type=Path, default=HERE / "extraction-learn.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        data = {name: read_sessions(name, Path(tmp)) for name in args.sets}
    corpus.log(f"read {sum(len(v) for v in data.values())} items in {time.perf_counter() - started:.0f} s")
    for name, ss in data.items():
        n = sum(len(s.units) for s in ss)
        corpus.log(f"{name}: {len(ss)} items, {n} units, {int(sum(s.targets.sum() for s in ss))} positive")
    results = {}
    for left in args.sets:
        train = {k: v for k, v in data.items() if k != left}
        bars = (0.8, 0.06) if args.no_nested else choose_bars(train)
        model = fit([s for ss in train.values() for s in ss], *bars)
        before, after = row(score(data[left], None)), row(score(data[left], model))
        results[left] = {"bars": bars, "rules": before, "learned": after}
        corpus.log(f"{left}: bars {bars} rules {before} learned {after}")
    print("| left out | rules P | rules R | learned P | learned R | bars (admit, veto) | must-not |")
    print("|---|---|---|---|---|---|---|")
    for left, r in results.items():
        a, b = r["rules"], r["learned"]
        print(f"| {left} | {a['precision']} | {a['recall']} | {b['precision']} | {b['recall']} | {r['bars']} | "
              f"{a['must_not']}→{b['must_not']} |")  # fmt: skip
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    if args.write:
        everything = {k: v for k, v in data.items()}
        bars = choose_bars(everything)
        model = fit([s for ss in everything.values() for s in ss], *bars)
        target = Path(learned.__file__).with_name(learned.WEIGHTS_FILE)
        target.write_bytes(model.to_bytes())
        corpus.log(f"wrote {target} (bars {bars})")
    corpus.log(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
