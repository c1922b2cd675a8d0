"""Where labelled items are lost, per stage, and an in-process score of the rules (issue 25, session 10).

    .venv/bin/python benchmarks/extraction_losses.py --set blind_a blind_b heldout2      # per-set table
    .venv/bin/python benchmarks/extraction_losses.py --set blind_a --losses fact convention  # and the stages

The rules (`heuristic_candidates`) run in this process over each `opencode` item's script (user text, the
assistant's texts, the tools' outputs), with no CLI, store or recording: a few seconds for every released set, so
a change can be judged with each set left out in turn. On the OpenCode path it scores as `bench_extraction.py` does
(checked on blind_a: the same table); it leaves out the hand-written Claude Code / Codex transcripts and the agent's
todo tool (so todo recall is lower), so figures to report still come from `bench_extraction.py`.

`--losses` sorts every required label of those categories into one stage:
- ok / wrong-category:<stored as>: matched; the first memory matching it has the label's category or not;
- candidate-dropped: a statement candidate matched it, the span's filters or merges took it out;
- sentence-<user|assistant>-unclassified: one sentence of that speaker holds it, and no rule read it;
- spread-over-sentences: only a whole message holds it; only-in-tool-io: only a tool's input or output;
- paraphrase-only: no text holds it as the label's match words (the label paraphrases).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import extraction_corpus as corpus
import extraction_score as scoring
from bench_extraction import score_items
from codememory.capture.turns import ToolCall, Turn
from codememory.extract.heuristic import heuristic_candidates
from codememory.extract.rules import classify
from codememory.extract.statements import SENTENCE_SPLIT_RE, prose_units, statement_candidates, user_sentences

CATEGORIES = ("fact", "convention", "preference", "decision", "rejected_alternative", "gotcha", "todo")


def _call(tool: dict[str, Any], files: dict[str, str], n: int) -> ToolCall | None:
    if "bash" in tool:
        code = int(tool.get("exit", 0))
        status = "error" if code else "completed"
        return ToolCall("bash", f"c{n}", status, {"command": tool["bash"]}, tool.get("out", ""), exit_code=code)
    if "read" in tool:
        return ToolCall("read", f"c{n}", "completed", {"filePath": tool["read"]}, files.get(tool["read"], ""))
    if "write" in tool:
        return ToolCall("write", f"c{n}", "completed", {"filePath": tool["write"], "content": tool["content"]})
    if "edit" in tool:
        args = {"filePath": tool["edit"], "oldString": tool["old"], "newString": tool["new"]}
        return ToolCall("edit", f"c{n}", "completed", args)
    return None


def sessions_of(item: dict[str, Any]) -> list[list[Turn]]:
    """An `opencode` item's sessions as the turns capture would read from them."""
    out = []
    for si, session in enumerate(item.get("sessions", [])):
        turns = []
        for ti, turn in enumerate(session["turns"]):
            texts = [st["text"] for st in turn["steps"] if st.get("text")]
            tools = [t for st in turn["steps"] for t in st.get("tools", [])]
            calls = [c for n, t in enumerate(tools) if (c := _call(t, item.get("files", {}), n)) is not None]
            at = "2026-01-01T00:00:00Z"
            turns.append(Turn("opencode", f"s{si}", f"t{ti}", ti + 1, at, at, turn["user"], tuple(texts), tuple(calls)))
        out.append(turns)
    return out


def memories_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"text": c.text, "category": c.category, "source": f"said_by:{c.said_by}" if c.said_by else ""}
        for turns in sessions_of(item)
        for c in heuristic_candidates(turns)
    ]


def stage(label: scoring.Label, sessions: list[list[Turn]], statements: list[str]) -> str:
    """Where a missed label was lost (see the module docstring)."""
    if any(scoring.matches(label.match, text) for text in statements):
        return "candidate-dropped"
    spread = False
    for turns in sessions:
        for t in turns:
            for role, raw in [("user", t.user_text)] + [("assistant", a) for a in t.assistant_texts]:
                split = user_sentences if role == "user" else SENTENCE_SPLIT_RE.split
                for s in (s for unit in prose_units(raw) for s in split(unit) if s.strip()):
                    if scoring.matches(label.match, s):
                        found = classify(s, role=role)
                        return f"sentence-{role}-" + (f"read-as-{found[0].category}" if found else "unclassified")
                spread = spread or scoring.matches(label.match, raw)
    if spread:
        return "spread-over-sentences"
    calls = [c for turns in sessions for t in turns for c in t.tool_calls]
    if any(scoring.matches(label.match, c.output + " " + " ".join(map(str, c.input.values()))) for c in calls):
        return "only-in-tool-io"
    return "paraphrase-only"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", nargs="+", choices=sorted(corpus.SETS), default=["main"])
    parser.add_argument("--losses", nargs="*", metavar="CATEGORY", help="sort these categories' labels by stage")
    args = parser.parse_args(argv)
    print("| set | recall | precision | must-not | category agreement | " + " | ".join(CATEGORIES) + " |")
    print("|---" * (5 + len(CATEGORIES)) + "|")
    stages: Counter[tuple[str, str]] = Counter()
    for name in args.set:
        items = [i for i in corpus.load_items(None, corpus.SETS[name]) if i["source"] == "opencode"]
        memories = {i["name"]: memories_of(i) for i in items}
        summary = score_items(items, memories)
        o = summary["overall"]
        recalls = [summary["categories"].get(c, {}).get("recall") for c in CATEGORIES]
        cells = " | ".join("–" if r is None else f"{r:.2f}" for r in recalls)
        head = f"| {name} | {o['recall']:.3f} | {o['precision']:.3f} | {o['must_not_hits']} | "
        print(f"{head}{o['category_agreement']:.2f} | {cells} |")
        for item, scored in zip(items, summary["sessions"], strict=True) if args.losses is not None else ():
            wanted = set(args.losses or CATEGORIES)
            missed = {m["id"] for m in scored["missed"]}
            sessions = sessions_of(item)
            statements = [c.text for turns in sessions for c in statement_candidates(turns)]
            first: dict[str, str] = defaultdict(str)
            for m in scored["memories"]:
                for lid in m["labels"]:
                    first[lid] = first[lid] or m["category"]
            for lb in (scoring.Label.from_dict(d) for d in item["labels"]):
                if lb.optional or lb.category not in wanted:
                    continue
                if lb.id in missed:
                    where = stage(lb, sessions, statements)
                else:
                    where = "ok" if first[lb.id] == lb.category else f"wrong-category:{first[lb.id]}"
                stages[(lb.category, where)] += 1
    if stages:
        print("\n| label category | stage | labels |\n|---|---|---:|")
        for (category, where), n in sorted(stages.items()):
            print(f"| {category} | {where} | {n} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
