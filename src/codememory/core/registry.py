"""The global registry of codememory projects: `$XDG_CONFIG_HOME/codememory/registry.json`.

One JSON object `{"version": 1, "projects": [{"name", "root", "store", "registered_at"}, ...]}`, one entry per
project root. `codememory init` adds the project, `codememory init --uninstall` removes it, `codememory
projects` lists it; cross-project search reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from codememory.core.dates import now_iso_seconds
from codememory.core.paths import config_dir
from codememory.errors import RegistryError

VERSION = 1


def registry_path() -> Path:
    return config_dir() / "registry.json"


def load(path: Path | None = None) -> list[dict[str, Any]]:
    """The registered projects (empty when there is no registry yet). Raises RegistryError when unreadable."""
    path = path or registry_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise RegistryError(f"{path}: cannot be read: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RegistryError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, list) or not all(
        isinstance(p, dict) and isinstance(p.get("root"), str) for p in projects
    ):
        raise RegistryError(f"{path} is not a codememory registry (expected {{'projects': [...]}}); fix or delete it")
    return projects


def _save(projects: list[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"version": VERSION, "projects": projects}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def planned_register(root: Path, store: Path, path: Path | None = None) -> str:
    """What `register` would do: 'added', 'updated' or 'unchanged' (reads only; raises on a broken registry)."""
    for entry in load(path):
        if entry["root"] == str(root):
            return "unchanged" if entry.get("store") == str(store) and entry.get("name") == root.name else "updated"
    return "added"


def register(root: Path, store: Path, path: Path | None = None) -> str:
    """Add or refresh this project. Returns 'added', 'updated' or 'unchanged' (then nothing is written)."""
    path = path or registry_path()
    projects = load(path)
    for entry in projects:
        if entry["root"] == str(root):
            if entry.get("store") == str(store) and entry.get("name") == root.name:
                return "unchanged"
            entry.update(name=root.name, store=str(store))
            _save(projects, path)
            return "updated"
    now = now_iso_seconds()
    projects.append({"name": root.name, "root": str(root), "store": str(store), "registered_at": now})
    _save(projects, path)
    return "added"


def unregister(root: Path, path: Path | None = None) -> str:
    """Remove this project. Returns 'removed' or 'unchanged'; deletes the registry file when it becomes empty."""
    path = path or registry_path()
    projects = load(path)
    kept = [p for p in projects if p["root"] != str(root)]
    if len(kept) == len(projects):
        return "unchanged"
    if kept:
        _save(kept, path)
    else:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    return "removed"
