"""Choose the injection bars (what the HUD puts in front of an agent unasked) offline, on a bench_agent_view.py run.

    python benchmarks/bench_agent_view.py --only opencode          # once: the sessions, the plugin's trace
    python benchmarks/research/hud_replay.py [--answer 0.2,0.3] [--keep 0.1,0.2] [--ratio 0.3,0.5] [--unknown 0,1]
    python benchmarks/research/hud_replay.py --shipped [--run DIR --data DIR] [--own-call]   # the shipped bars,
                                                    # with and without the step's tool call (or the step's own call)

The plugin's trace (benchmarks/.work/agent_view/opencode/plugin-trace.jsonl) holds the /retrieve request of every
model call, and requests.jsonl each call's step with the memories labelled relevant to it. Each request is asked
again of the run's own store (`Store.retrieve`, the daemon's code path, no pins carried over) under each choice of
bars, and scored as the benchmark scores the HUD: precision and recall against the step's labels, and the share of
steps labelled with no memory that get no HUD memory. A proxy for the real run (pins and what the context already
carries differ), good for choosing; the figures reported are the real run's.

    python benchmarks/research/hud_replay.py --run DIR --feedback [--weights 0,1] [--scales 0.5,1,1.5] [--pass 0]

`--feedback` measures what the usefulness record does to the HUD at equal recall: the run's requests (those of one
pass with `--pass`; a `--passes` run's store holds the record its passes left) are asked again with the record's
weight at each of `--weights` (0: the control, ranking that ignores the record; 0.5: as shipped), under the shipped
injection bars scaled by each of `--scales` (answer and keep bars times the scale: one precision-recall curve per
weight), each asked as a new session would ask it (the record of every earlier session counts: the next pass), and
without counting an access. Printed: the curves, then each weight's precision interpolated at the control's recall
levels. `--max-sink` shows what a stronger sink than the shipped one would do.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUN = HERE.parent / ".work" / "agent_view" / "opencode"


Pair = tuple[dict[str, Any], list[str], dict[str, Any] | None]


def load(
    run: Path = RUN, data: Path = HERE.parent / "data" / "agent_view", own: bool = False, only_pass: int | None = None
) -> list[Pair]:
    """(retrieve request, relevant ids, the step's latest tool call or None) per scripted model call, in order. The
    step of a call is the scripted call before it in the same turn (its `{root}` made the run's project): what the
    plugin sends as `step` (a run made before the plugin sent it has no step in its trace). `own`: the call the step
    itself makes instead, which the labels judge the step by and the HUD cannot know (it comes before the call):
    what a hook on the tool call would see. `only_pass`: the calls of that pass of a `--passes` run only (a pass
    starts where the scenario starts again: requests.jsonl carries no pass)."""
    trace = [json.loads(line) for line in (run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    traced = [t for t in trace if t.get("hook") == "messages"]  # one per model call, a request when one was sent
    calls = [json.loads(line) for line in (run / "requests.jsonl").read_text().splitlines() if line.strip()]
    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    at = [c["at"] for c in calls if c.get("at")]
    passes = list(itertools.accumulate(int(i > 0 and where == [0, 0, 0]) for i, where in enumerate(at)))
    steps = [scenario["sessions"][s]["turns"][t]["steps"][i] for s, t, i in at]
    root = str((run / "project").resolve())

    def before(s: int, t: int, i: int) -> dict[str, Any] | None:
        i += 1 if own else 0
        if i == 0:
            return None
        prior = scenario["sessions"][s]["turns"][t]["steps"][i - 1].get("tool_calls") or []
        if not prior:
            return None
        call = prior[-1]
        args = {k: str(v).replace("{root}", root) for k, v in call.get("args", {}).items() if isinstance(v, str)}
        return {"tool": call["tool"], "args": args, "error": False}

    if len(traced) != len(steps):
        sys.exit(f"{len(traced)} traced model calls for {len(steps)} scripted ones: cannot pair them")
    pairs = [
        (
            t["request"],
            list(s.get("relevant") or []),
            before(*where) if own else t["request"].get("step") or before(*where),
        )
        for t, s, where, p in zip(traced, steps, at, passes, strict=True)
        if "request" in t and (only_pass is None or p == only_pass)
    ]
    if only_pass is None and len(pairs) < len(steps):
        print(f"{len(steps) - len(pairs)} calls sent no request (daemon down or skipped): left out", file=sys.stderr)
    return pairs


def score(store: Any, pairs: list[Pair], with_step: bool = True) -> dict[str, float | None]:
    from codememory.retrieval.step import step_from_call

    precisions, recalls, empty_ok, nothing, hits_all, shown_all = [], [], 0, 0, 0, 0
    for request, relevant, call in pairs:
        step = step_from_call(**call, root=str(store.root)) if call and with_step else None
        result = store.retrieve(
            request["query_expansion"],
            entities=request.get("entities") or [],
            exclude=request.get("exclude_memory_ids") or [],
            max_memories=request.get("max_memories", 4),
            max_new=request.get("max_new", 3),
            token_budget=request.get("token_budget", 1500),
            touch=False,
            step=step,
            # how many leading phrases are the request (a plugin that sends it; older traces: the first phrase)
            **({"request_phrases": request["request_phrases"]} if "request_phrases" in request else {}),
        )
        shown = [m.id for m in result.memories]
        hits = len(set(shown) & set(relevant))
        hits_all, shown_all = hits_all + hits, shown_all + len(shown)
        if shown:
            precisions.append(hits / len(shown))
        if relevant:
            recalls.append(hits / len(relevant))
        else:
            nothing += 1
            empty_ok += not shown
    return {
        "hud_precision": round(statistics.fmean(precisions), 3) if precisions else None,
        "hud_precision_micro": round(hits_all / shown_all, 3) if shown_all else None,
        "hud_recall": round(statistics.fmean(recalls), 3) if recalls else None,
        "nothing_without_hud": round(empty_ok / nothing, 3) if nothing else None,
        "calls_with_hud": len(precisions),
        "shown": shown_all,
    }


def at_recall(curve: list[dict[str, Any]], recall: float) -> float | None:
    """A curve's interpolated precision at `recall`: the best precision of its points with at least that recall
    (None when none reaches it)."""
    reached = [float(c["hud_precision"]) for c in curve if c["hud_precision"] is not None and c["hud_recall"] >= recall]
    return max(reached) if reached else None


def feedback(store: Any, pairs: list[Pair], args: argparse.Namespace) -> None:
    """The precision-recall curves of the HUD with the usefulness record at each weight (see the docstring)."""
    from codememory.retrieval import evidence, usefulness
    from codememory.retrieval.decision import Bars

    if args.max_sink is not None:
        usefulness.MAX_SINK = args.max_sink  # what a stronger sink would do (shipped: see retrieval/usefulness.py)
    key = calibration_key(store)
    shipped = evidence.CALIBRATIONS[key]
    curves: dict[float, list[dict[str, Any]]] = {}
    for weight in (float(w) for w in args.weights.split(",")):
        store.db.usage_weight = weight
        for scale in (float(v) for v in args.scales.split(",")):
            bars = shipped.inject
            evidence.CALIBRATIONS[key] = replace(
                shipped, inject=Bars(bars.answer * scale, bars.keep * scale, bars.ratio, bars.unknown)
            )
            row = {"weight": weight, "scale": scale, **score(store, pairs)}
            curves.setdefault(weight, []).append(row)
            print(json.dumps(row), flush=True)
    evidence.CALIBRATIONS[key] = shipped
    control = curves.get(0.0) or next(iter(curves.values()))
    print("precision at the control's recall levels:")
    for point in control:
        recall = point["hud_recall"]
        line = {w: at_recall(c, recall) for w, c in curves.items()}
        shown = ", ".join(f"weight {w}: {p if p is None else round(p, 3)}" for w, p in line.items())
        print(f"  recall {recall}: {shown}")


def calibration_key(store: Any) -> str:
    from codememory.retrieval import evidence

    model = store.semantic.model or ""
    key = next((k for k in evidence.CALIBRATIONS if model.lower().startswith(k)), None)
    if key is None:
        sys.exit(f"no calibration for {model!r}")
    return key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in (("answer", "0.2,0.3,0.4"), ("keep", "0.1,0.2,0.3"), ("ratio", "0.3,0.5"), ("unknown", "0")):
        parser.add_argument(f"--{name}", default=default)
    parser.add_argument("--run", type=Path, default=RUN, help="the run's opencode folder (default: %(default)s)")
    parser.add_argument("--data", type=Path, default=HERE.parent / "data" / "agent_view", help="the run's scenario")
    parser.add_argument("--whole", action="store_true", help="ask with the whole request only, not its parts too")
    parser.add_argument("--shipped", action="store_true", help="the shipped bars only, with and without the step")
    parser.add_argument("--own-call", action="store_true", help="the step's own call as its step (see load)")
    parser.add_argument("--feedback", action="store_true", help="curves with the usefulness record at --weights")
    parser.add_argument("--weights", default="0,1", help="[usefulness] weights for --feedback (0: the control)")
    parser.add_argument("--scales", default="0.5,0.75,1,1.25,1.5,2", help="the inject bars scaled, for --feedback")
    parser.add_argument("--max-sink", type=float, help="--feedback with the factor's floor at 1 - this (shipped 0.35)")
    parser.add_argument("--pass", dest="only_pass", type=int, help="only the calls of this pass of a --passes run")
    args = parser.parse_args()
    from codememory import Store
    from codememory.retrieval import evidence, proactive
    from codememory.retrieval.decision import Bars

    proactive.SPLIT_REQUEST = not args.whole
    pairs = load(args.run, args.data, own=args.own_call, only_pass=args.only_pass)
    store = Store.open(args.run / "project")
    key = calibration_key(store)
    shipped = evidence.CALIBRATIONS[key]
    print(f"{len(pairs)} calls, model {store.semantic.model}, shipped inject bars {shipped.inject}")
    if args.feedback:
        feedback(store, pairs, args)
        return
    if args.shipped:
        print("request only    ", score(store, pairs, with_step=False))
        print("with the step   ", score(store, pairs))
        return
    grid = [[float(v) for v in getattr(args, n).split(",")] for n in ("answer", "keep", "ratio", "unknown")]
    for a, k, r, u in itertools.product(*grid):
        if k > a:
            continue
        evidence.CALIBRATIONS[key] = replace(shipped, inject=Bars(a, k, r, u))
        print(f"answer={a} keep={k} ratio={r} unknown={u}", score(store, pairs), flush=True)


if __name__ == "__main__":
    main()
