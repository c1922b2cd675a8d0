"""Per-user locations (XDG): settings and the project registry in the config dir; the daemon's PID
file, token and log in the state dir. Each honours an absolute XDG_* variable, as the spec says."""

from __future__ import annotations

import os
from pathlib import Path


def xdg_home(var: str, default: str) -> Path:
    """The base directory an XDG variable names (`XDG_CONFIG_HOME`, ...), `~/<default>` when it is unset or
    relative (the spec says to ignore a relative one). Other programs' folders (OpenCode's) are found here too."""
    base = os.environ.get(var)
    return Path(base) if base and os.path.isabs(base) else Path.home() / default


def config_dir() -> Path:
    return xdg_home("XDG_CONFIG_HOME", ".config") / "codememory"


def state_dir() -> Path:
    return xdg_home("XDG_STATE_HOME", ".local/state") / "codememory"


def ensure_state_dir() -> Path:
    """The state dir, created if missing and kept private (0700): it holds the token and the daemon's files."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if os.name == "posix" and folder.stat().st_mode & 0o077:
        folder.chmod(0o700)
    return folder
