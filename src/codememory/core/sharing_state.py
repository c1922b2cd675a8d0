"""Which projects this user shares memories from: `codememory share on|off`, recorded in the user's state folder
(`$XDG_STATE_HOME/codememory/sharing.json`, mode 0600), keyed by the project's resolved root.

The choice lives with the user, not in the repository: writing memories into `.codememory/memories/`, which
git then carries to everyone the user pushes to, decides where data goes, and a committed file (a clone's
config.toml, memory.db or a marker) is untrusted input that must never decide that (see core/trust.py).
Reading a teammate's shared memories needs no switch: the store follows the files whenever they exist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codememory.core.dates import now_iso_seconds
from codememory.core.paths import state_dir
from codememory.core.private_file import read_entries, write_private

SHARING_NAME = "sharing.json"
VERSION = 1


def sharing_path() -> Path:
    return state_dir() / SHARING_NAME


def _entries(strict: bool) -> dict[str, dict[str, Any]]:
    """{resolved root: {"since"}}. Unreadable: an error when `strict` (share on/off, which would overwrite it),
    else no project shares (nothing is written to a repository on a guess)."""
    return read_entries(sharing_path(), "projects", "sharing", strict=strict)


def _save(entries: dict[str, dict[str, Any]]) -> None:
    text = json.dumps({"version": VERSION, "projects": entries}, indent=2, sort_keys=True) + "\n"
    write_private(sharing_path(), text)


def is_sharing(root: Path) -> bool:
    return str(root.resolve()) in _entries(strict=False)


def sharing_since(root: Path) -> str | None:
    value = _entries(strict=False).get(str(root.resolve()), {}).get("since")
    return value if isinstance(value, str) else None


def set_sharing(root: Path, on: bool) -> bool:
    """Record the choice; False when it was already so."""
    entries = _entries(strict=True)
    key = str(root.resolve())
    if (key in entries) == on:
        return False
    if on:
        entries[key] = {"since": now_iso_seconds()}
    else:
        del entries[key]
    _save(entries)
    return True
