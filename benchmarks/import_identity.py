"""What an import stores, written down to compare two trees of the code: a change meant only to make the import
faster must leave every stored row as it was.

    git archive <commit> src | tar -x -C /tmp/base              # the version to compare with
    PYTHONPATH=/tmp/base/src python benchmarks/import_identity.py --out /tmp/import-base.json
    python benchmarks/import_identity.py --out /tmp/import-new.json --compare /tmp/import-base.json

Two files are imported, each into a fresh store through `Store.import_` as `codememory import` runs it (worker
processes, entities read with the import): the 10k set of `bench_import.py` (`synthetic.py`, seed 0), and a varied
one made of every string of `benchmarks/data` (transcripts, precision and extraction sets: secrets, paths, URLs,
unicode, code) with a fixed id and date each (a line without an id would get a random one), some lines repeated and some
invalid (`skip_invalid`). Per store it
keeps every row of the memories (all columns but `origin_at`, the import's clock), their tags, entities (name, type)
and links to them, what is left pending, and the three full-text indexes' rows. `--compare` lists what differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def varied_file(path: Path, limit: int) -> None:
    """Every distinct string of 8+ characters in benchmarks/data (JSON and JSON Lines), one memory each."""
    seen: dict[str, None] = {}
    for file in sorted((HERE / "data").rglob("*")):
        if file.suffix not in (".json", ".jsonl") or not file.is_file():
            continue
        docs: list[Any] = []
        text = file.read_text(encoding="utf-8", errors="replace")
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError:
            docs = [json.loads(line) for line in text.splitlines() if line.strip().startswith(("{", "["))]
        for doc in docs:
            for s in _strings(doc):
                if len(s.strip()) >= 8:
                    seen.setdefault(s[:20_000])
    with open(path, "w", encoding="utf-8") as out:
        for i, s in enumerate(list(seen)[:limit]):
            rec = {"id": f"mem_{hashlib.sha256(s.encode()).hexdigest()[:8]}", "text": s, "tags": ["data", f"t{i % 7}"]}
            rec["created_at"] = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00.000Z"
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            if i % 50 == 0:
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")  # the same id again: skipped
            if i % 97 == 0:
                out.write("{not json\n")


def dump(db_path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db_path)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)") if r[1] != "origin_at"]
    out: dict[str, Any] = {
        "memories": [list(r) for r in conn.execute(f"SELECT {', '.join(columns)} FROM memories ORDER BY pk")],
        "tags": [
            list(r)
            for r in conn.execute(
                "SELECT m.id, t.name FROM memory_tags mt JOIN memories m ON m.pk = mt.memory_pk "
                "JOIN tags t ON t.id = mt.tag_id ORDER BY m.pk, t.name"
            )
        ],
        "entities": [list(r) for r in conn.execute("SELECT id, name, type FROM entities ORDER BY id")],
        "memory_entities": [
            list(r)
            for r in conn.execute(
                "SELECT m.id, e.name FROM memory_entities me JOIN memories m ON m.pk = me.memory_pk "
                "JOIN entities e ON e.id = me.entity_id ORDER BY m.pk, e.id"
            )
        ],
        "pending": [r[0] for r in conn.execute("SELECT memory_pk FROM entities_pending ORDER BY 1")],
        "links": [list(r) for r in conn.execute("SELECT * FROM memory_links ORDER BY 1, 2, 3")],
    }
    for table in ("memories_fts", "memories_words", "memories_trigram"):
        out[table] = [list(r) for r in conn.execute(f"SELECT rowid, text FROM {table} ORDER BY rowid")]
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--varied", type=int, default=30_000, help="at most this many strings of benchmarks/data")
    args = parser.parse_args()
    os.environ["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
    os.environ["CODEMEMORY_DAEMON_PORT"] = "1"
    from codememory import Store

    WORK.mkdir(exist_ok=True)
    files = {"synthetic": WORK / f"import-{args.size}.jsonl", "varied": WORK / f"import-varied-{args.varied}.jsonl"}
    if not files["synthetic"].exists():
        synthetic.write_jsonl(files["synthetic"], args.size, 0)
    if not files["varied"].exists():
        varied_file(files["varied"], args.varied)
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, file in files.items():
            (Path(tmp) / name).mkdir()
            store, _ = Store.init(Path(tmp) / name)
            report = store.import_(str(file), skip_invalid=True)
            db_path = Path(store.db.path)
            store.close()
            result[name] = {"report": [report.added, report.skipped_existing, len(report.invalid)], **dump(db_path)}
    args.out.write_text(json.dumps(result, ensure_ascii=False))
    summary = {n: {k: len(v) for k, v in r.items()} for n, r in result.items()}
    print(json.dumps(summary))
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = 0
        for name, tables in result.items():
            for table, rows in tables.items():
                if before[name][table] != rows:
                    differ += 1
                    old = before[name][table]
                    pairs = enumerate(zip(old, rows, strict=False))
                    first = next((i for i, (a, b) in pairs if a != b), min(len(old), len(rows)))
                    print(f"{name}.{table} differs: {len(old)} rows before, {len(rows)} now; first at {first}")
        print("identical" if not differ else f"{differ} tables differ")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
