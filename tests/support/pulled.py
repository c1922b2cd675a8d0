"""Memory files as a teammate (or an attacker) pushes them: written straight into a project's
`.codememory/memories/<shard>/<id>.json`, the way `git pull` leaves them, for the store to follow on its next open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STAMP = "2026-11-20T10:00:00.000Z"


def memory_file(root: Path, memory_id: str) -> Path:
    return root / ".codememory" / "memories" / memory_id[4:6] / f"{memory_id}.json"


def record(memory_id: str, text: str, **extra: Any) -> dict[str, Any]:
    """A well-formed memory file's fields (format 1), with `extra` on top."""
    base = {"format": 1, "id": memory_id, "text": text, "category": "gotcha", "importance": 0.9, "tags": []}
    return base | {"created_at": STAMP, "updated_at": STAMP, "entities": [], "links": []} | extra


def put(root: Path, memory_id: str, content: dict[str, Any] | str | bytes) -> Path:
    """Write one pulled file: a dict as indented JSON, text or bytes as they are."""
    path = memory_file(root, memory_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
    return path
