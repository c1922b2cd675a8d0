"""Keep the request's memories for the turn, or decide every call anew: the HUD replayed turn by turn.

    python benchmarks/research/hud_carry.py --runs RUN1:DATA1 RUN2:DATA2 ...

Each RUN is a `bench_agent_view.py --only opencode` run's opencode folder (its plugin trace and store), DATA its
scenario. Every traced /retrieve request is asked again of the run's own store (the daemon's code path, no pins
carried, the cold start not counted), turn by turn, under each way of planning a turn:

- `every`: each call decided anew on its own request (the HUD before the turn block; what `hud_replay.py` scores);
- `kept`: the turn's first call decides on the request alone and its answer stays beside the user's message for
  the rest of the turn; a later call is asked with that answer excluded and `request_carried` (it gets only what its
  step brings: a memory about the file it touched or the command it ran);
- `kept-redecide`: the same block kept, but a later call is decided as before (the request's memories may come
  back in it when the block left them out), with the block's memories excluded;
- `kept-grow`: as `kept`, and what a step brought joins the turn's block for the turn's later calls.

Each call is scored on what it carries from codememory (the turn's block and the call's own HUD), as
`bench_agent_view.py` counts a call: precision and recall against the step's labels, and the share of steps
labelled with no memory that carry no memory at all. Printed: each way on each scenario, then for each scenario
left out the way that scores best on the others (the mean of the three figures) and its figures on the one left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from hud_replay import load  # type: ignore[import-not-found]

WAYS = ("every", "kept", "kept-redecide", "kept-grow")


def turns_of(run: Path) -> list[tuple[tuple[int, int], list[str]]]:
    """The (session, turn) of each request `hud_replay.load` pairs, in the same order, and the ids of the cold-start
    block of its call (the session's first call)."""
    trace = [json.loads(line) for line in (run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    traced: list[tuple[dict[str, Any], list[str]]] = []
    cold: list[str] = []
    for entry in trace:
        if entry.get("hook") == "system" and isinstance(entry.get("cold"), list):
            cold = entry["cold"]
        elif entry.get("hook") == "messages":
            traced.append((entry, cold))
            cold = []
    calls = [json.loads(line) for line in (run / "requests.jsonl").read_text().splitlines() if line.strip()]
    at = [c["at"] for c in calls if c.get("at")]
    return [((s, t), c) for (tr, c), (s, t, _i) in zip(traced, at, strict=True) if "request" in tr]


def ask(
    store: Any, request: dict[str, Any], call: dict[str, Any] | None, exclude: list[str], carried: bool
) -> list[str]:
    from codememory.retrieval.step import step_from_call

    step = step_from_call(**call, root=str(store.root)) if call else None
    result = store.retrieve(
        request["query_expansion"],
        entities=request.get("entities") or [],
        exclude=exclude,
        max_memories=request.get("max_memories", 4),
        max_new=request.get("max_new", 3),
        token_budget=request.get("token_budget", 1500),
        touch=False,
        step=step,
        request_carried=carried and step is not None,
        **({"request_phrases": request["request_phrases"]} if "request_phrases" in request else {}),
    )
    return [m.id for m in result.memories]


def replay(store: Any, pairs: list[Any], turns: list[tuple[tuple[int, int], list[str]]], way: str) -> dict[str, Any]:
    precisions, recalls, nothing, blank, shown_all, hits_all = [], [], 0, 0, 0, 0
    turn: tuple[int, int] | None = None
    block: list[str] = []
    for (request, relevant, call), (where, cold) in zip(pairs, turns, strict=True):
        exclude = list(request.get("exclude_memory_ids") or [])
        if way == "every":
            carried = ask(store, request, call, exclude, False)
        elif where != turn:  # the turn's first call: its answer is kept for the turn
            turn = where
            # asked with the cold start's memories (its block is this call's only), shown here without them
            block = ask(store, request, call, [i for i in exclude if i not in cold], False)
            carried = [i for i in block if i not in cold]
        else:
            step_ids = [] if call is None else ask(store, request, call, [*exclude, *block], way != "kept-redecide")
            carried = list(dict.fromkeys([*block, *step_ids]))
            if way == "kept-grow":
                block = carried
        hits = len(set(carried) & set(relevant))
        shown_all, hits_all = shown_all + len(carried), hits_all + hits
        if carried:
            precisions.append(hits / len(carried))
        if relevant:
            recalls.append(hits / len(relevant))
        else:
            nothing += 1
            blank += not carried
    return {
        "hud_precision": round(statistics.fmean(precisions), 3) if precisions else None,
        "hud_precision_micro": round(hits_all / shown_all, 3) if shown_all else None,
        "hud_recall": round(statistics.fmean(recalls), 3) if recalls else None,
        "nothing_without_hud": round(blank / nothing, 3) if nothing else None,
        "calls_with_hud": len(precisions),
        "shown": shown_all,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, help="RUN:DATA pairs (opencode folder : scenario folder)")
    parser.add_argument("--ways", default=",".join(WAYS))
    args = parser.parse_args()
    from codememory import Store

    ways = args.ways.split(",")
    if unknown := [w for w in ways if w not in WAYS]:
        sys.exit(f"unknown way(s): {', '.join(unknown)} (choose from {', '.join(WAYS)})")
    table: dict[str, dict[str, dict[str, Any]]] = {w: {} for w in ways}
    names = []
    for spec in args.runs:
        run, data = (Path(p) for p in spec.split(":"))
        store, pairs, turns = Store.open(run / "project"), load(run, data), turns_of(run)
        names.append(data.name)
        for way in ways:
            table[way][data.name] = replay(store, pairs, turns, way)
            print(json.dumps({"scenario": data.name, "way": way, **table[way][data.name]}), flush=True)

    def merit(figures: dict[str, Any]) -> float:
        keys = ("hud_precision", "hud_recall", "nothing_without_hud")
        return statistics.fmean(float(figures[k] or 0.0) for k in keys)

    if len(names) < 2:
        return
    print("left out: the best way on the others, and its figures on the one left out")
    for out in names:
        best = max(ways, key=lambda w: statistics.fmean(merit(table[w][n]) for n in names if n != out))
        print(f"  {out}: {best} -> {table[best][out]}  (every: {table['every'][out] if 'every' in table else '-'})")


if __name__ == "__main__":
    main()
