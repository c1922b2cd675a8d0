"""Which project's store a command talks to: --project, then $CODEMEMORY_PROJECT, then walking up."""

from __future__ import annotations

import os
from pathlib import Path

from codememory.errors import StoreNotFound

STORE_DIR = ".codememory"
DB_NAME = "memory.db"
ENV_PROJECT = "CODEMEMORY_PROJECT"


def find_project_root(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Path:
    """Return the project root (the folder that holds or will hold `.codememory/`).

    Order: explicit path, $CODEMEMORY_PROJECT, nearest ancestor with `.codememory/`, nearest git root.
    Falls back to the current directory so `init` has somewhere to go.
    """
    chosen = explicit or os.environ.get(ENV_PROJECT) or None
    if chosen:
        root = Path(chosen).expanduser()
        if not root.is_dir():
            raise StoreNotFound(f"project directory does not exist: {root}")
        return root.resolve()
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / STORE_DIR).is_dir():
            return folder
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def store_dir(root: Path) -> Path:
    return root / STORE_DIR


def db_path(root: Path) -> Path:
    return store_dir(root) / DB_NAME
