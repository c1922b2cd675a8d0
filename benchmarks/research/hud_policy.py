"""When in a turn the request's memories are shown: the turn's block replayed under each policy, each scenario left out.

    python benchmarks/research/hud_policy.py --runs RUN1:DATA1 RUN2:DATA2 ...

Each RUN is a `bench_agent_view.py --only opencode` run's opencode folder (its plugin trace and store), DATA its
scenario. As `hud_carry.py`'s `kept` way: the turn's first call asks on the request, its
answer is the turn's block; a later call asks with the block excluded and `request_carried` (what its own step
brings). Each call is scored on all it carries (the cold start at a session's first call too, as
bench_agent_view.py counts a step needing nothing), under each policy for which calls carry the block:

- `kept`: every call of the turn (what the plugin did before `turnBlockFirstCall`);
- `once`: the turn's first call only;
- `later`: every call but the first (the first call of a turn is mostly a look around: `git status`, `ls`);
- `top1`, `top2`: as `kept`, the block cut to its first one or two memories; `later-top2`: both;
- `later-q`: as `later`, but a request ending in a question mark gets its block at the first call too;
- `about`: the first call, and a later call only for the block's memories its step is about (what the previous
  call touched names it, or the tool calls' own words find it at the injection bars);
- `later-about`: `about` without the first call.

Printed: each policy on each scenario, then for each scenario left out the policy best on the others (the mean of
precision, recall and the share of steps needing nothing left blank) and its figures on the one left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

Call = tuple[dict[str, Any], list[str], dict[str, Any] | None, tuple[int, int], list[str]]


def load_run(run: Path, data: Path) -> list[Call]:
    """(request, relevant ids, the previous scripted call, (session, turn), cold-start ids) per traced call, paired
    with the scenario's steps in order (a run still going is read as far as it got)."""
    trace = [json.loads(line) for line in (run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    root = str((run / "project").resolve())
    at = [
        (s, t, i)
        for s, session in enumerate(scenario["sessions"])
        for t, turn in enumerate(session["turns"])
        for i in range(len(turn["steps"]))
    ]
    out = []
    cold: list[str] = []
    calls = iter(at)
    for entry in trace:
        if entry.get("hook") == "system" and isinstance(entry.get("cold"), list):
            cold = entry["cold"]
            continue
        if entry.get("hook") != "messages":
            continue
        where = next(calls, None)
        if where is None:
            break
        s, t, i = where
        steps = scenario["sessions"][s]["turns"][t]["steps"]
        prior = (steps[i - 1].get("tool_calls") or [None])[-1] if i else None
        call = None
        if prior:
            args = {k: str(v).replace("{root}", root) for k, v in prior.get("args", {}).items() if isinstance(v, str)}
            call = {"tool": prior["tool"], "args": args, "error": False}
        if "request" in entry:
            out.append((entry["request"], list(steps[i].get("relevant") or []), call, (s, t), cold))
        cold = []
    return out


POLICIES = ("kept", "once", "later", "later-q", "about", "later-about", "top1", "top2", "later-top2")


def ask(
    store: Any, request: dict[str, Any], call: dict[str, Any] | None, exclude: list[str], carried: bool
) -> list[str]:
    """The ids /retrieve shows for this call (hud_carry.ask, the trace's request asked again of the store)."""
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


def about_step(store: Any, request: dict[str, Any], call: dict[str, Any] | None, block: list[str]) -> set[str]:
    """The block's memories the step is about: its call names what they name, or the tool calls' words find them."""
    from codememory.retrieval.step import step_from_call

    if not block or call is None:
        return set()
    step = step_from_call(**call, root=str(store.root))
    texts = {i: store.get(i, touch=False).text for i in block}
    out = {i for i, text in texts.items() if step.touches(text) or step.in_folder(text)}
    n = request.get("request_phrases", 1)
    tools = request["query_expansion"][n:]
    if tools and not step.routine:
        found = store.retrieve(tools, max_memories=8, max_new=8, touch=False, request_phrases=0)
        out |= {m.id for m in found.memories} & set(block)
    return out


def replay(store: Any, pairs: list[Call], policy: str) -> dict[str, Any]:
    precisions, recalls, nothing, blank, shown_all, hits_all = [], [], 0, 0, 0, 0
    turn: tuple[int, int] | None = None
    block: list[str] = []
    for request, relevant, call, where, cold in pairs:
        exclude = list(request.get("exclude_memory_ids") or [])
        first = where != turn
        if first:
            turn = where
            block = [
                i for i in ask(store, request, call, [i for i in exclude if i not in cold], False) if i not in cold
            ]
            step_ids: list[str] = []
        else:
            step_ids = [] if call is None else list(ask(store, request, call, [*exclude, *block], True))
        if policy == "kept" or (policy == "once" and first) or (policy == "later" and not first):
            shown = block
        elif policy in ("top1", "top2"):  # the block's first memories only, at every call
            shown = block[: int(policy[-1])]
        elif policy == "later-top2":
            shown = block[:2] if not first else []
        elif policy == "later-q":  # as `later`, but a question is shown its block at once (it may be answered there)
            question = request["query_expansion"][0].strip().strip('"').rstrip().endswith("?")
            shown = block if not first or question else []
        elif policy in ("about", "later-about"):
            shown = (block if policy == "about" else []) if first else sorted(about_step(store, request, call, block))
        else:
            shown = []
        carried = list(dict.fromkeys([*cold, *shown, *step_ids]))
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
    parser.add_argument("--policies", default=",".join(POLICIES))
    args = parser.parse_args()
    from codememory import Store

    policies = args.policies.split(",")
    if unknown := [p for p in policies if p not in POLICIES]:
        sys.exit(f"unknown policies: {', '.join(unknown)}")
    table: dict[str, dict[str, dict[str, Any]]] = {}
    names = []
    for spec in args.runs:
        run, data = (Path(p) for p in spec.split(":"))
        store, pairs = Store.open(run / "project"), load_run(run, data)
        names.append(data.name)
        for policy in policies:
            table.setdefault(policy, {})[data.name] = replay(store, pairs, policy)
            print(json.dumps({"scenario": data.name, "policy": policy, **table[policy][data.name]}), flush=True)

    def merit(figures: dict[str, Any]) -> float:
        keys = ("hud_precision", "hud_recall", "nothing_without_hud")
        return statistics.fmean(float(figures[k] or 0.0) for k in keys)

    if len(names) < 2:
        return
    print("left out: the best policy on the others, and its figures on the one left out")
    for out in names:
        best = max(policies, key=lambda p: statistics.fmean(merit(table[p][n]) for n in names if n != out))
        print(f"  {out}: {best} -> {table[best][out]}  (kept: {table['kept'][out] if 'kept' in table else '-'})")


if __name__ == "__main__":
    main()
