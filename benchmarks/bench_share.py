"""Benchmark of team sharing (service/sharing.py): what the text form costs the store.

1. Opening a store (`Store.open` + close, in one process, after a warm-up open) with sharing on and nothing changed
   in `.codememory/memories/`, against the same store with sharing off and no text form: the price every hook and
   CLI call pays (a stat of each shard folder and one read of the recorded stats).
2. Following a pull that changed 100 memory files of the store: each file rewritten as git does (a new file renamed
   over the old one), then the first `Store.open` after it (which applies them), and `Store.sync()` (a full walk of
   every shard, as `codememory sync` does) with nothing left to apply.

Stores of `--size` synthetic memories (benchmarks/synthetic.py, seeded), no embedding model (vectors are the
daemon's and `sync`'s job, measured elsewhere). Prints a markdown table, times in milliseconds (median of --runs).

    .venv/bin/python benchmarks/bench_share.py [--size 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import synthetic


def _isolated() -> Path:
    home = Path(tempfile.mkdtemp(prefix="bench-share-"))
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    os.environ["XDG_STATE_HOME"] = str(home / "state")
    (home / "config" / "codememory").mkdir(parents=True)
    (home / "config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    return home


def _store(home: Path, name: str, size: int, share: bool) -> Path:
    from codememory import Store
    from codememory.core.sharing_state import set_sharing

    root = home / name
    root.mkdir()
    data = home / f"{name}.jsonl"
    synthetic.write_jsonl(data, size, seed=7)
    store, _ = Store.init(root)
    with store:
        store.import_(str(data))
    if share:
        set_sharing(root, True)
        with Store.open(root) as store:
            store.sync()
    return root


def _open_ms(roots: list[Path], runs: int) -> list[float]:
    """Median open + close per store, the stores taking turns (so drift on a shared machine hits both)."""
    from codememory import Store

    for root in roots:
        Store.open(root).close()
    times: list[list[float]] = [[] for _ in roots]
    for _ in range(runs):
        for i, root in enumerate(roots):
            t = time.perf_counter()
            Store.open(root).close()
            times[i].append((time.perf_counter() - t) * 1000)
    return [statistics.median(t) for t in times]


def _settle(root: Path) -> None:
    """Age the shard folders past the racy window, as minutes between two hooks would."""
    old = time.time() - 60
    for shard in (root / ".codememory" / "memories").iterdir():
        os.utime(shard, (old, old))
    from codememory import Store

    Store.open(root).close()  # records the settled stats


def _pull(root: Path, count: int) -> None:
    """Change `count` memory files the way git checks a change out: a new file renamed over the old one."""
    files = sorted((root / ".codememory" / "memories").glob("*/mem_*.json"))
    files = files[:: max(1, len(files) // count)][:count]
    for i, path in enumerate(files):
        obj = json.loads(path.read_text())
        obj["text"] += f" (edited by a teammate, {i})"
        obj["updated_at"] = "2026-11-24T10:00:00.000Z"
        tmp = path.with_name(path.name + ".new")
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--changed", type=int, default=100)
    args = parser.parse_args()
    home = _isolated()
    from codememory import Store

    t = time.perf_counter()
    off = _store(home, "off", args.size, share=False)
    on = _store(home, "on", args.size, share=True)
    setup = time.perf_counter() - t
    _settle(on)
    open_off, open_on = _open_ms([off, on], args.runs)

    follows, syncs = [], []
    for _ in range(3):
        _pull(on, args.changed)
        t = time.perf_counter()
        with Store.open(on) as store:
            follows.append((time.perf_counter() - t) * 1000)
            applied = store.followed
            t = time.perf_counter()
            report = store.sharing.sync()
            syncs.append((time.perf_counter() - t) * 1000)
        assert applied is not None and len(applied.updated) == args.changed, applied
        assert not report.changed, report
        _settle(on)
    files = len(list((on / ".codememory" / "memories").glob("*/mem_*.json")))
    print(f"{args.size:,} memories ({files:,} memory files), {args.runs} opens, setup {setup:.0f} s\n")
    print("| measure | ms | ratio |")
    print("| --- | ---: | ---: |")
    print(f"| open, sharing off (no text form) | {open_off:.2f} | 1.00 |")
    print(f"| open, sharing on, nothing changed | {open_on:.2f} | {open_on / open_off:.2f} |")
    follow = statistics.median(follows)
    print(
        f"| first open after a pull that changed {args.changed} files (applies them) | {follow:.1f} | "
        f"{follow / open_off:.1f} |"
    )
    full = statistics.median(syncs)
    print(f"| `codememory sync`'s full walk of every shard, nothing to apply | {full:.1f} | {full / open_off:.1f} |")


if __name__ == "__main__":
    main()
