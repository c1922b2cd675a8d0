"""Where a store file itself came from, checked each time it is opened (core/provenance.py says what origins mean).

A `memory.db` committed to a repository arrives in every clone (and with every pull that changes it): its rows were
written by whoever committed it, whatever their origin columns say. So a store records the machine that made or
adopted it and which file it was then (store_meta 'home': this machine's private id, core/machine.py, and the file's
device and inode; git replaces a file it checks out, so a pulled memory.db is a new file). Opening a store whose
record is not exactly this machine's and this file's asks git once whether memory.db is tracked:

- tracked: the file came with the repository. Every memory in it becomes `committed` (ranked on its content alone),
  those whose text reads like instructions wait for review (text/instructions.py), and the file becomes this
  machine's: what is written here from now on is `local`.
- not tracked (a store made here before this record existed, restored from a backup, or repaired): it is adopted as
  it is.

A store upgraded from before provenance also has its memories that the shared text form holds sorted out once
('shared_origins'): one that git says a teammate last committed (an author other than this clone's `user.email`)
becomes `git`, by that author; the others stay `local` (see migration 11 for how the rest were given their origin).

Cost on an open with nothing to do: one read of the machine id (cached per process), one stat, one query.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from codememory.core.dates import now_iso
from codememory.core.machine import machine_id
from codememory.core.project import STORE_DIR
from codememory.core.provenance import Provenance
from codememory.service.git_origin import is_tracked, last_authors, user_email
from codememory.service.shared_form import FOLDER, relative_path
from codememory.store.database import Database
from codememory.text.instructions import is_instruction_like


def _home(path: Path) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return json.dumps({"machine": machine_id(), "file": f"{st.st_dev}:{st.st_ino}"}, sort_keys=True)


def check_store_origin(root: Path, db: Database) -> int:
    """The checks above; returns how many memories were found to have come in a committed store (0 mostly)."""
    home = _home(db.path)
    marked = 0
    if home is not None and db.meta("home") != home:
        marked = adopt(root, db, home)
    if db.meta("shared_origins"):
        sort_out_shared(root, db)
    return marked


def adopt(root: Path, db: Database, home: str) -> int:
    """Make the file this machine's; its memories `committed` first when git says it came with the repository."""
    try:
        relative = db.path.relative_to(root).as_posix()
    except ValueError:
        relative = None
    if relative is None or not db.count_all() or not is_tracked(root, relative):
        db.set_meta("home", home)
        return 0
    pending = [pk for pk, text in db.texts() if is_instruction_like(text)]
    return db.mark_all_committed(now_iso(), pending, home)


def sort_out_shared(root: Path, db: Database) -> None:
    """Memories from before provenance that the text form holds: `git` when a teammate last committed their file."""
    records = db.shared_records()
    found = db.provenance_of([mid for mid, r in records.items() if r.status == "ok"])
    paths = {f"{STORE_DIR}/{FOLDER}/{relative_path(mid)}": mid for mid, (_, _, prov) in found.items() if prov.trusted}
    authors = last_authors(root, list(paths)) if paths else {}
    me = (user_email(root) or "").lower() if paths else ""
    now = now_iso()
    updates = []
    for path, mid in paths.items():
        author = authors.get(path)
        if author is None or author.lower() == me:
            continue  # git does not know, or this clone's own commit: written here, most likely
        pk, text, _ = found[mid]
        updates.append((pk, Provenance("git", author, now, "pending" if is_instruction_like(text) else None)))
    db.set_provenance(updates)
    db.set_meta("shared_origins", None)
