"""How well any HUD that carries the turn's block could do: the labels alone, with a perfect request decision.

    python benchmarks/research/hud_bound.py [--data DIR ...]     # default: the seven released agent-view scenarios

No run and no store: for every turn of each scenario (benchmarks/data/agent_view*/steps.json) the turn's block is
taken to be exactly the memories its steps need (the union of their labels: a relevance decision that never errs),
and each step is scored as bench_agent_view.py scores a call (precision of what it carries, recall of its labels,
the share of steps needing nothing that carry nothing) under each way of showing the block:

- `kept`: at every call of the turn (what the OpenCode plugin did);
- `later`: from the turn's second call on (the first call, with no tool call yet, is the agent looking around);
- `once`: at the turn's first call only;
- `not-after-routine`: not at a call that follows a routine call (retrieval/step.py Step.routine).

Also printed, per scenario: how often a step needs any memory at the turn's first call and at later ones, and the
chance that a block memory is needed at a step when the step's own call names it (its file, folder or command) or
when only the previous call does: the signal the HUD has (the previous call) against the one the labels follow (the
step's own call, which comes after the HUD).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
DATA = Path(__file__).resolve().parents[1] / "data"
SCENARIOS = ["agent_view", *(f"agent_view_judge{n}" for n in ("", 2, 3, 4, 5, 6))]
WAYS = ("kept", "later", "once", "not-after-routine")


def step_of(step: dict[str, Any]) -> Any:
    from codememory.retrieval.step import step_from_call

    calls = step.get("tool_calls") or []
    if not calls:
        return None
    args = {k: str(v).replace("{root}/", "") for k, v in calls[-1].get("args", {}).items()}
    return step_from_call(calls[-1]["tool"], args)


def bound(data: Path) -> dict[str, Any]:
    texts = {m["id"]: m["text"] for m in map(json.loads, (data / "memories.jsonl").read_text().splitlines())}
    scenario = json.loads((data / "steps.json").read_text())
    figures: dict[str, Any] = {}
    signal: Counter[tuple[str, bool, bool]] = Counter()
    need: Counter[tuple[bool, bool]] = Counter()
    for way in WAYS:
        precisions, recalls, nothing, blank = [], [], 0, 0
        for session in scenario["sessions"]:
            for turn in session["turns"]:
                labels = [set(s.get("relevant") or []) for s in turn["steps"]]
                block = set().union(*labels)
                steps = [step_of(s) for s in turn["steps"]]
                for i, wanted in enumerate(labels):
                    before = steps[i - 1] if i else None
                    shown = {
                        "kept": block,
                        "later": block if i else set(),
                        "once": set() if i else block,
                        "not-after-routine": set() if before is not None and before.routine else block,
                    }[way]
                    if shown:
                        precisions.append(len(shown & wanted) / len(shown))
                    if wanted:
                        recalls.append(len(shown & wanted) / len(wanted))
                    else:
                        nothing += 1
                        blank += not shown
                    if way != "kept":
                        continue
                    need[(i == 0, bool(wanted))] += 1
                    for m in block:
                        own = steps[i] is not None and bool(steps[i].touches(texts[m]) or steps[i].in_folder(texts[m]))
                        prev = before is not None and bool(before.touches(texts[m]) or before.in_folder(texts[m]))
                        signal[("own", own, m in wanted)] += 1
                        signal[("previous", prev, m in wanted)] += 1
        figures[way] = {
            "precision": round(statistics.fmean(precisions), 2) if precisions else None,
            "recall": round(statistics.fmean(recalls), 2) if recalls else None,
            "nothing_blank": round(blank / nothing, 2) if nothing else None,
        }

    def share(hit: int, total: int) -> str:
        return f"{hit}/{total}"

    figures["needs_memory"] = {
        "first_call": share(need[(True, True)], need[(True, True)] + need[(True, False)]),
        "later_calls": share(need[(False, True)], need[(False, True)] + need[(False, False)]),
    }
    figures["block_memory_needed"] = {
        f"{which} call names it" if named else f"{which} call does not": share(
            signal[(which, named, True)], signal[(which, named, True)] + signal[(which, named, False)]
        )
        for which in ("own", "previous")
        for named in (True, False)
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / s for s in SCENARIOS])
    args = parser.parse_args()
    for data in args.data:
        print(json.dumps({"scenario": data.name, **bound(data)}))


if __name__ == "__main__":
    main()
