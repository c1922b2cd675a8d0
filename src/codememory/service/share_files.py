"""The files sharing puts around the text form: `.codememory/.gitignore`, which keeps the database, its WAL and
journal, caches, logs, hook journals, session files and daily logs out of git and lets the memory files in."""

from __future__ import annotations

from pathlib import Path

from codememory.core import safe_files
from codememory.core.project import store_dir
from codememory.service.shared_form import FOLDER

# Written by `init` while the project does not share. memory.db is a binary SQLite file: committed, two people's
# changes conflict with no way to merge them, and it keeps forgotten text in git's history. So from `init` on,
# nothing of the store is committed but its settings; sharing is how memory reaches git (SHARE_GITIGNORE below). It
# differs from SHARE_GITIGNORE on purpose: a fresh clone tells a sharing project by that file (is_shared_project).
GITIGNORE = """# codememory: this project's memory stays on each machine (memory.db, a binary SQLite file, with its
# -wal/-shm/-journal files, caches, logs, hook journals, session files and daily logs). To share it through git,
# run `codememory share on`: it commits a text form of the memories (memories/) instead.
*
!.gitignore
!config.toml
"""

# What earlier versions wrote as GITIGNORE (memory.db was then left to git): still ours to replace.
EARLIER_GITIGNORES = (
    """# codememory: caches and SQLite side files are rebuilt locally; never commit them.
*.db-wal
*.db-shm
cache/
logs/
*.tmp
*.lock
*.bak-*
""",
)

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


def _current(path: Path) -> str | None:
    try:
        return safe_files.read_text(path, 64 * 1024, errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None


def write_store_gitignore(root: Path) -> None:
    """`init`'s `.gitignore` (the store stays out of git) when there is none, or one an earlier version wrote; a
    file the user wrote is left alone. Never written through a link (safe_files)."""
    path = store_dir(root) / ".gitignore"
    if safe_files.create_exclusive(path, GITIGNORE):
        return
    try:
        earlier = _current(path) in EARLIER_GITIGNORES
    except OSError:  # a link (refused), or a file this user may not read: not ours to replace
        return
    if earlier:
        safe_files.write_atomic(path, GITIGNORE)


def write_share_gitignore(root: Path) -> str:
    """Put the sharing `.gitignore` in place: "written", "unchanged", or "kept" when the file is one the user
    wrote (left alone; the caller says what it must ignore)."""
    path = store_dir(root) / ".gitignore"
    current = _current(path)
    if current == SHARE_GITIGNORE:
        return "unchanged"
    if current is not None and current != GITIGNORE and current not in EARLIER_GITIGNORES:
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
