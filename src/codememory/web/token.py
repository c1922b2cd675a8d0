"""The per-install bearer token every request to a local server carries: the file `token` in codememory's
state folder, created once (`secrets.token_urlsafe(32)`, mode 0600) and read by every client."""

from __future__ import annotations

import logging
import os

from codememory.core.paths import ensure_state_dir
from codememory.errors import LocalServerError

TOKEN_NAME = "token"

log = logging.getLogger("codememory.daemon")


def load_or_create_token() -> str:
    """The per-install token: read from `token`, or created once (0600, never overwritten by a racing
    creator: the file appears complete or not at all). A token file readable by others is tightened."""
    import secrets  # on use: the token is created once per install

    path = ensure_state_dir() / TOKEN_NAME
    for _attempt in range(3):
        try:
            token = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            token = ""
        if len(token) >= 32:
            if os.name == "posix" and path.stat().st_mode & 0o077:
                path.chmod(0o600)
                log.warning("token file was readable by others: mode set to 0600")
            return token
        if token:  # damaged: replace it (clients re-read it on every call)
            path.unlink(missing_ok=True)
        fresh = secrets.token_urlsafe(32)
        tmp = path.with_name(f".{TOKEN_NAME}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(fresh + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails if another process created it meanwhile: then use theirs
            return fresh
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(tmp, path)
                return fresh
        finally:
            tmp.unlink(missing_ok=True)
    raise LocalServerError(f"cannot create the token file {path}")
