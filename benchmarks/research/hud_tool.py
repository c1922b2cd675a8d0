"""What the agent would see if memories came with the result of the tool call that names them: the labels alone.

    python benchmarks/research/hud_tool.py [--data DIR ...]     # default: the seven released agent-view scenarios

No run and no store. A memory is attached to a tool call's result when the call names it exactly (retrieval/step.py
Step.touches: a file path or file name the call reads, edits or runs, or a command's first words in the memory's
code span; `+folder` also takes Step.in_folder). A result is seen from the next step (the next model call) on,
never at the step whose call it answers. How long it is carried (`carry`):

- `session`: once per session per memory, kept to the session's end (a tool's result stays in the conversation);
- `turn`: once per turn per memory, kept to the turn's end;
- `next`: at the next call only (what the OpenCode plugin's later-call HUD already does with the newest tool call).

Each step is scored as bench_agent_view.py scores a call (precision of what it carries, recall of its labels, the
share of steps needing nothing that carry nothing), with the turn's block beside the attachments:

- `none`: no turn block;
- `oracle-first`: the turn's block, exactly what the turn's steps need, at the turn's first call only;
- `oracle-kept`: that block at every call of the turn (hud_bound.py's `kept`, a request decision that never errs).

The oracle arms are bounds (labels, not a retrieval); `none` is what the exact rule itself would do. The settings
(match: `off` for no attachment, `file`, `file+command`, `+folder`; carry) are chosen with each scenario left out:
the best mean of precision, recall and no-need blank on the other six, scored on the seventh. Also printed: each
needed (step, memory) pair by what names it first (an earlier call, the step's own call only, no call up to it):
only the first kind can come with a result in time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from itertools import product
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
DATA = Path(__file__).resolve().parents[1] / "data"
SCENARIOS = ["agent_view", *(f"agent_view_judge{n}" for n in ("", 2, 3, 4, 5, 6))]
MATCHES = ("off", "file", "file+command", "+folder")  # off: no attachment (the block alone)
CARRIES = ("session", "turn", "next")
BLOCKS = ("none", "oracle-first", "oracle-kept")


def named(call: dict[str, Any], texts: dict[str, str], match: str) -> set[str]:
    """The memories one tool call names under the match rule."""
    from codememory.retrieval.step import step_from_call

    if match == "off":
        return set()
    args = {k: str(v).replace("{root}/", "") for k, v in call.get("args", {}).items()}
    step = step_from_call(call["tool"], args)
    out = set()
    for mem, text in texts.items():
        why = step.touches(text)
        exact = bool(why) and (match != "file" or str(why).startswith("file"))
        if exact or (match == "+folder" and step.in_folder(text)):
            out.add(mem)
    return out


def score(data: Path, match: str, carry: str, block: str) -> dict[str, Any]:
    texts = {m["id"]: m["text"] for m in map(json.loads, (data / "memories.jsonl").read_text().splitlines())}
    scenario = json.loads((data / "steps.json").read_text())
    precisions: list[float] = []
    recalls: list[float] = []
    nothing = blank = attached = attached_used = 0
    for session in scenario["sessions"]:
        given: set[str] = set()  # attached once per session
        for turn in session["turns"]:
            if carry == "turn":
                given = set()
            labels = [set(s.get("relevant") or []) for s in turn["steps"]]
            oracle = set().union(*labels)
            pending: set[str] = set()  # attached to the previous step's results, seen from this step
            for i, (step, wanted) in enumerate(zip(turn["steps"], labels, strict=True)):
                if carry == "next":
                    carried = pending
                else:
                    given |= pending
                    carried = given
                shown = set(carried)
                if block == "oracle-kept" or (block == "oracle-first" and i == 0):
                    shown |= oracle
                if shown:
                    precisions.append(len(shown & wanted) / len(shown))
                if wanted:
                    recalls.append(len(shown & wanted) / len(wanted))
                else:
                    nothing += 1
                    blank += not shown
                fresh: set[str] = set()
                for call in step.get("tool_calls") or []:
                    fresh |= named(call, texts, match)
                fresh -= given if carry != "next" else set()
                later = set().union(*labels[i + 1 :]) if i + 1 < len(labels) else set()
                attached += len(fresh)
                attached_used += len(fresh & later)
                pending = fresh
    return {
        "precision": round(statistics.fmean(precisions), 3) if precisions else 0.0,
        "recall": round(statistics.fmean(recalls), 3) if recalls else 0.0,
        "blank": round(blank / nothing, 3) if nothing else 0.0,
        "attached": f"{attached_used}/{attached}",
    }


def reach(data: Path, match: str) -> dict[str, int]:
    """Each (step, memory it needs): named by an earlier call of the session (a result could have brought it), by
    the step's own call only (it would come one call late), or by no call up to it."""
    texts = {m["id"]: m["text"] for m in map(json.loads, (data / "memories.jsonl").read_text().splitlines())}
    scenario = json.loads((data / "steps.json").read_text())
    out = {"earlier call": 0, "own call only": 0, "no call": 0}
    for session in scenario["sessions"]:
        earlier: set[str] = set()
        for turn in session["turns"]:
            for step in turn["steps"]:
                own: set[str] = set()
                for call in step.get("tool_calls") or []:
                    own |= named(call, texts, match)
                for mem in step.get("relevant") or []:
                    out["earlier call" if mem in earlier else "own call only" if mem in own else "no call"] += 1
                earlier |= own
    return out


def mean3(f: dict[str, Any]) -> float:
    return (f["precision"] + f["recall"] + f["blank"]) / 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="*", type=Path, default=[DATA / s for s in SCENARIOS])
    args = parser.parse_args()
    table = {(d.name, m, c, b): score(d, m, c, b) for d in args.data for m, c, b in product(MATCHES, CARRIES, BLOCKS)}
    for key, figures in table.items():
        print(json.dumps({"scenario": key[0], "match": key[1], "carry": key[2], "block": key[3], **figures}))
    for d in args.data:
        print(json.dumps({"scenario": d.name, "needed, named by (file+command)": reach(d, "file+command")}))
    names = [d.name for d in args.data]
    for block in BLOCKS:  # the rule's settings chosen with each scenario left out, per block arm
        for out in names:
            rest = [n for n in names if n != out]
            best = max(
                product(MATCHES, CARRIES),
                key=lambda mc: statistics.fmean(mean3(table[(n, *mc, block)]) for n in rest),
            )
            f = table[(out, *best, block)]
            print(json.dumps({"left_out": out, "block": block, "chosen": "/".join(best), **f}))
    for out in names:  # any arm, the block's included, chosen on the other six
        rest = [n for n in names if n != out]
        arm = max(
            product(MATCHES, CARRIES, BLOCKS), key=lambda k: statistics.fmean(mean3(table[(n, *k)]) for n in rest)
        )
        print(json.dumps({"left_out": out, "any_arm": "/".join(arm), **table[(out, *arm)]}))


if __name__ == "__main__":
    main()
