"""Where a store file itself came from, checked each time it is opened (core/provenance.py says what origins mean).

A `memory.db` committed to a repository arrives in every clone (and with every pull that changes it): its rows were
written by whoever committed it, whatever their origin columns say. So a store records which file it is (device and
inode: git replaces a file it checks out, so a pulled memory.db is a new file) and the machines that have opened
it since (store_meta 'home': this user's private random ids, core/machine.py, one per state folder; nobody else
can know one to forge the record). Opening a store whose record does not name this file and this machine asks git
once whether memory.db is tracked:

- tracked: the memories that the checked-out version holds (read from git's copy of it, as repair reads a foreign
  file) came with the repository: they become `committed`, ranked on their content alone, and those whose text
  reads like instructions wait for review (text/instructions.py). Memories written here since stay as they are (a
  store opened from another state folder of the same user, say by an MCP server started with a trimmed
  environment). A version git cannot give makes every memory `committed`.
- not tracked (a store made here, before this record existed or not; restored from a backup; repaired): it is
  recorded as it is.

A store upgraded from before provenance also has its memories that the shared text form holds sorted out once
('shared_origins'): one that git says a teammate last committed (an author other than this clone's `user.email`)
becomes `git`, by that author; the others stay `local` (the provenance migration says how the rest were given their
origin).

A file git writes may reuse the inode of the one it replaced (nothing held it open): the record then still matches,
and the store stays as it is. That is right for what such a file can hold: a record naming this machine is only in
a store this machine last opened (another machine's open records its own file and id instead), i.e. this user's
own store, committed and checked out again.

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
from codememory.service.git_origin import committed_copy, is_tracked, last_authors, user_email
from codememory.service.shared_form import FOLDER, relative_path
from codememory.store.database import Database
from codememory.store.provenance import memory_ids_in
from codememory.text.instructions import is_instruction_like

MAX_MACHINES = 8  # state folders of this user a file has been opened from (each costs one check, once)


def _file_key(path: Path) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def _record(raw: str | None) -> tuple[str | None, list[str]]:
    """(file, machines) of a store's 'home' record; nothing usable from a malformed one."""
    try:
        value = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        return None, []
    if not isinstance(value, dict) or not isinstance(value.get("file"), str):
        return None, []
    machines = value.get("machines")
    if not isinstance(machines, list) or not all(isinstance(m, str) for m in machines):
        return value["file"], []
    return value["file"], machines[:MAX_MACHINES]


def check_store_origin(root: Path, db: Database) -> int:
    """The checks above; returns how many memories were found to have come in a committed store (0 mostly)."""
    file = _file_key(db.path)
    marked = 0
    if file is not None:
        me = machine_id()
        known_file, machines = _record(db.meta("home"))
        if known_file != file or me not in machines:
            machines = [*machines, me] if known_file == file else [me]
            marked = adopt(root, db, json.dumps({"file": file, "machines": machines[-MAX_MACHINES:]}))
    if db.meta("shared_origins"):
        sort_out_shared(root, db)
    return marked


def adopt(root: Path, db: Database, home: str) -> int:
    """Make the file this machine's; first, when git says it came with the repository, its memories that the
    checked-out version holds become `committed` (all of them when that version cannot be read). Memories written
    here since (a record made by another state folder of this user) are not in it and stay as they are."""
    try:
        relative = db.path.relative_to(root).as_posix()
    except ValueError:
        relative = None
    if relative is None or not db.count_all() or not is_tracked(root, relative):
        db.set_meta("home", home)
        return 0
    import tempfile  # only here, once per store file: every command opens a store, and tempfile costs ~4 ms to load

    with tempfile.TemporaryDirectory(prefix="codememory-committed-") as folder:
        copy = Path(folder) / "memory.db"
        came = memory_ids_in(copy) if committed_copy(root, relative, copy) else None
    chosen = None if came is None else {pk for _, pk in db.get_pk_map(list(came))}
    pending = [pk for pk, text in db.texts() if (chosen is None or pk in chosen) and is_instruction_like(text)]
    return db.mark_committed(came, now_iso(), pending, home)


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
