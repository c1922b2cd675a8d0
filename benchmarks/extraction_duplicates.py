"""The duplicates of bench_extraction.py results, sorted into rough classes (issue 25), per set.

    .venv/bin/python benchmarks/extraction_duplicates.py DIR [--list]

DIR holds `<set>.json` files written by `bench_extraction.py --out`. A duplicate is a stored memory matching only
labels another memory already matched (extraction_score.py); it is classed against the first memory that matched
one of its labels. The classes are a first cut to read by hand, not a verdict: a short answer (either side ≤ 7
words), a todo beside another category, a fact beside a choice, a long memory (≥ 35 words) beside another
category, other.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any

SHORT_WORDS = 7
LONG_WORDS = 35


def duplicate_class(dup: dict[str, Any], first: dict[str, Any]) -> str:
    cats = {dup["category"], first["category"]}
    sizes = len(dup["text"].split()), len(first["text"].split())
    if min(sizes) <= SHORT_WORDS:
        return "short-answer"
    if "todo" in cats and len(cats) == 2:
        return "todo-beside-other"
    if cats in ({"fact", "decision"}, {"fact", "convention"}):
        return "fact-beside-choice"
    if max(sizes) >= LONG_WORDS and len(cats) == 2:
        return "long-beside-other"
    return "other"


def main(argv: list[str]) -> None:
    folder, listing = Path(argv[0]), "--list" in argv
    total: collections.Counter[str] = collections.Counter()
    for path in sorted(folder.glob("*.json")):
        per_set: collections.Counter[str] = collections.Counter()
        for session in json.loads(path.read_text())["opencode"]["sessions"]:
            memories = session["memories"]
            for i, memory in enumerate(memories):
                if memory["kind"] != "duplicate":
                    continue
                # the scorer's order is not always the stored order: then any other memory with one of its labels
                shares = [m for m in memories if m is not memory and set(m["labels"]) & set(memory["labels"])]
                firsts = [m for m in memories[:i] if m in shares] or shares
                kind = duplicate_class(memory, firsts[0]) if firsts else "other"
                per_set[kind] += 1
                if listing and firsts:
                    print(
                        f"  {path.stem} {session['name']} {kind}: {memory['text'][:90]!r} <> {firsts[0]['text'][:90]!r}"
                    )
        total += per_set
        print(f"{path.stem:14} duplicates={sum(per_set.values()):2} {dict(per_set)}")
    print("all", sum(total.values()), dict(total))


if __name__ == "__main__":
    main(sys.argv[1:])
