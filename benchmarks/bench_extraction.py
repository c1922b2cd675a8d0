"""Extraction benchmark (issue 15): precision and recall of the memories `codememory capture` extracts from
realistic coding sessions, against labels written by hand (benchmarks/data/extraction/README.md).

    .venv/bin/python benchmarks/bench_extraction.py                 # replay the recordings, rules only (~1 min)
    .venv/bin/python benchmarks/bench_extraction.py --verbose       # and list every miss and stray memory
    .venv/bin/python benchmarks/bench_extraction.py --record        # re-record every OpenCode session first
    .venv/bin/python benchmarks/bench_extraction.py --record py-linkshort --only py-linkshort
    .venv/bin/python benchmarks/bench_extraction.py --record-claude  # re-record every script through `claude`
    .venv/bin/python benchmarks/bench_extraction.py --assistant opencode  # score one assistant's sessions only
    .venv/bin/python benchmarks/bench_extraction.py --set heldout  # the held-out set (data/extraction/heldout/)
    .venv/bin/python benchmarks/bench_extraction.py --set heldout2 # the final, untuned one (data/extraction/heldout2/)
    .venv/bin/python benchmarks/bench_extraction.py --with-model http://127.0.0.1:11434/v1 --model qwen2.5:7b

The corpus: session scripts (data/extraction/<set>/sessions/*.json), each recorded through the real `opencode`
binary (recorded/) and through the real `claude` binary (recorded-claude/), both with a scripted model, and a few
hand-written Claude Code / Codex transcripts in those CLIs' JSONL formats. Every item is replayed into a fresh HOME
under benchmarks/.work/extraction/ (OpenCode's database rebuilt from the recordings; Claude Code's transcripts
written where it writes them and handed to the capture hooks `init` installs; the hand-written transcripts to the
real `codememory-hook ... SessionEnd`), then `codememory capture --idle-after 0` runs once, with no model
configured unless --with-model, and each project's memories are scored (extraction_score.py), per assistant.

Prints a markdown table per assistant and writes benchmarks/results-extraction[-<set>].json (every memory with its
verdict and every missed label are in it); a partial run (--only, --assistant) or a model run writes
benchmarks/.work/extraction/results.json unless --out is given.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extraction_claude
import extraction_corpus as corpus
import extraction_score as scoring
from support.scripted_llm import Reply, ScriptedLLM

NO_MEMORIES = json.dumps({"memories": [], "already_known": []})

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "extraction"
RESULTS = {
    "main": HERE / "results-extraction.json",
    "heldout": HERE / "results-extraction-heldout.json",
    "heldout2": HERE / "results-extraction-heldout2.json",
    **{name: HERE / f"results-extraction-{name.replace('_', '-')}.json" for name in corpus.SETS if "_" in name},
    "planted": HERE / "results-extraction-planted.json",
}
ASSISTANTS = ("opencode", "claude")
TARGETS = {"precision": 0.8, "recall": 0.6, "category_recall_min": 0.4}
DEFAULT_MUST_NOT = [  # what never belongs in memory, whatever the session (labels add their own)
    {"id": "files-changed", "why": "files touched belong to the session and the daily log", "match": [
        ["re:files? (changed|touched|edited|modified)", "re:^(edited|modified|changed) [\\w./-]+\\.\\w+$"]]},
]  # fmt: skip


def score_items(items: list[dict[str, Any]], memories: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    forbidden = [scoring.Forbidden.from_dict(f) for f in DEFAULT_MUST_NOT]
    scores = []
    for item in items:
        labels = [scoring.Label.from_dict(lb) for lb in item["labels"]]
        extra = [scoring.Forbidden.from_dict(f) for f in item.get("must_not", [])]
        scores.append(scoring.score_session(item["name"], labels, forbidden + extra, memories.get(item["name"], [])))
    return scoring.summarise(scores)


def targets_of(summary: dict[str, Any]) -> dict[str, Any]:
    o = summary["overall"]
    worst = min((r["recall"] for r in summary["categories"].values() if r["recall"] is not None), default=None)
    return {
        "precision": {"target": TARGETS["precision"], "measured": o["precision"]},
        "recall": {"target": TARGETS["recall"], "measured": o["recall"]},
        "category_recall_min": {"target": TARGETS["category_recall_min"], "measured": worst},
    }


def git_commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--set", choices=sorted(corpus.SETS), default="main", help="the corpus: main, or a held-out set"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="score only these items (file stems)")
    parser.add_argument("--record", nargs="*", metavar="NAME", help="re-record these OpenCode items (none: all)")
    parser.add_argument(
        "--record-claude", nargs="*", metavar="NAME", help="re-record these scripts through claude (none: all)"
    )
    parser.add_argument(
        "--assistant", choices=ASSISTANTS, action="append", help="score only this assistant's sessions (repeatable)"
    )
    parser.add_argument("--record-only", action="store_true", help="record (--record, --record-claude), do not score")
    parser.add_argument(
        "--work", type=Path, default=WORK, help="the scratch folder (default benchmarks/.work/extraction)"
    )
    parser.add_argument(
        "--with-model",
        metavar="URL",
        help="extract with a model: [llm] provider=openai at this base URL in the replay user's own config; "
        "'scripted': a scripted server on 127.0.0.1 that answers every extraction with no memories (checks that "
        "the model path is taken: the run fails if capture made no model call)",
    )
    parser.add_argument("--model", default="", help="the model name for --with-model")
    parser.add_argument("--api-key-env", default="", help="env var holding the API key for --with-model")
    parser.add_argument(
        "--skip-unrecorded",
        action="store_true",
        help="leave an item out of an assistant's table when that assistant has no recording of it (listed)",
    )
    parser.add_argument("--verbose", action="store_true", help="list missed labels and stray memories")
    parser.add_argument("--out", type=Path, help="where to write the JSON results")
    args = parser.parse_args(argv)
    args.work = args.work.resolve()  # HOME for the CLIs: a relative one would be read from each project's folder

    data = corpus.SETS[args.set]
    items = corpus.load_items(args.only, data)
    if not items:
        sys.exit("no corpus item matches --only")
    started = time.perf_counter()
    recorded = []
    if args.record is not None:
        names = set(args.record) or {i["name"] for i in corpus.load_items(None, data) if i["source"] == "opencode"}
        for item in corpus.load_items(sorted(names), data):
            if item["source"] == "opencode":
                recorded.append(corpus.record(item, args.work))
                corpus.log(f"recorded {recorded[-1]}")
    if args.record_claude is not None:
        names = set(args.record_claude) or {i["name"] for i in items if i["source"] == "opencode"}
        for item in corpus.load_items(sorted(names), data):
            if item["source"] == "opencode":
                recorded.append(extraction_claude.record(item, args.work))
                corpus.log(f"recorded through claude {recorded[-1]}")
    if args.record_only:
        corpus.log(f"recorded {len(recorded)} item(s); nothing scored (--record-only)")
        return 0
    llm = None
    if args.with_model:
        llm = {"provider": "openai", "base_url": args.with_model, "model": args.model}
        if args.api_key_env:
            llm["api_key_env"] = args.api_key_env
    assistants = tuple(args.assistant or ASSISTANTS)
    with contextlib.ExitStack() as stack:
        scripted = None
        if llm and args.with_model == "scripted":
            scripted = stack.enter_context(ScriptedLLM(lambda body: Reply(NO_MEMORIES)))
            llm.update(base_url=scripted.base_url, model=args.model or "scripted-model")
        memories, report = corpus.replay(
            items, args.work, llm, assistants=assistants, skip_unrecorded=args.skip_unrecorded
        )
        requests_seen = len(scripted.requests) if scripted else None
    seconds = round(time.perf_counter() - started, 1)
    model_use = corpus.model_use(report, memories) if llm else None
    if model_use is not None:
        if requests_seen is not None:
            model_use["requests_seen_by_server"] = requests_seen
        corpus.log(f"model use: {model_use}")
    results: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": git_commit(),
        "set": args.set,
        "command": "python benchmarks/bench_extraction.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "model": llm,
        "model_use": model_use,
        "seconds": seconds,
        "recorded": recorded,
        "capture": {"turns_captured": report.get("turns_captured"), "errors": report.get("errors")},
        "unrecorded": report.get("unrecorded", []),
    }
    for assistant in assistants:
        scored = [i for i in items if i["name"] in memories[assistant]]
        summary = score_items(scored, memories[assistant])
        print(f"\n### {assistant} ({args.set})\n")
        print(scoring.markdown(summary))
        if args.verbose:
            print(scoring.misses(summary))
        results[assistant] = {"targets": targets_of(summary), **summary}
    partial = bool(args.only) or llm is not None or set(assistants) != set(ASSISTANTS)
    out = args.out or (args.work / "results.json" if partial else RESULTS[args.set])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    corpus.log(f"{seconds} s; results in {out}")
    if model_use is not None and not model_use["llm_calls"]:
        corpus.log("the model was configured but capture made no model call: these figures are the rules'")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
