"""Why the HUD missed what it missed: per scripted model call of a bench_agent_view.py run, the /retrieve request
the plugin sent (its lead phrase), the memories labelled relevant to the step, and each one's evidence from the run's
own store (word coverage, meaning z-score, likelihood, kept or held back) against the injection bars.

    python benchmarks/bench_agent_view.py --only opencode --hud-wait-ms 3000     # once: the trace
    python benchmarks/research/hud_misses.py [--run DIR] [--data DIR] [--misses]

`--run`: the run's opencode folder (default .work/agent_view/opencode); `--data`: the scenario the run used;
`--misses`: only the calls where a labelled memory was not returned.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent


def pairs(run: Path, data: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    trace = [json.loads(line) for line in (run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    traced = [t for t in trace if t.get("hook") == "messages"]
    calls = [json.loads(line) for line in (run / "requests.jsonl").read_text().splitlines() if line.strip()]
    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    steps = [scenario["sessions"][s]["turns"][t]["steps"][i] for s, t, i in (c["at"] for c in calls if c.get("at"))]
    return [(t.get("request") or {}, s) for t, s in zip(traced, steps, strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=BENCH / ".work" / "agent_view" / "opencode")
    parser.add_argument("--data", type=Path, default=BENCH / "data" / "agent_view")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--whole", action="store_true", help="the request as a whole only, not its parts as well")
    args = parser.parse_args()
    from codememory import Store
    from codememory.retrieval import proactive
    from codememory.retrieval.search import rank_phrases, relevance_bars
    from codememory.store.filters import Filters
    from codememory.text.clauses import request_parts

    proactive.SPLIT_REQUEST = not args.whole
    store = Store.open(args.run / "project")
    bars = relevance_bars(store.semantic.model, inject=True)
    print(f"model {store.semantic.model}; inject bars {bars}")
    texts = {}
    for line in (args.data / "memories.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            m = json.loads(line)
            texts[m["id"]] = m["text"]
    for request, step in pairs(args.run, args.data):
        relevant = list(step.get("relevant") or [])
        phrases = request.get("query_expansion") or []
        if not phrases:
            print(f"\n-- no request sent; relevant {relevant}")
            continue
        result = store.retrieve(phrases, entities=request.get("entities") or [], touch=False)
        shown = [m.id for m in result.memories]
        if args.misses and set(relevant) <= set(shown) and (relevant or not shown):
            continue
        asked = [phrases[0], *(request_parts(phrases[0]) if proactive.SPLIT_REQUEST else [])]
        lead = rank_phrases(store.db, asked, Filters(injectable=True), want=40, semantic=store.semantic)
        wider = [*asked, *phrases[1:]]
        every = rank_phrases(store.db, wider, Filters(injectable=True), want=80, semantic=store.semantic)
        ids = dict(store.db.get_pk_map(relevant + shown))
        print(f"\n-- lead: {phrases[0][:160]!r} (+{len(phrases) - 1} phrases); parts {asked[1:]}")
        print(f"   shown {shown}; relevant {relevant}")
        for mid in dict.fromkeys(relevant + shown):
            pk = ids.get(mid)
            marks = ("R" if mid in relevant else "-") + ("S" if mid in shown else "-")
            parts = []
            for name, ranking in (("lead", lead), ("all", every)):
                kept = {e[1] for e in ranking.order}
                entry = next((e for e in (ranking.ranked or ranking.order) if e[1] == pk), None)
                if entry is None:
                    parts.append(f"{name}: not ranked")
                    continue
                x = entry[3]
                mean = x.get("meaning")
                parts.append(
                    f"{name}: cov {x.get('coverage', 0):.2f} z {mean if mean is None else round(mean, 2)} "
                    f"p {x.get('likelihood', 0):.2f} {'kept' if pk in kept else 'held'}"
                )
            print(f"   {marks} {mid} | {' | '.join(parts)} | {texts.get(mid, '')[:70]}")
    store.close()


if __name__ == "__main__":
    main()
