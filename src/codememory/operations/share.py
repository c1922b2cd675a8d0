"""`codememory share on|off|status` and `codememory sync`: team sharing through git (service/sharing.py): whether
this user writes the project's memories to the text form in `.codememory/memories/`, and following that form now."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codememory.core.project import DB_NAME, STORE_DIR
from codememory.core.result import Result
from codememory.core.sharing_state import set_sharing, sharing_since
from codememory.service.share_files import write_share_gitignore
from codememory.service.shared_form import FOLDER
from codememory.service.sharing import SkippedFile, SyncReport

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class ShareReport(Result):
    """`share on|off|status --json`: this user's choice for the project, and the state of its text form."""

    project: str
    sharing: bool  # this clone writes its (non-personal) memories to the text form
    since: str | None  # when sharing was turned on
    action: str  # "turned on", "already on", "turned off", "already off", "status"
    folder: str  # the text form, relative to the project
    files: int  # memory files in the text form (tombstones included)
    personal: int  # memories of this store that never reach the text form
    gitignore: str  # .codememory/.gitignore: "written", "unchanged", "kept" (yours, left alone) or "not touched"
    written: int  # memory files written by this command
    skipped: list[SkippedFile] = field(default_factory=list)  # memory files that did not parse
    warnings: list[str] = field(default_factory=list)


def _count_files(store: Store) -> int:
    folder = store.sharing.folder
    if not folder.is_dir() or folder.is_symlink():
        return 0
    return sum(1 for p in folder.glob("??/mem_*.json") if p.is_file() and not p.is_symlink())


def _db_tracked(store: Store) -> bool:
    """memory.db is committed already (it must leave git: binary, conflicts, and it keeps forgotten text)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "--error-unmatch", f"{STORE_DIR}/{DB_NAME}"],
            cwd=store.root,
            capture_output=True,
            timeout=3,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _report(store: Store, action: str, gitignore: str, sync: SyncReport | None) -> ShareReport:
    warnings: list[str] = []
    if gitignore == "kept":
        warnings.append(
            f"{STORE_DIR}/.gitignore is your own: left as it is; make sure it ignores {DB_NAME}, {DB_NAME}-wal, "
            f"{DB_NAME}-shm, cache/, logs/ and journal/ and lets {FOLDER}/ in"
        )
    sharing = store.sharing.on
    if _db_tracked(store):  # committed before init kept it out of git (or by hand): it never belongs there
        replaced = "the text form replaces it" if sharing else "`codememory share on` commits memory as text instead"
        warnings.append(
            f"{STORE_DIR}/{DB_NAME} is tracked by git: run `git rm --cached {STORE_DIR}/{DB_NAME}` and commit "
            f"({replaced}; the database keeps forgotten text in its history)"
        )
    if store.follow_error:
        warnings.append(f"the memory files could not be followed: {store.follow_error}")
    personal = int(store.db.conn.execute("SELECT COUNT(*) FROM memories WHERE personal = 1").fetchone()[0])
    return ShareReport(
        project=str(store.root),
        sharing=sharing,
        since=sharing_since(store.root),
        action=action,
        folder=f"{STORE_DIR}/{FOLDER}",
        files=_count_files(store),
        personal=personal,
        gitignore=gitignore,
        written=sync.written if sync else 0,
        skipped=sync.skipped if sync else [],
        warnings=warnings,
    )


def share_on(store: Store) -> ShareReport:
    """Share from now on: the sharing .gitignore, then every non-personal memory written to the text form."""
    changed = set_sharing(store.root, True)
    gitignore = write_share_gitignore(store.root)
    return _report(store, "turned on" if changed else "already on", gitignore, store.sync())


def share_off(store: Store) -> ShareReport:
    """Stop writing memories to the text form (it stays as it is; the store goes on following it)."""
    changed = set_sharing(store.root, False)
    return _report(store, "turned off" if changed else "already off", "not touched", None)


def share_status(store: Store) -> ShareReport:
    return _report(store, "status", "not touched", None)


def sync(store: Store) -> SyncReport:
    """Apply every changed memory file now (and write the ones this store owes the text form)."""
    return store.sync()
