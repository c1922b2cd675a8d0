"""Benchmark of the core store and search: import throughput, in-process search latency by query kind,
end-to-end CLI search latency and `forget` (which purges the full-text index segments).

    python benchmarks/bench_core.py [--sizes 1000,10000,100000] [--queries 200] [--out benchmarks/results-core.json]

For each size it generates memories (benchmarks/synthetic.py, seeded), creates a fresh project under
benchmarks/.work/ (gitignored), imports them with `Store.import_` and then measures. The project is keyword-only
(its config sets `[embedding] provider = "none"`): import rate and search are the keyword engine's, not the
embedding model's (`--with-model` keeps the default model: every import then embeds, at tens per second;
bench_scale.py measures large stores with vectors). Searches run the way
the CLI runs them: default limit 10, default fuzzy=None (typo-tolerant fallback only when exact matches
are fewer than the limit) and touch=True (every search records access stats, i.e. one write).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic
from codememory import Store, __version__

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CLI = Path(sys.executable).parent / "codememory"
KINDS = ("single", "multi", "phrase", "fuzzy")
WARMUP = 5
CLI_RUNS = 30
CLI_MAX_SIZE = 10_000
FORGETS = 3
# Targets: in-process search p50 by store size, CLI search p50 by store size, import rate.
TARGET_SEARCH_P50_MS = {10_000: 5.0, 100_000: 30.0}
TARGET_CLI_P50_MS = {10_000: 200.0}
TARGET_IMPORT_PER_S = 5_000.0
_TOKEN_RE = re.compile(r"[^\W_]+")  # what SQLite's unicode61 tokenizer calls a token (underscore separates)


# ------------------------------------------------------------------------------------------ queries
def _typo(word: str, rng: random.Random) -> str:
    """One transposition of neighbouring letters or one dropped letter, never touching the first letter."""
    for _ in range(20):
        if rng.random() < 0.5:
            i = rng.randrange(1, len(word) - 1)
            if word[i] != word[i + 1]:
                return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        else:
            i = rng.randrange(1, len(word))
            return word[:i] + word[i + 1 :]
    return word[:-1]


def make_queries(records: list[dict[str, Any]], count: int, seed: int) -> dict[str, list[str]]:
    """`count` queries of each kind, all drawn from the generated vocabulary so they find something."""
    rng = random.Random(seed)
    corpus_tokens = {t for r in records for t in _TOKEN_RE.findall(r["text"].lower())}
    singles = [w for w in synthetic.single_words() if w.lower() in corpus_tokens or "_" in w]
    phrases = [p for p in synthetic.PHRASES if any(p in r["text"] for r in records[:2000])] or synthetic.PHRASES

    multi: list[str] = []
    while len(multi) < count:
        words = [w for w in synthetic.content_words(rng.choice(records)["text"]) if len(w) >= 4 and "_" not in w]
        k = rng.choice((2, 2, 3))
        if len(words) >= k:
            multi.append(" ".join(rng.sample(words, k)))

    # Typos of real words: mostly the names people search for (technologies, nouns, error names), some
    # other words of the texts (identifiers included). The misspelling itself must not be a word of the
    # store, or the exact search would find it and the fallback would not run.
    names = [w.lower() for w in singles if w.isalpha() and len(w) >= 5]
    others = sorted(t for t in corpus_tokens if t.isalpha() and 6 <= len(t) <= 16)
    fuzzy: list[str] = []
    while len(fuzzy) < count:
        typo = _typo(rng.choice(names if rng.random() < 0.7 else others), rng)
        if typo not in corpus_tokens:
            fuzzy.append(typo)

    return {
        "single": [rng.choice(singles) for _ in range(count)],
        "multi": multi,
        "phrase": [f'"{rng.choice(phrases)}"' for _ in range(count)],
        "fuzzy": fuzzy,
    }


# ------------------------------------------------------------------------------------------- timing
def pct(samples: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def summary(ms: list[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(pct(ms, 50), 3),
        "p95_ms": round(pct(ms, 95), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
        "max_ms": round(max(ms), 3),
    }


def time_searches(store: Store, queries: list[str], warmup: list[str], *, touch: bool = True) -> dict[str, Any]:
    for q in warmup:
        store.search(q, touch=touch)
    ms: list[float] = []
    hits = 0
    fuzzy_used = 0
    for q in queries:
        t0 = time.perf_counter()
        result = store.search(q, touch=touch)  # limit=10, fuzzy=None, touch=True: what `codememory search` does
        ms.append((time.perf_counter() - t0) * 1000)
        hits += len(result.hits)
        fuzzy_used += result.fuzzy_used
    return {
        **summary(ms),
        "mean_hits": round(hits / len(queries), 2),
        "fuzzy_fallback_share": round(fuzzy_used / len(queries), 3),
        "examples": queries[:5],
    }


def cli_env(bytecode_cache: bool) -> dict[str, str]:
    """Environment for the CLI runs. An installed package has its bytecode compiled, so by default the
    runs get a bytecode cache (kept under .work/, never next to the sources), even when the calling shell
    sets PYTHONDONTWRITEBYTECODE; bytecode_cache=False measures the compile-every-time case."""
    env = dict(os.environ)
    env.pop("CODEMEMORY_PROJECT", None)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(WORK / "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def time_cli(args: list[str], runs: int, *, bytecode_cache: bool = True) -> dict[str, Any]:
    env = cli_env(bytecode_cache)
    ms: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([str(CLI), *args], capture_output=True, text=True, check=False, env=env)
        ms.append((time.perf_counter() - t0) * 1000)
        if proc.returncode != 0:
            raise RuntimeError(f"codememory {' '.join(args)} failed: {proc.stderr.strip()}")
    return summary(ms)


def db_bytes(store: Store) -> int:
    path = store.store_path
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


# -------------------------------------------------------------------------------------------- run
KEYWORD_ONLY = '[embedding]\nprovider = "none"\n'


def bench_size(n: int, queries_per_kind: int, seed: int, with_model: bool = False) -> dict[str, Any]:
    jsonl = WORK / f"memories-{n}.jsonl"
    project = WORK / f"store-{n}"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)

    records, gen_s = timed(lambda: synthetic.write_jsonl(jsonl, n, seed))
    log(f"[{n:,}] generated {n:,} memories in {gen_s:.1f} s ({jsonl.stat().st_size / 1e6:.1f} MB JSONL)")

    if not with_model:
        (project / ".codememory").mkdir()
        (project / ".codememory" / "config.toml").write_text(KEYWORD_ONLY)
    store, _ = Store.init(project)
    report, import_s = timed(lambda: store.import_(jsonl))
    if report.added != n:
        raise RuntimeError(f"imported {report.added} of {n}: {report.to_dict()}")
    out: dict[str, Any] = {
        "memories": n,
        "generate_s": round(gen_s, 3),
        "import": {"seconds": round(import_s, 3), "per_s": round(n / import_s, 1)},
        "db_bytes_after_import": db_bytes(store),
        "vocabulary_words": len(store.db.vocabulary()),
    }
    log(f"[{n:,}] import: {import_s:.2f} s = {n / import_s:,.0f} memories/s")

    queries = make_queries(records, queries_per_kind + WARMUP, seed + n)
    out["search"] = {}
    for kind in KINDS:
        qs = queries[kind]
        res = time_searches(store, qs[WARMUP:], qs[:WARMUP])
        out["search"][kind] = res
        log(
            f"[{n:,}] search {kind:6}: p50 {res['p50_ms']:.2f} ms, p95 {res['p95_ms']:.2f} ms "
            f"(mean hits {res['mean_hits']}, fuzzy fallback {res['fuzzy_fallback_share']:.0%})"
        )
    # Same typo queries without access-stat writes: isolates what a search's own write costs the next one.
    res = time_searches(store, queries["fuzzy"][WARMUP:], queries["fuzzy"][:WARMUP], touch=False)
    out["search"]["fuzzy_touch_false"] = res
    log(f"[{n:,}] search fuzzy with touch=False: p50 {res['p50_ms']:.2f} ms, p95 {res['p95_ms']:.2f} ms")
    store.close()

    if n <= CLI_MAX_SIZE:
        base = ["--project", str(project)]
        rng = random.Random(seed)
        single = rng.choice(queries["single"][WARMUP:])
        typo = rng.choice(queries["fuzzy"][WARMUP:])
        time_cli([*base, "search", single, "--json"], 3)  # warm the OS file cache
        out["cli"] = {
            "version": {"args": "--version", **time_cli(["--version"], CLI_RUNS)},
            "search": {"query": single, **time_cli([*base, "search", single, "--json"], CLI_RUNS)},
            "search_fuzzy": {"query": typo, **time_cli([*base, "search", typo, "--json"], CLI_RUNS)},
            "search_no_bytecode_cache": {
                "query": single,
                **time_cli([*base, "search", single, "--json"], CLI_RUNS, bytecode_cache=False),
            },
        }
        cli = out["cli"]
        log(
            f"[{n:,}] CLI search {single!r}: p50 {cli['search']['p50_ms']:.0f} ms, "
            f"p95 {cli['search']['p95_ms']:.0f} ms; "
            f"typo {typo!r}: p50 {cli['search_fuzzy']['p50_ms']:.0f} ms; "
            f"--version p50 {cli['version']['p50_ms']:.0f} ms; "
            f"search without bytecode cache p50 {cli['search_no_bytecode_cache']['p50_ms']:.0f} ms"
        )

    store = Store.open(project)
    victims = random.Random(seed + 1).sample([r["id"] for r in records], FORGETS)
    forget_ms = []
    for mem_id in victims:
        (gone, _unknown), secs = timed(functools.partial(store.forget, [mem_id]))
        if gone != [mem_id]:
            raise RuntimeError(f"forget {mem_id} returned {gone}")
        forget_ms.append(round(secs * 1000, 2))
    out["forget_ms"] = {"runs": forget_ms, "first": forget_ms[0], "median": statistics.median(forget_ms)}
    out["db_bytes_after_forget"] = db_bytes(store)
    store.close()
    log(f"[{n:,}] forget one id: {', '.join(f'{x:.0f}' for x in forget_ms)} ms")
    return out


def machine() -> dict[str, Any]:
    cpu = ""
    mem_gib = None
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        kib = int(next(x for x in meminfo if x.startswith("MemTotal")).split()[1])
        mem_gib = round(kib / 1024**2, 1)
    except (OSError, StopIteration, ValueError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu or platform.processor(),
        "memory_gib": mem_gib,
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "codememory": __version__,
        "git": git_revision(),
    }


def git_revision() -> str | None:
    """Commit of the code under test, with '+dirty' when src/ has uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=HERE.parent, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ report
