"""Use detection scored on an agent-view scenario's own script, with no agent run: each session's turns are built
from steps.json (its tool calls, a read's output being the file as the script's earlier edits left it, the
scripted final answer after the last call) and handed to `capture.usage.observe_turn` in order, against a fresh
store of the scenario's memories (keyword-only) that showed each turn, at its start, the memories the turn's steps
label `relevant` (a HUD that shows exactly what matters, the user's request as its query), or with `--all-shown`
every memory of the scenario (a HUD that shows everything: the hardest case for precision).

A pair is (session, memory shown); it is truly used when a step of the session, in the turn that first showed it
or later, labels it in `uses` (as bench_agent_view.use_detection counts). Unlike research/use_replay.py this needs
no recorded run, so it covers every released scenario, tallyhub included; unlike a run, what is shown does not
depend on retrieval.

    .venv/bin/python benchmarks/research/use_scripted.py [--data benchmarks/data/agent_view_judge4 ...] \\
        [--all-shown] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
SCENARIOS = (
    "agent_view",
    "agent_view_judge",
    "agent_view_judge2",
    "agent_view_judge3",
    "agent_view_judge4",
    "agent_view_judge5",
)

from codememory.capture import exposure_cues, usage  # noqa: E402
from codememory.capture.turns import ToolCall, Turn  # noqa: E402
from codememory.service.project_store import Store  # noqa: E402
from codememory.store.usage import Shown  # noqa: E402


def fresh_store(root: Path, memories: Path) -> Store:
    config = root / "config" / "codememory"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")
    os.environ["XDG_STATE_HOME"] = str(root / "state")
    project = root / "project"
    project.mkdir()
    store, _ = Store.init(project)
    store.import_(memories)
    return store


def score(data: Path, all_shown: bool) -> dict[str, Any]:
    steps = json.loads((data / "steps.json").read_text(encoding="utf-8"))
    files = {
        k: v for k, v in json.loads((data / "project.json").read_text(encoding="utf-8")).items() if isinstance(v, str)
    }
    every = [json.loads(line)["id"] for line in (data / "memories.jsonl").read_text(encoding="utf-8").splitlines()]
    clock = [datetime(2026, 11, 1, tzinfo=UTC)]

    def tick() -> str:
        clock[0] += timedelta(seconds=1)
        return clock[0].isoformat().replace("+00:00", "Z")

    with tempfile.TemporaryDirectory() as tmp:
        store = fresh_store(Path(tmp), data / "memories.jsonl")
        db = store.db
        truth: dict[tuple[str, str], bool] = {}
        for si, session in enumerate(steps["sessions"]):
            sid = f"scripted-{si}"
            for ti, t in enumerate(session["turns"]):
                shown = (
                    every if all_shown else list(dict.fromkeys(m for s in t["steps"] for m in s.get("relevant", [])))
                )
                start = tick()
                if shown:
                    db.record_shown(
                        at=start,
                        source="opencode",
                        session_id=sid,
                        kind="hud",
                        memories=[Shown(m) for m in shown],
                        context=t["user"],
                        cues_of=lambda ids, ctx: exposure_cues.exposure_cues(db, ids, ctx),
                    )
                    for m in shown:
                        truth.setdefault((sid, m), False)
                calls: list[ToolCall] = []
                answer = ""
                for step in t["steps"]:
                    if "answer" in step:
                        answer = step["answer"]
                        continue
                    for c in step["tool_calls"]:
                        args = json.loads(json.dumps(c["args"]).replace("{root}", "/project"))
                        path = str(args.get("filePath", "")).removeprefix("/project/")
                        output = files.get(path, "") if c["tool"] == "read" else ""
                        if c["tool"] == "edit" and path in files:
                            files[path] = files[path].replace(args["oldString"], args["newString"], 1)
                        calls.append(
                            ToolCall(c["tool"], f"c{len(calls)}", "completed", args, output, started_at=tick())
                        )
                    for m in step.get("uses", []):
                        if (sid, m) in truth:
                            truth[(sid, m)] = True
                turn = Turn(
                    "opencode",
                    sid,
                    f"{sid}-{ti}",
                    ti + 1,
                    start,
                    tick(),
                    t["user"],
                    assistant_texts=(answer,) if answer else (),
                    tool_calls=tuple(calls),
                    text_calls=(len(calls),) if answer else (),
                )
                usage.observe_turn(db, turn)
        store.close()
        conn = sqlite3.connect(Path(tmp) / "project" / ".codememory" / "memory.db")
        rows = conn.execute("SELECT session_id, memory_id, used_at, used_by, evidence FROM memory_exposures").fetchall()
        conn.close()
    found = {(s, m): (used_at, by, evidence) for s, m, used_at, by, evidence in rows if used_at}
    right = sum(1 for k, v in truth.items() if v and k in found)
    detected = sum(1 for k in truth if k in found)
    true = sum(truth.values())
    return {
        "pairs": len(truth),
        "true_uses": true,
        "detected": detected,
        "right": right,
        "precision": round(right / detected, 3) if detected else None,
        "recall": round(right / true, 3) if true else None,
        "false_alarms": [(k, found[k]) for k, v in truth.items() if k in found and not v],
        "right_ones": [(k, found[k]) for k, v in truth.items() if k in found and v],
        "misses": [k for k, v in truth.items() if v and k not in found],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="*", default=[DATA / s for s in SCENARIOS])
    parser.add_argument("--all-shown", action="store_true", help="every memory shown at every turn")
    parser.add_argument("--verbose", action="store_true", help="list every false alarm and miss")
    parser.add_argument("--right", action="store_true", help="with --verbose: list the right detections too")
    args = parser.parse_args()
    totals = [0, 0, 0]
    for data in args.data:
        got = score(data, args.all_shown)
        totals = [totals[0] + got["right"], totals[1] + got["detected"], totals[2] + got["true_uses"]]
        keys = ("pairs", "true_uses", "detected", "right", "precision", "recall")
        print(data.name, {k: got[k] for k in keys}, flush=True)
        if args.verbose:
            for (sid, mid), (_, by, evidence) in got["false_alarms"]:
                print(f"  false alarm {sid} {mid} {by}: {evidence}")
            for sid, mid in got["misses"]:
                print(f"  miss {sid} {mid}")
            for (sid, mid), (_, by, evidence) in got["right_ones"] if args.right else ():
                print(f"  right {sid} {mid} {by}: {evidence}")
    right, detected, true = totals
    print(f"all: right {right} of {detected} detected, {true} truly used: precision {right / max(detected, 1):.3f}, "
          f"recall {right / max(true, 1):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
