"""The files sharing puts around the text form: `.codememory/.gitignore`, which keeps the database, its WAL and
journal, caches, logs, hook journals, session files and daily logs out of git and lets the memory files in."""

from __future__ import annotations

from pathlib import Path

from codememory.core import safe_files
from codememory.core.project import store_dir
from codememory.service.shared_form import FOLDER

# Written by `init` when the project does not share (memory.db itself may then be committed, as before).
GITIGNORE = """# codememory: caches and SQLite side files are rebuilt locally; never commit them.
*.db-wal
*.db-shm
cache/
logs/
*.tmp
*.lock
*.bak-*
"""

# Written by `share on` (and `init` while sharing): a list of what may be committed, so that anything codememory
# adds to the folder later stays out of git by default.
SHARE_GITIGNORE = """# codememory shares this project's memory through git (`codememory share on`): only the memories'
# text form (memories/) and the project settings are committed. memory.db, its -wal/-shm/-journal files,
# caches, logs, hook journals, session files and daily logs stay on each machine (memory.db follows the files).
*
!.gitignore
!config.toml
!memories/
!memories/**
memories/**/.*.tmp
"""


def write_share_gitignore(root: Path) -> str:
    """Put the sharing `.gitignore` in place: "written", "unchanged", or "kept" when the file is one the user
    wrote (left alone; the caller says what it must ignore)."""
    path = store_dir(root) / ".gitignore"
    try:
        current = safe_files.read_text(path, 64 * 1024, errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        current = None
    if current == SHARE_GITIGNORE:
        return "unchanged"
    if current is not None and current != GITIGNORE:
        return "kept"
    safe_files.write_atomic(path, SHARE_GITIGNORE)
    return "written"


def is_shared_project(root: Path) -> bool:
    """The repository carries a shared memory (its text form, or the sharing .gitignore before any memory)."""
    folder = store_dir(root)
    if (folder / FOLDER).is_dir():
        return True
    try:
        return safe_files.read_text(folder / ".gitignore", 64 * 1024, errors="replace") == SHARE_GITIGNORE
    except (OSError, ValueError):
        return False
