"""The publish cursor: which memory was sent with which content hash, per project and remote collection.

It lives in the user's state folder (`~/.local/state/codememory/publish/<hash>.json`), not in the project's
`.codememory/`: it describes what this machine sent to a server the user chose, and a project folder is shared
(git) and untrusted. It is rewritten atomically after every batch, so an interrupted publish resumes
where it stopped: the next run sends only what the cursor does not record with the same hash. Losing the file
costs one full, idempotent re-send (upserts by key), never a duplicate or a missed delete of what it listed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from codememory.core import safe_files
from codememory.core.dates import now_iso
from codememory.core.paths import ensure_state_dir, state_dir

MAX_BYTES = 200_000_000


@dataclass
class Cursor:
    path: Path
    target: dict[str, str]  # root, uri, collection, project, model: a cursor of another target is not this one
    sent: dict[str, str] = field(default_factory=dict)  # memory id -> content hash of what the remote holds
    # memory id -> fingerprint of its row (records.scan) at the last publish that completed: unchanged ones are
    # not rebuilt. Written only once a run has sent and deleted everything, so it never hides a pending change.
    seen: dict[str, str] = field(default_factory=dict)
    updated_at: str | None = None

    def save(self) -> None:
        ensure_state_dir()
        self.updated_at = now_iso()
        data = {"target": self.target, "sent": self.sent, "seen": self.seen, "updated_at": self.updated_at}
        safe_files.write_atomic(self.path, json.dumps(data, separators=(",", ":")), mode=0o600)

    def forget(self) -> None:
        self.sent, self.seen = {}, {}
        if self.path.exists():
            self.path.unlink()


def cursor_path(root: Path, uri: str, collection: str, project: str) -> Path:
    key = hashlib.sha256("\0".join([str(root), uri, collection, project]).encode()).hexdigest()[:24]
    return state_dir() / "publish" / f"{key}.json"


def load(root: Path, uri: str, collection: str, project: str, model: str) -> Cursor:
    """The cursor for this target; empty when missing, unreadable, or written for another embedding model
    (every row then carries a vector of the old model: all are sent again)."""
    target = {"root": str(root), "uri": uri, "collection": collection, "project": project, "model": model}
    path = cursor_path(root, uri, collection, project)
    cursor = Cursor(path, target)
    try:
        data = json.loads(safe_files.read_text(path, MAX_BYTES))
    except (OSError, ValueError):
        return cursor
    if not isinstance(data, dict) or data.get("target") != target or not isinstance(data.get("sent"), dict):
        return cursor
    cursor.sent = {str(k): str(v) for k, v in data["sent"].items()}
    seen = data.get("seen")
    cursor.seen = {str(k): str(v) for k, v in seen.items()} if isinstance(seen, dict) else {}
    cursor.updated_at = data.get("updated_at") if isinstance(data.get("updated_at"), str) else None
    return cursor
