#!/usr/bin/env python3
"""Validate the precision/dev split and (optionally) print a label review aid.

    python3 check.py                 # validate every file, print counts
    python3 check.py --review FILE   # for each query of one project, show the
                                     # labelled memories and the unlabelled ones
                                     # sharing the most words with the query, so
                                     # a human can re-check the labels by eye

Standard library only. The review overlap is a crude word count written for
proof-reading the labels; it is not a model of any search engine.
"""

import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORIES = {"decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note"}
KINDS = {"question", "keyword", "absent"}
STOP = set(
    """a an the of to in on for and or is are was were be been it its this that
with as at by from we our you your i do does did how what which who why when where
should can could would not no don't dont use used using there any about into than
then so if but all get got has have had my me us they them just only one new
""".split()
)

errors = []


def err(msg):
    errors.append(msg)


def check_project(path):
    with open(path) as f:
        data = json.load(f)
    name = os.path.basename(path)
    for field in ("project", "description", "memories", "queries"):
        if field not in data:
            err(f"{name}: missing {field}")
    keys = set()
    texts = set()
    cats = Counter()
    for m in data["memories"]:
        k = m.get("key")
        if k in keys:
            err(f"{name}: duplicate key {k}")
        keys.add(k)
        t = m.get("text", "")
        if t in texts:
            err(f"{name}: duplicate text {k}")
        texts.add(t)
        if not 40 <= len(t) <= 300:
            err(f"{name}: {k} text length {len(t)}")
        if m.get("category") not in CATEGORIES:
            err(f"{name}: {k} bad category {m.get('category')}")
        cats[m.get("category")] += 1
        tags = m.get("tags", [])
        if not isinstance(tags, list) or any(not isinstance(x, str) or x != x.lower() for x in tags):
            err(f"{name}: {k} bad tags {tags}")
        imp = m.get("importance", 0.5)
        if not (isinstance(imp, (int, float)) and 0 <= imp <= 1):
            err(f"{name}: {k} bad importance {imp}")
        extra = set(m) - {"key", "text", "category", "tags", "importance"}
        if extra:
            err(f"{name}: {k} extra fields {extra}")
    kinds = Counter()
    seen_q = set()
    for i, q in enumerate(data["queries"]):
        label = f"{name}: query {i} {q.get('q')!r}"
        if q.get("q") in seen_q:
            err(f"{label} duplicated")
        seen_q.add(q.get("q"))
        kind = q.get("kind")
        if kind not in KINDS:
            err(f"{label} bad kind")
        kinds[kind] += 1
        ans = q.get("answers", [])
        also = q.get("also_relevant", [])
        for k in ans + also:
            if k not in keys:
                err(f"{label} unknown key {k}")
        if set(ans) & set(also):
            err(f"{label} key both answer and also_relevant")
        if kind == "absent":
            if ans or also:
                err(f"{label} absent query has labels")
        elif not 1 <= len(ans) <= 2:
            err(f"{label} has {len(ans)} answers")
        extra = set(q) - {"q", "kind", "answers", "also_relevant", "note"}
        if extra:
            err(f"{label} extra fields {extra}")
    return data, len(data["memories"]), kinds, cats


def check_jsonl(path, fields, validate):
    n = 0
    counts = Counter()
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                err(f"{os.path.basename(path)}:{ln} {e}")
                continue
            if set(row) != fields:
                err(f"{os.path.basename(path)}:{ln} fields {sorted(row)}")
                continue
            validate(row, f"{os.path.basename(path)}:{ln}", counts)
            n += 1
    return n, counts


def v_link(row, where, counts):
    if not isinstance(row["related"], bool):
        err(f"{where} related not bool")
    for s in ("a", "b"):
        if not 20 <= len(row[s]) <= 300:
            err(f"{where} {s} length {len(row[s])}")
    if row["a"] == row["b"]:
        err(f"{where} a == b")
    counts[row["related"]] += 1


def v_para(row, where, counts):
    if not isinstance(row["same"], bool):
        err(f"{where} same not bool")
    if not 2 <= len(row["texts"]) <= 3:
        err(f"{where} {len(row['texts'])} texts")
    if len(set(row["texts"])) != len(row["texts"]):
        err(f"{where} repeated text")
    for t in row["texts"]:
        if not 20 <= len(t) <= 300:
            err(f"{where} text length {len(t)}")
    counts[row["same"]] += 1


def words(s):
    return {w for w in re.findall(r"[a-z0-9_./-]+", s.lower()) if w not in STOP and len(w) > 1}


def review(path):
    with open(path) as f:
        data = json.load(f)
    mem = {m["key"]: m["text"] for m in data["memories"]}
    for q in data["queries"]:
        qw = words(q["q"])
        print(f"\n== [{q['kind']}] {q['q']}")
        for k in q["answers"]:
            print(f"   A {k}: {mem[k]}")
        for k in q.get("also_relevant", []):
            print(f"   r {k}: {mem[k]}")
        labelled = set(q["answers"]) | set(q.get("also_relevant", []))
        scored = sorted(((len(qw & words(t)), k) for k, t in mem.items() if k not in labelled), reverse=True)
        for s, k in scored[:4]:
            if s:
                print(f"   ? {k} ({s}): {mem[k]}")


def main(here=HERE):
    """Validate the split in `here` (this folder, or another split's: every split's check.py runs this one)."""
    if len(sys.argv) == 3 and sys.argv[1] == "--review":
        review(sys.argv[2])
        return
    total_q = Counter()
    for fn in sorted(os.listdir(here)):
        if fn.endswith(".json"):
            _, nm, kinds, cats = check_project(os.path.join(here, fn))
            total_q.update(kinds)
            print(f"{fn}: {nm} memories, queries {dict(kinds)} (total {sum(kinds.values())}); categories {dict(cats)}")
    print(f"all queries: {dict(total_q)}, absent share {total_q['absent'] / max(1, sum(total_q.values())):.0%}")
    lp = os.path.join(here, "links.jsonl")
    if os.path.exists(lp):
        n, c = check_jsonl(lp, {"a", "b", "related", "why"}, v_link)
        print(f"links.jsonl: {n} pairs, related {c[True]}, unrelated {c[False]}")
    pp = os.path.join(here, "paraphrases.jsonl")
    if os.path.exists(pp):
        n, c = check_jsonl(pp, {"texts", "same", "why"}, v_para)
        print(f"paraphrases.jsonl: {n} groups, same {c[True]}, different {c[False]}")
    for e in errors:
        print("ERROR", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
