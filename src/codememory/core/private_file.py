"""Files of the user's own state (trust records, sharing switches, the daemon's address): written whole or not at
all, readable by the owner only, and read back as `{"version", <table>: {name: {...}}}` records. The folders are
the user's, so a link on the way there is theirs to keep; only the temporary file is opened without following one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codememory.errors import TrustError


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


def read_entries(
    path: Path, key: str, what: str, *, strict: bool, valid: Callable[[Any], bool] = lambda v: isinstance(v, dict)
) -> dict[str, dict[str, Any]]:
    """The `key` table of a state record (`{name: {...}}`, each entry `valid`); {} without the file. Unreadable or
    malformed: a TrustError when `strict` (a command about to overwrite it, which must not lose what it holds),
    else {} (nothing is trusted or shared on a guess)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        if strict:
            raise TrustError(f"{path} cannot be read ({exc}); fix or delete it") from None
        return {}
    entries = data.get(key) if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not all(valid(v) for v in entries.values()):
        if strict:
            raise TrustError(f"{path} is not a codememory {what} file; fix or delete it")
        return {}
    return entries