def _fmt(value: float | None, target: float | None = None, *, higher_is_better: bool = False) -> str:
    if value is None:
        return "–"
    text = f"{value:,.0f}" if value >= 100 else f"{value:.2f}" if value < 10 else f"{value:.1f}"
    if target is None:
        return text
    ok = value >= target if higher_is_better else value <= target
    return f"{text} {'✅' if ok else '❌'}"


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| memories | import /s | single p50 / p95 | multi p50 / p95 | phrase p50 / p95 | fuzzy p50 / p95 "
        "| CLI search p50 / p95 | CLI `--version` p50 | forget (1st / median) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in results["sizes"]:
        n = size["memories"]
        search_target = TARGET_SEARCH_P50_MS.get(n)
        cells = [f"{n:,}", _fmt(size["import"]["per_s"], TARGET_IMPORT_PER_S, higher_is_better=True)]
        for kind in KINDS:
            s = size["search"][kind]
            cells.append(f"{_fmt(s['p50_ms'], search_target)} / {_fmt(s['p95_ms'])} ms")
        cli = size.get("cli")
        if cli:
            cli_target = TARGET_CLI_P50_MS.get(n)
            cells.append(f"{_fmt(cli['search']['p50_ms'], cli_target)} / {_fmt(cli['search']['p95_ms'])} ms")
            cells.append(f"{_fmt(cli['version']['p50_ms'])} ms")
        else:
            cells += ["–", "–"]
        f = size["forget_ms"]
        cells.append(f"{_fmt(f['first'])} / {_fmt(f['median'])} ms")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200, help="measured queries per kind and size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "results-core.json"), help="JSON results file")
    parser.add_argument("--with-model", action="store_true", help="keep the default embedding model (imports embed)")
    args = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if not CLI.exists():
        sys.exit(f"console script not found: {CLI} (install the package into this interpreter's environment)")

    WORK.mkdir(exist_ok=True)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "command": " ".join(["python benchmarks/bench_core.py", *sys.argv[1:]]),
        "machine": machine(),
        "config": {
            "queries_per_kind": args.queries,
            "warmup_per_kind": WARMUP,
            "cli_runs": CLI_RUNS,
            "seed": args.seed,
            "embedding": "default model" if args.with_model else "none (keyword-only)",
        },
        "targets": {
            "search_p50_ms": {str(k): v for k, v in TARGET_SEARCH_P50_MS.items()},
            "cli_p50_ms": {str(k): v for k, v in TARGET_CLI_P50_MS.items()},
            "import_per_s": TARGET_IMPORT_PER_S,
        },
        "sizes": [],
    }
    for n in sizes:
        results["sizes"].append(bench_size(n, args.queries, args.seed, args.with_model))
    results["total_seconds"] = round(time.perf_counter() - started, 1)

    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(results))
    log(f"wrote {args.out} in {results['total_seconds']:.0f} s total")


if __name__ == "__main__":
    main()
