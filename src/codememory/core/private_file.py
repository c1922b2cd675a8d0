"""Files of the user's own state (trust records, sharing switches, the daemon's address): written whole or not at
all, readable by the owner only. The folders are the user's, so a link on the way there is theirs to keep; only
the temporary file is opened without following one."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, text: str, *, sync: bool = False) -> None:
    """Replace `path` with `text` atomically (a temporary file beside it, renamed over it), mode 0600; `sync`
    flushes it to disk first (for records whose loss would matter after a crash, such as trust)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
