"""The rules alone, scored set by set in-process: the quick way to see what one rule family does to each labelled
set before the full replay (benchmarks/bench_extraction.py) confirms it.

    .venv/bin/python benchmarks/research/extraction_rules_by_set.py
    .venv/bin/python benchmarks/research/extraction_rules_by_set.py --sets blind_judge4 heldout2
    PYTHONPATH=<other tree>/src .venv/bin/python benchmarks/research/extraction_rules_by_set.py   # another version

Every OpenCode recording of a set is read by codememory's own OpenCode reader and the rules run on each session
(extraction_learn.read_sessions, the same reading the learning study uses), then the bench's scorer judges the
memories. Nothing is stored, so the store's dedup and the Claude Code replay are left out: figures may differ from
the bench's by a memory or two (blind_judge4 on main 57e952a: recall 0.55 both, precision 0.71 here and 0.73 in
the bench). Held-out sets are not in the default list; do not pass them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import extraction_learn as learn  # noqa: E402

RELEASED = ["blind_judge", "blind_judge2", "blind_judge3", "blind_judge4", "blind_judge5", "blind_judge6", "main",
            "heldout", "heldout2", "blind_a", "blind_b"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=RELEASED, choices=RELEASED)
    parser.add_argument("--must-not", action="store_true", help="also list the memories that break a must-not rule")
    args = parser.parse_args(argv)
    print("| set | recall | precision | must-not hits |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            sessions = learn.read_sessions(name, Path(tmp) / name)
            summary = learn.score(sessions, None)
            o = summary["overall"]
            print(
                f"| {name} | {o['recall']:.3f} ({o['matched']}/{o['labels']}) | {o['precision']:.3f} "
                f"({o['useful']}/{o['stored']}) | {summary['must_not_hits']} |"
            )
            if args.must_not:
                for s in sessions:
                    memories = learn.memories(learn.judged(s, None))
                    for v in learn.scoring.score_session(s.item, s.labels, s.forbidden, memories).verdicts:
                        if v.forbidden:
                            print(f"  {s.item}: {v.category} by {v.said_by}: {v.text[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
