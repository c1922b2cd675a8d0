"""Where the HUD's unneeded memories come from: every memory a real OpenCode run put in front of a step, by stage.

    python benchmarks/research/hud_noise.py [--calls=N] RUN:DATA[:FINISHED] [RUN:DATA ...]

Each RUN is a `bench_agent_view.py --only opencode --work W` run's folder W (its results.json and the plugin's trace
under opencode/), DATA its scenario. For every labelled model call, each memory the call carries from codememory
(the cold start, the turn's block, the call's own HUD) is put in one stage, and counted as needed (in the step's
labels) or not:

- `cold`: the session's cold-start block (its first call only);
- `turn@first`: the turn's block at the turn's first call (the relevance decision on the user's request);
- `turn@later`: the same block carried to a later call of the turn; an unneeded one is split by whether the turn
  needed it at an earlier step (`earlier`: carried past its step), at a later one only (`later`) or never (`never`:
  the request's decision was wrong);
- `step`: what a later call's own HUD added, by its reason (the file or command the previous call touched, a
  folder, a pin kept, or the request's words).

Also printed: the steps that need nothing and carry something, by the stage that put the first memory there, and
the same counts by the kind of call the step follows (the turn's first call, a routine look, a read, an edit …), and
each run's figures as bench_agent_view.py scores them. A run still going is read as far as it got (`--calls=N`: only
the first N calls of each run, to compare it with a finished one; FINISHED: a finished run of the same scenario
whose requests.jsonl says which scripted steps were called).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def follows(steps: list[dict[str, Any]], i: int) -> str:
    from codememory.retrieval.step import step_from_call

    if i == 0:
        return "first"
    calls = steps[i - 1].get("tool_calls") or []
    if not calls:
        return "answer"
    call = calls[-1]
    step = step_from_call(call["tool"], {k: str(v) for k, v in call.get("args", {}).items()}, root="{root}")
    return ("routine " if step.routine else "") + call["tool"]


def analyse(
    run: Path,
    data: Path,
    stages: Counter[tuple[str, bool]],
    blanks: Counter[str],
    kinds: Any,
    limit: int | None = None,
    order: Path | None = None,
) -> dict[str, Any]:
    """Counts the run's calls (its first `limit` only, to compare a run still going with a finished one) into the
    tallies, and returns its figures as bench_agent_view.py scores a call: precision of what the call carries (cold
    start, turn's block, HUD), recall of its labels, the share of steps needing nothing that carry nothing."""
    trace = [json.loads(line) for line in (run / "opencode" / "plugin-trace.jsonl").read_text().splitlines() if line]
    traced: list[tuple[dict[str, Any], list[str]]] = []
    cold: list[str] = []
    for entry in trace:  # the cold start is traced while its call is planned, before the call's own entry
        if entry.get("hook") == "system" and isinstance(entry.get("cold"), list):
            cold = entry["cold"]
        elif entry.get("hook") == "messages":
            traced.append((entry, cold))
            cold = []
    scenario = json.loads((data / "steps.json").read_text())
    recorded = run / "opencode" / "requests.jsonl"
    recorded = recorded if recorded.exists() or order is None else order / "opencode" / "requests.jsonl"
    if recorded.exists():  # a run still going is paired as another run of the scenario called its steps (`order`)
        at = [c["at"] for c in map(json.loads, recorded.read_text().splitlines()) if c.get("at")]
    else:  # a run still going: its calls so far, in the scenario's order
        at = [
            (s, t, i)
            for s, sess in enumerate(scenario["sessions"])
            for t, turn in enumerate(sess["turns"])
            for i in range(len(turn["steps"]))
        ]
    if len(traced) != len(at):
        print(f"{run}: {len(traced)} traced calls for {len(at)} scripted ones; paired in order (a partial run?)")
    precisions, recalls, nothing, blank = [], [], 0, 0
    for (t, cold_ids), (s, ti, i) in list(zip(traced, at, strict=False))[:limit]:
        steps = scenario["sessions"][s]["turns"][ti]["steps"]
        need = set(steps[i].get("relevant") or [])
        earlier = {m for x in steps[:i] for m in x.get("relevant") or []}
        later = {m for x in steps[i + 1 :] for m in x.get("relevant") or []}
        turn_ids = list(t.get("turn") or [])
        surfaced = list(t.get("surfaced") or [])
        why = {m["id"]: m.get("why") or {} for m in (t.get("request") or {}).get("memories", []) if "id" in m}
        first_stage = None
        for mid in dict.fromkeys([*cold_ids, *turn_ids, *surfaced]):
            if mid in cold_ids:
                stage = "cold"
            elif mid in turn_ids:
                stage = "turn@first" if i == 0 else "turn@later"
            else:
                w = why.get(mid, {})
                stage = "step:" + (
                    "pinned" if w.get("pinned") else w["step"].split(" ")[0] if isinstance(w.get("step"), str) else "?"
                )
            if mid not in need and stage.startswith("turn"):
                stage += ":earlier" if mid in earlier else ":later" if mid in later else ":never"
            stages[(stage, mid in need)] += 1
            first_stage = first_stage or stage
        carried = {*cold_ids, *turn_ids, *surfaced}
        if carried:
            precisions.append(len(carried & need) / len(carried))
        if need:
            recalls.append(len(carried & need) / len(need))
        else:
            nothing += 1
            blank += not carried
        kind = follows(steps, i)
        kinds[kind]["steps"] += 1
        kinds[kind]["need"] += bool(need)
        if not need:
            blanks[first_stage or "blank"] += 1
            kinds[kind]["nothing"] += 1
            kinds[kind]["nothing_blank"] += first_stage is None
    return {
        "run": str(run),
        "calls": min(len(traced), len(at), limit or len(at)),
        "precision": round(statistics.fmean(precisions), 3) if precisions else None,
        "recall": round(statistics.fmean(recalls), 3) if recalls else None,
        "nothing_blank": round(blank / nothing, 3) if nothing else None,
    }


def main() -> None:
    stages: Counter[tuple[str, bool]] = Counter()
    blanks: Counter[str] = Counter()
    kinds: Any = defaultdict(Counter)
    args = sys.argv[1:]
    limit = int(args.pop(0).removeprefix("--calls=")) if args and args[0].startswith("--calls=") else None
    for arg in args:
        run, data, *order = arg.split(":")
        figures = analyse(Path(run), Path(data), stages, blanks, kinds, limit, Path(order[0]) if order else None)
        print(json.dumps(figures))
    print("stage                      needed  unneeded")
    for stage in sorted({s for s, _ in stages}):
        print(f"{stage:26} {stages[(stage, True)]:6}  {stages[(stage, False)]:8}")
    print("\nsteps needing nothing, by what put the first memory there:", dict(blanks.most_common()))
    print("\nfollows                steps  need  nothing  nothing-blank")
    for kind, c in sorted(kinds.items()):
        print(f"{kind:22} {c['steps']:5} {c['need']:5} {c['nothing']:8} {c['nothing_blank']:8}")


if __name__ == "__main__":
    main()
