"""Which projects the daemon may open: only those in the user's registry (`codememory init` adds a project to
`$XDG_CONFIG_HOME/codememory/registry.json`; `codememory projects` lists them).

The token lets a caller ask the daemon, a long-running process of the user, to read and write a store. Without
this check any path would do: a store anywhere on disk (another user's shared folder, a repository cloned a
minute ago with a committed `.codememory/`) would be opened, its config read and its files written. The registry
is in the user's own config folder, so it is trusted; everything a request names is compared with it, resolved
(symlinks followed, `..` removed), before any store is opened.

A folder inside a registered project is allowed (the plugin sends its working folder), unless a folder between
it and the registered root holds a store of its own (a nested clone): the nearest store is the one that would
answer, and it must be registered itself.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from codememory.core.project import db_path
from codememory.core.registry import load, registry_path
from codememory.errors import InvalidInput, ProjectNotAllowed, StoreNotFound


def _shown(path: str | Path) -> str:
    """A path for an error message: quoted, control characters escaped, bounded."""
    return json.dumps(str(path)[:300], ensure_ascii=False)


def _resolved(path: str) -> Path:
    if not path or not os.path.isabs(path) or "\x00" in path:
        raise InvalidInput("project_root must be an absolute path")
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a symlink loop (Python 3.11)
        raise InvalidInput(f"project_root cannot be resolved: {_shown(path)}") from None


class RegisteredProjects:
    """The registry's project roots, resolved; re-read when the file changes (one `stat` per request).
    Raises `registry.RegistryError` when the file exists but cannot be used."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._cached: tuple[tuple[int, int, int], frozenset[Path]] | None = None

    def roots(self) -> frozenset[Path]:
        path = self._path or registry_path()
        try:
            st = path.stat()
        except FileNotFoundError:
            return frozenset()
        signature = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            if self._cached is not None and self._cached[0] == signature:
                return self._cached[1]
            roots = set()
            for entry in load(path):
                root = entry["root"]
                if os.path.isabs(root) and "\x00" not in root:
                    try:
                        roots.add(Path(root).resolve())
                    except (OSError, RuntimeError):
                        continue
            self._cached = (signature, frozenset(roots))
            return self._cached[1]

    def allowed_root(self, project_root: str) -> Path:
        """The registered project whose store answers for `project_root` (the project or a folder inside it).

        InvalidInput (400): not an absolute path, or not an existing folder. ProjectNotAllowed (403): not inside
        a registered project, or the nearest store is a nested one that is not registered. StoreNotFound (404):
        registered, but its store is gone. Nothing under the path is opened before it is known to be allowed."""
        start = _resolved(project_root)
        registered = self.roots()
        home = next((folder for folder in (start, *start.parents) if folder in registered), None)
        if home is None:
            raise ProjectNotAllowed(
                f"project_root {_shown(project_root)} is not in a project registered on this machine: the daemon "
                "serves only projects added by `codememory init` (see `codememory projects`)"
            )
        if not start.is_dir():
            raise InvalidInput(f"project_root is not an existing folder: {_shown(project_root)}")
        for folder in (start, *start.parents):
            if folder == home:
                break
            if os.path.lexists(db_path(folder)):
                raise ProjectNotAllowed(
                    f"{_shown(folder)} has a codememory store of its own that is not registered on this machine "
                    "(run `codememory init` there if it is yours)"
                )
        if not db_path(home).is_file():
            raise StoreNotFound(
                f"no codememory store for {_shown(project_root)} (run `codememory init` in the project first)"
            )
        return home

    def allows(self, root: Path) -> bool:
        """Whether `root` (already resolved) is itself a registered project."""
        return root in self.roots()
