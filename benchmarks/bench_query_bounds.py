"""Peak memory of one `codememory search` against a hostile repository: twenty pulled memories, ten holding a
9,000-character run of one letter and ten one word repeated 4,500 times, searched with long runs and long phrases.
Each query runs as a fresh CLI process (lexical search, no model) and its peak resident memory is read with
`resource.getrusage(RUSAGE_CHILDREN)` of a one-child wrapper; `--src` runs the same queries with another checkout's
code first on PYTHONPATH (e.g. main's), alternating, so both columns come from one run.

    .venv/bin/python benchmarks/bench_query_bounds.py [--src /path/to/other/checkout/src]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

QUERIES = {
    "one word": "deploy",
    "run of 4,000": "a" * 4000,
    "phrase of 2,000 words": '"' + ("a " * 1999).strip() + '"',
    "run of 10,000": "a" * 10_000,
    "run of 30,000": "a" * 30_000,
}
CLI = [sys.executable, "-c", "from codememory.cli.main import main; main()"]  # the code PYTHONPATH finds first
_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)
"""


def hostile_project(base: Path, env: dict[str, str]) -> Path:
    root = base / f"proj-{len(list(base.glob('proj-*')))}"
    root.mkdir()
    init = [*CLI, "--project", str(root), "init", "--assistants", "none"]
    subprocess.run(init, env=env, check=True, capture_output=True)
    stamp = "2026-11-20T10:00:00.000Z"
    for i in range(10):
        for prefix, text in (("a11ce", "a" * 9000 + f" run{i}"), ("b0b00", "a " * 4500 + f"words{i}")):
            mid = f"mem_{prefix}{i:03x}"
            path = root / ".codememory" / "memories" / mid[4:6] / f"{mid}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            fields = {"format": 1, "id": mid, "text": text, "category": "note", "importance": 0.5, "tags": []}
            fields |= {"created_at": stamp, "updated_at": stamp, "entities": [], "links": []}
            path.write_text(json.dumps(fields))
    return root


def peak(env: dict[str, str], root: Path, query: str) -> tuple[float, int]:
    argv = [*CLI, "--project", str(root), "search", "--mode", "lexical", query]
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], env=env, capture_output=True, text=True, check=True)
    kib, code = map(int, out.stdout.split())
    return kib / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", help="another checkout's src folder, run alternating with this one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "XDG_"))}
        env |= {"HOME": str(base), "XDG_CONFIG_HOME": str(base / "c"), "XDG_STATE_HOME": str(base / "s")}
        env["CODEMEMORY_EMBEDDING_PROVIDER"] = "none"
        here = str(Path(__file__).resolve().parents[1] / "src")
        variants = {"this checkout": {**env, "PYTHONPATH": here}}
        if args.src:
            variants = {"--src": {**env, "PYTHONPATH": args.src}, **variants}
        roots = {name: hostile_project(base, venv) for name, venv in variants.items()}  # each made by its own code
        for name, venv in variants.items():
            peak(venv, roots[name], "deploy")  # the first open applies the pulled files
        print(f"{'query':<24}" + "".join(f"{name:>22}" for name in variants))
        for label, query in QUERIES.items():
            cells = []
            for name, venv in variants.items():
                mib, code = peak(venv, roots[name], query)
                cells.append(f"{mib:8.0f} MiB (exit {code})")
            print(f"{label:<24}" + "".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
