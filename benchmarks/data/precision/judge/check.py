"""Validate the judge split (and, with --fmt, rewrite project files one record per line).

python3 check.py          # validate, print counts
python3 check.py --fmt    # also normalise the layout of <project>.json
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
CATS = {"decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note"}
KINDS = {"question", "keyword", "absent"}


def fmt(d):
    out = ["{"]
    for k in ("project", "description"):
        out.append(f" {json.dumps(k)}: {json.dumps(d[k], ensure_ascii=False)},")
    for name in ("memories", "queries"):
        rows = [json.dumps(r, ensure_ascii=False) for r in d[name]]
        out.append(f' "{name}": [')
        out.append(",\n".join("  " + r for r in rows))
        out.append(" ]," if name == "memories" else " ]")
    out.append("}")
    return "\n".join(out) + "\n"


def check_project(path, rewrite):
    d = json.loads(path.read_text())
    errs = []
    keys = [m["key"] for m in d["memories"]]
    if len(set(keys)) != len(keys):
        errs.append("duplicate keys")
    texts = [m["text"] for m in d["memories"]]
    if len(set(texts)) != len(texts):
        errs.append("duplicate texts")
    for m in d["memories"]:
        if set(m) != {"key", "text", "category", "tags", "importance"}:
            errs.append(f"{m['key']}: fields {sorted(m)}")
        if m["category"] not in CATS:
            errs.append(f"{m['key']}: category {m['category']}")
        if not 40 <= len(m["text"]) <= 300:
            errs.append(f"{m['key']}: length {len(m['text'])}")
        if not 0 <= m["importance"] <= 1:
            errs.append(f"{m['key']}: importance")
        if any(t != t.lower() for t in m["tags"]):
            errs.append(f"{m['key']}: tag case")
    ks = set(keys)
    seen = set()
    for q in d["queries"]:
        if q["q"] in seen:
            errs.append(f"duplicate query {q['q']!r}")
        seen.add(q["q"])
        if q["kind"] not in KINDS:
            errs.append(f"{q['q']!r}: kind")
        a, r = q["answers"], q["also_relevant"]
        if q["kind"] == "absent" and (a or r):
            errs.append(f"{q['q']!r}: absent with labels")
        if q["kind"] != "absent" and not 1 <= len(a) <= 2:
            errs.append(f"{q['q']!r}: {len(a)} answers")
        if set(a) & set(r):
            errs.append(f"{q['q']!r}: answer also in also_relevant")
        for k in a + r:
            if k not in ks:
                errs.append(f"{q['q']!r}: unknown key {k}")
    if rewrite:
        path.write_text(fmt(d))
    n_abs = sum(q["kind"] == "absent" for q in d["queries"])
    print(f"{path.name}: {len(keys)} memories, {len(d['queries'])} queries ({n_abs} absent)")
    return d, errs


def main():
    rewrite = "--fmt" in sys.argv
    errs = []
    all_texts = {}
    for p in sorted(HERE.glob("*.json")):
        d, e = check_project(p, rewrite)
        errs += [f"{p.name}: {x}" for x in e]
        for m in d["memories"]:
            all_texts[m["text"]] = d["project"]
    links = HERE / "links.jsonl"
    if links.exists():
        rows = [json.loads(line) for line in links.read_text().splitlines() if line.strip()]
        rel = sum(r["related"] for r in rows)
        for r in rows:
            if set(r) != {"a", "b", "related", "why"}:
                errs.append(f"links: fields {sorted(r)}")
            for t in (r["a"], r["b"]):
                if t not in all_texts:
                    errs.append(f"links: text not in any project: {t[:60]}")
            if all_texts.get(r["a"]) != all_texts.get(r["b"]):
                errs.append(f"links: cross-project pair {r['a'][:40]}")
        pairs = [frozenset((r["a"], r["b"])) for r in rows]
        if len(set(pairs)) != len(pairs):
            errs.append("links: duplicate pair")
        print(f"links.jsonl: {len(rows)} pairs ({rel} related)")
    para = HERE / "paraphrases.jsonl"
    if para.exists():
        rows = [json.loads(line) for line in para.read_text().splitlines() if line.strip()]
        same = sum(r["same"] for r in rows)
        for r in rows:
            if set(r) != {"texts", "same", "why"} or not 2 <= len(r["texts"]) <= 3:
                errs.append(f"paraphrases: bad row {r}")
        print(f"paraphrases.jsonl: {len(rows)} groups ({same} same)")
    for e in errs:
        print("ERROR", e)
    sys.exit(1 if errs else 0)


if __name__ == "__main__":
    main()
