"""Choose how a turn's later calls are decided (retrieval/proactive.py `_follow_turn`), leaving one scenario out.

    python benchmarks/research/hud_turns.py --runs RUN1:DATA1 RUN2:DATA2 RUN3:DATA3

Each RUN is a `bench_agent_view.py --only opencode` run's opencode folder (its plugin trace and store), DATA its
scenario. Every traced /retrieve request is asked again of the run's own store (`hud_replay.score`: the shipped
bars, no pins carried, the cold start not counted) under each choice of: the turn rule on or off (off: the tool
calls' words widen the net at every call, as before), the memories a later call may show (LATER_MAX), and the
likelihood the request's words must give a memory about a quiet turn's step (QUIET_STEP_LIKELIHOOD), and the one
a request's memory needs to be shown again at a later call (LATER_REQUEST_LIKELIHOOD; 1.01: never). Printed: every
choice on every scenario, then for each scenario left out the choice that scores best on the other two (the mean of
precision, recall and the share of steps needing nothing left without a block) and what it scores on the one left
out: the figure that says whether the rule holds on text it was not fitted on.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

from hud_replay import load, score  # type: ignore[import-not-found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, help="RUN:DATA pairs (opencode folder : scenario folder)")
    parser.add_argument("--later", default="1,2,3")
    parser.add_argument("--quiet", default="0,0.05,0.2")
    parser.add_argument("--again", default="0,0.5,0.6,0.7,0.9,1.01")
    parser.add_argument("--names", default="1", help="NAMES_ARE_NOT_ENOUGH values to try (0 off, 1 on)")
    args = parser.parse_args()
    from codememory import Store
    from codememory.retrieval import proactive

    scenarios: dict[str, tuple[Any, list[Any]]] = {}
    for spec in args.runs:
        run, data = (Path(p) for p in spec.split(":"))
        scenarios[data.name] = (Store.open(run / "project"), load(run, data))
    Choice = tuple[bool, int, float, float, bool]
    choices: list[Choice] = [(False, 4, 0.0, 0.0, False)]  # before the turn rule and the names rule
    later = [int(v) for v in args.later.split(",")]
    quiet = [float(v) for v in args.quiet.split(",")]
    again = [float(v) for v in args.again.split(",")]  # 1.01: a later call shows no request memory again
    names = [v.strip() == "1" for v in args.names.split(",")]
    choices += [(True, n, q, a, on) for n, q, a, on in itertools.product(later, quiet, again, names)]
    table: dict[Choice, dict[str, dict[str, Any]]] = {}
    for follow, n, q, a, on in choices:
        proactive.FOLLOW_TURN, proactive.LATER_MAX, proactive.QUIET_STEP_LIKELIHOOD = follow, n, q
        proactive.LATER_REQUEST_LIKELIHOOD, proactive.NAMES_ARE_NOT_ENOUGH = a, on
        row = {name: score(store, pairs) for name, (store, pairs) in scenarios.items()}
        table[(follow, n, q, a, on)] = row
        print(json.dumps({"follow": follow, "later": n, "quiet": q, "again": a, "names": on, **row}), flush=True)

    def merit(figures: dict[str, Any]) -> float:
        keys = ("hud_precision", "hud_recall", "nothing_without_hud")
        return statistics.fmean(float(figures[k] or 0.0) for k in keys)

    if len(scenarios) < 2:
        return  # nothing to leave out
    print("left out: the best choice on the others, and its figures on the one left out")
    for out in scenarios:
        fit = [n for n in scenarios if n != out]
        best = max(choices[1:], key=lambda c: statistics.fmean(merit(table[c][n]) for n in fit))
        print(f"  {out}: later={best[1]} quiet={best[2]} again={best[3]} names={best[4]} -> {table[best][out]}")
        print(f"  {out}: before (follow off, names off) -> {table[choices[0]][out]}")


if __name__ == "__main__":
    main()
