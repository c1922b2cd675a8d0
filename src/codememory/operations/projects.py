"""`codememory projects`: the projects in the global registry (added by `codememory init`), and whether each one's
store is still there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core import registry
from codememory.core.result import Result


@dataclass
class Projects(Result):
    """`projects --json`: each registry entry as it is in the file, plus `exists` (its store is a file)."""

    registry: str  # the registry file
    projects: list[dict[str, Any]]


def list_projects() -> Projects:
    rows = [{**e, "exists": Path(str(e.get("store", ""))).is_file()} for e in registry.load()]
    return Projects(str(registry.registry_path()), rows)
