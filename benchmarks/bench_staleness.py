"""Staleness scenario on a real git repository: how well `codememory stale` marks the memories whose code is gone.

Builds a repository of FILES modules (each a file src/mod_<i>/file_<i>.py defining func_<i>_0..2 and a class
PaymentHandler<i>), writes memories about them at the first commit (several per module, each naming the module's path
and/or one of its symbols), then commits: DELETE modules removed, RENAME modules renamed (half of them renamed a
second time, into another folder), SYMBOL modules losing func_<i>_1. Memories written after those commits (about
the new paths, and about the deleted paths "we removed X") and distractors (paths of another project, library
APIs) must not be marked. The labels follow from the construction: a memory is stale iff it names a deleted or
renamed path, or the removed symbol, as of its own commit.

Reports precision and recall of the stale marks, the share of renamed memories whose mark names the file's final
path (every rename followed), and the time of a first check over the whole store and of a second one (no change).

    python benchmarks/bench_staleness.py                # 10k memories
    python benchmarks/bench_staleness.py --memories 2000 --files 100
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codememory.core.dates import now_iso
from codememory.core.model import Memory, new_memory_id
from codememory.service.memory_entities import entities_in
from codememory.service.project_store import Store


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def module_source(i: int, drop_symbol: bool = False) -> str:
    funcs = [f"def func_{i}_{j}(value):\n    return value + {j}\n" for j in range(3) if not (drop_symbol and j == 1)]
    return "\n".join([f"class PaymentHandler{i}:\n    retries = {i % 7}\n", *funcs])


TEMPLATES = [
    ("path", "{path} validates the incoming payload before it reaches the queue"),
    ("path", "Keep the retry loop in {path}; moving it broke the nightly job"),
    ("sym0", "func_{i}_0 must stay pure: the cache relies on it"),
    ("sym1", "func_{i}_1 rounds half-up, unlike the finance export"),
    ("sym1path", "func_{i}_1 in {path} is the only caller of the legacy API"),
    ("class", "PaymentHandler{i} retries {r} times before giving up"),
    ("sym2", "Call func_{i}_2 with a validated value only"),
]


def build(root: Path, files: int, memories: int, seed: int) -> tuple[Store, dict[str, set[str]], dict[str, str]]:
    rng = random.Random(seed)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    for i in range(files):
        path = root / f"src/mod_{i}/file_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module_source(i))
    git(root, "add", "src")
    git(root, "commit", "-q", "-m", "modules")
    first = git(root, "rev-parse", "HEAD")
    store, _ = Store.init(root)

    order = list(range(files))
    rng.shuffle(order)
    tenth = max(1, files // 10)
    deleted, renamed, symbol = set(order[:tenth]), set(order[tenth : 2 * tenth]), set(order[2 * tenth : 3 * tenth])
    twice = set(sorted(renamed)[: len(renamed) // 2])

    rows: list[tuple[Memory, str, str]] = []  # memory, commit, label (kind or "")
    renamed_to: dict[str, str] = {}
    per_module = max(1, int(memories * 0.85) // files)
    for i in range(files):
        path = f"src/mod_{i}/file_{i}.py"
        for n in range(per_module):
            kind, template = TEMPLATES[n % len(TEMPLATES)]
            text = template.format(path=path, i=i, r=i % 7) + f" (note {n})"
            label = ""
            if "path" in kind and i in deleted:
                label = "deleted"
            elif "path" in kind and i in renamed:
                label = "renamed"
            elif kind.startswith("sym1") and i in symbol:
                label = "symbol_removed"
            mem = Memory(new_memory_id(), text, created_at=now_iso(), updated_at=now_iso())
            rows.append((mem, first, label))
    # Symbols of deleted modules are gone too: their symbol memories are stale by symbol.
    for idx, (mem, commit, label) in enumerate(rows):
        if not label:
            i = int(mem.text.split("func_")[1].split("_")[0]) if "func_" in mem.text else None
            if i is not None and i in deleted:
                rows[idx] = (mem, commit, "symbol_removed")
            elif "PaymentHandler" in mem.text:
                j = int(mem.text.split("PaymentHandler")[1].split(" ")[0])
                if j in deleted:
                    rows[idx] = (mem, commit, "symbol_removed")

    for i in deleted:
        git(root, "rm", "-q", f"src/mod_{i}/file_{i}.py")
    for i in renamed:
        (root / "src/renamed").mkdir(exist_ok=True)
        git(root, "mv", f"src/mod_{i}/file_{i}.py", f"src/renamed/file_{i}.py")
        renamed_to[f"src/mod_{i}/file_{i}.py"] = f"src/renamed/file_{i}.py"
    for i in symbol:
        (root / f"src/mod_{i}/file_{i}.py").write_text(module_source(i, drop_symbol=True))
    git(root, "commit", "-q", "-am", "delete, rename, drop symbols")
    for i in twice:
        (root / "src/moved").mkdir(exist_ok=True)
        git(root, "mv", f"src/renamed/file_{i}.py", f"src/moved/file_{i}.py")
        renamed_to[f"src/mod_{i}/file_{i}.py"] = f"src/moved/file_{i}.py"
    git(root, "commit", "-q", "-m", "move again")
    last = git(root, "rev-parse", "HEAD")

    rest = memories - len(rows)
    later = []
    for k in range(rest):
        i = rng.randrange(files)
        choice = k % 4
        if choice == 0 and i in deleted:
            text = f"We removed src/mod_{i}/file_{i}.py; nothing imports it any more ({k})"
        elif choice == 1:
            text = f"Vendored code lives in vendor/pkg_{k}/util.py of the other repository ({k})"
        elif choice == 2:
            text = f"Prefer useState over useReducer in the dashboard ({k})"
        else:
            path = renamed_to.get(f"src/mod_{i}/file_{i}.py", f"src/mod_{i}/file_{i}.py")
            text = f"{path} is where the module lives today ({k})" if i not in deleted else f"Module {i} is gone ({k})"
        later.append((Memory(new_memory_id(), text, created_at=now_iso(), updated_at=now_iso()), last, ""))
    rows += later

    store.db.insert_many([m for m, _, _ in rows])
    pks = dict(store.db.get_pk_map([m.id for m, _, _ in rows]))
    store.db.set_entities([(pks[m.id], entities_in(m.text)) for m, _, _ in rows])
    with store.db.transaction():
        store.db.conn.executemany(
            "UPDATE memories SET git_commit = ? WHERE pk = ?", [(c, pks[m.id]) for m, c, _ in rows]
        )
    labels: dict[str, set[str]] = {"deleted": set(), "renamed": set(), "symbol_removed": set()}
    for mem, _, label in rows:
        if label:
            labels[label].add(mem.id)
    expected_path = {}
    for mem, _, label in rows:
        if label == "renamed":
            module = int(mem.text.split("mod_")[1].split("/")[0])
            expected_path[mem.id] = renamed_to[f"src/mod_{module}/file_{module}.py"]
    return store, labels, expected_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from codememory.operations.stale import check_stale

    with tempfile.TemporaryDirectory(prefix="bench-stale-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        started = time.perf_counter()
        store, labels, expected_path = build(root, args.files, args.memories, args.seed)
        built = time.perf_counter() - started
        with store:
            t0 = time.perf_counter()
            report = check_stale(store)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = check_stale(store)
            second = time.perf_counter() - t0
            total = store.db.count_all()
        expected = set().union(*labels.values())
        marked = {m.id for m in report.memories}
        hit = marked & expected
        precision = len(hit) / len(marked) if marked else 1.0
        recall = len(hit) / len(expected) if expected else 1.0
        kinds = {m.id: {r.kind for r in m.reasons} for m in report.memories}
        followed = sum(
            1
            for m in report.memories
            if m.id in expected_path and any(r.new_path == expected_path[m.id] for r in m.reasons)
        )
        by_kind = {k: (len(v & marked), len(v)) for k, v in labels.items()}
        right_kind = sum(1 for k, v in labels.items() for mid in v if k in kinds.get(mid, set()))
    print(
        f"Staleness scenario: {total} memories, {args.files} modules ({len(labels['deleted']) and args.files // 10} "
        f"deleted, renamed and stripped of a symbol each; half the renamed moved twice); built in {built:.1f} s\n"
    )
    print("| measure | value |")
    print("| --- | --- |")
    print(f"| memories checked (naming paths or symbols) | {report.checked} |")
    print(f"| expected stale / marked | {len(expected)} / {len(marked)} |")
    print(f"| precision | {precision:.3f} |")
    print(f"| recall | {recall:.3f} |")
    for kind, (found, want) in by_kind.items():
        print(f"| {kind}: marked / expected | {found} / {want} |")
    print(f"| marked with the right kind | {right_kind} / {len(expected)} |")
    print(f"| renames followed to the final path | {followed} / {len(expected_path)} |")
    print(f"| first check (marks written) | {first:.2f} s |")
    print(f"| second check (nothing changed) | {second:.2f} s ({again.marked} new marks) |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
