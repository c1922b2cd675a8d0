"""Writes links.jsonl (every pair of memories of one project, related when they share a subject) from
link_topics.json."""

import json
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
data = json.loads((HERE / "link_topics.json").read_text(encoding="utf-8"))
with (HERE / "links.jsonl").open("w", encoding="utf-8") as out:
    for project in data["projects"]:
        for (a, ta), (b, tb) in combinations(project["memories"], 2):
            shared = sorted(set(ta) & set(tb))
            why = f"both about {', '.join(shared)}" if shared else f"{'/'.join(ta)} vs {'/'.join(tb)}"
            row = {"a": a, "b": b, "related": bool(shared), "why": why, "project": project["project"]}
            out.write(json.dumps(row) + "\n")
