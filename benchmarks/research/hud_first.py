"""A turn's first decision (what the request alone calls for), rule by rule, replayed turn by turn.

    python benchmarks/research/hud_first.py --runs RUN1:DATA1 RUN2:DATA2 ... [--turns]

Each RUN is a `bench_agent_view.py --only opencode` run's opencode folder (its plugin trace and store), DATA its
scenario. Every traced request is asked again of the run's own store as `hud_carry.py`'s `kept` way does (the turn's
first call decides on the request and its answer stays for the turn; a later call gets what its step touches), with
each of the first decision's rules switched off in turn, all of them off (before) and all on (shipped):

- `written`: the quoted text a request hands over to be written is no evidence (text/written.py);
- `brackets`: a request's parts are never cut inside brackets (text/clauses.py);
- `lookups`: a request the files answer by looking calls for no memory (text/lookups.py);
- `todos`: a to-do is not shown unasked (retrieval/proactive.py NO_UNASKED_TODOS).

The rules have no parameter fitted on the scenarios; each was read off one or two of them, so its figure on the
others is its left-out figure. `--turns` also prints, for every turn, the request, what the first call shows and
what the turn's steps need, with each memory's likelihood, word coverage, meaning and standout.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from hud_carry import replay, turns_of  # type: ignore[import-not-found]
from hud_replay import load  # type: ignore[import-not-found]

RULES = ("written", "brackets", "lookups", "todos")
KEYS = ("hud_precision", "hud_recall", "nothing_without_hud")


def switch(on: set[str]) -> None:
    from codememory.retrieval import proactive
    from codememory.text import clauses

    proactive.TEXT_TO_WRITE_IS_NO_EVIDENCE = "written" in on
    proactive.LOOKUPS_NEED_NO_MEMORY = "lookups" in on
    proactive.NO_UNASKED_TODOS = "todos" in on
    clauses.CUT_INSIDE_BRACKETS = "brackets" not in on


def show_turns(store: Any, pairs: list[Any], turns: list[Any], data: Path) -> None:
    from codememory.retrieval.search import rank_phrases
    from codememory.store.filters import Filters
    from codememory.text.clauses import request_parts

    scenario = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    texts = {m["id"]: m["text"] for m in map(json.loads, (data / "memories.jsonl").read_text().splitlines()) if m}
    seen: set[tuple[int, int]] = set()
    for (request, _relevant, _call), (where, cold) in zip(pairs, turns, strict=True):
        if where in seen:
            continue
        seen.add(where)
        steps = scenario["sessions"][where[0]]["turns"][where[1]]["steps"]
        needed = sorted({m for s in steps for m in s.get("relevant") or []})
        exclude = [i for i in request.get("exclude_memory_ids") or [] if i not in cold]
        shown = [m.id for m in store.retrieve(request["query_expansion"], exclude=exclude, touch=False).memories]
        asked = [request["query_expansion"][0], *request_parts(request["query_expansion"][0])]
        ranking = rank_phrases(store.db, asked, Filters(injectable=True), want=40, semantic=store.semantic)
        ids = {pk: mid for mid, pk in store.db.get_pk_map(list(texts))}
        explain = {ids.get(pk): e for _, pk, _, e in ranking.ranked or ranking.order}
        print(f"\n[{where[0]}.{where[1]}] {request['query_expansion'][0][:200]}  ({len(steps)} calls)")
        for mid in dict.fromkeys([*shown, *needed]):
            e = explain.get(mid) or {}
            parts = " ".join(
                f"{k}={e[k]:.2f}" if isinstance(e.get(k), float) else f"{k}=-"
                for k in ("likelihood", "coverage", "meaning", "standout")
            )
            tag = ("shown " if mid in shown else "      ") + ("needed" if mid in needed else "      ")
            text = re.sub(r"\s+", " ", texts.get(mid, "?"))[:110]
            print(f"  {tag} {mid} {parts} :: {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="+", required=True, help="RUN:DATA pairs (opencode folder : scenario folder)")
    parser.add_argument("--turns", action="store_true", help="also list every turn's first decision")
    args = parser.parse_args()
    from codememory import Store

    scenarios = {}
    for spec in args.runs:
        run, data = (Path(p) for p in spec.split(":"))
        scenarios[data.name] = (Store.open(run / "project"), load(run, data), turns_of(run), data)
    ways = {"before": set(), **{f"without {r}": set(RULES) - {r} for r in RULES}, "shipped": set(RULES)}
    for name, on in ways.items():
        switch(on)
        row = {n: replay(st, pairs, turns, "kept") for n, (st, pairs, turns, _d) in scenarios.items()}
        print(json.dumps({"way": name, **{n: [r[k] for k in KEYS] for n, r in row.items()}}), flush=True)
    if args.turns:
        switch(set(RULES))
        for n, (st, pairs, turns, data) in scenarios.items():
            print(f"\n=== {n}")
            show_turns(st, pairs, turns, data)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
