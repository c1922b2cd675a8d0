"""This machine's private random id, kept in the user's state folder (`$XDG_STATE_HOME/codememory/machine-id`).

A store records the machine that made or adopted it (store_meta 'home', service/provenance_check.py): a memory.db
that arrived with a repository carries another machine's id, or none, and nobody else can know this one to forge it.
"""

from __future__ import annotations

import os
from contextlib import suppress

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.paths import state_dir
from codememory.core.private_file import write_private

_ID_RE = lazy_pattern(r"[0-9a-f]{32}")
_cached: dict[str, str] = {}


def machine_id() -> str:
    """The id, created on first use (a lost race leaves one of two ids: a store then just re-checks once)."""
    path = state_dir() / "machine-id"
    key = str(path)
    if key in _cached:
        return _cached[key]
    try:
        value = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        value = ""
    if not _ID_RE.fullmatch(value):
        value = os.urandom(16).hex()
        # a read-only home: the id lives for this process, and stores are re-checked (no harm, a git call)
        with suppress(OSError):
            write_private(path, value + "\n")
    _cached[key] = value
    return value
