"""The cost of asking for each part of a request (retrieval/proactive.py, text/clauses.py): the daemon's /retrieve
code path (`Store.retrieve`) on the /retrieve requests an OpenCode run sent, timed with the parts and with the
whole request only, alternating request by request in one process.

    python benchmarks/bench_agent_view.py --only opencode --hud-wait-ms 3000    # once: the trace and its store
    python benchmarks/bench_request_parts.py [--run DIR] [--rounds 3]

Two ways per request: "new prompt" empties the query-vector cache first (the first call of a turn: every phrase is
embedded), "as run" keeps it (the later calls of a turn repeat the request's phrases). Prints the medians and
their ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=HERE / ".work" / "agent_view" / "opencode")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from codememory import Store
    from codememory.embedding.query_cache import QUERY_VECTORS
    from codememory.retrieval import proactive

    trace = [json.loads(line) for line in (args.run / "plugin-trace.jsonl").read_text().splitlines() if line.strip()]
    requests = [t["request"] for t in trace if t.get("hook") == "messages" and t.get("request")]
    store = Store.open(args.run / "project")
    store.retrieve(["warm up the model"], touch=False)
    times: dict[tuple[str, bool], list[float]] = {(way, split): [] for way in ("new", "as run") for split in (0, 1)}
    for round_no in range(args.rounds):
        for i, req in enumerate(requests):
            order = (False, True) if (i + round_no) % 2 == 0 else (True, False)
            for way in ("new", "as run"):
                for split in order:
                    proactive.SPLIT_REQUEST = split
                    if way == "new":
                        QUERY_VECTORS.clear()
                    started = time.perf_counter()
                    store.retrieve(req["query_expansion"], entities=req.get("entities") or [], touch=False)
                    times[(way, split)].append((time.perf_counter() - started) * 1000)
    store.close()
    print(f"{len(requests)} /retrieve requests × {args.rounds} rounds")
    for way in ("new", "as run"):
        whole, parts = (statistics.median(times[(way, s)]) for s in (False, True))
        print(f"{way:7s}: whole {whole:7.1f} ms, parts {parts:7.1f} ms, ratio {parts / whole:.2f}")


if __name__ == "__main__":
    main()
