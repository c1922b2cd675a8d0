"""The README's quick start is what CI runs: its two commands are `.ci/run`'s, line for line."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_quick_start_verbatim() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```sh\n(.*?)```", readme, re.S)
    assert block, "README has no quick start block"
    commands = [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert ci[-2:] == commands, (ci, commands)
