"""Team sharing through git: the store follows the text form in `.codememory/memories/` (service/shared_form.py),
and, when this user shares the project (`codememory share on`, core/sharing_state.py), writes every change of a
shared memory there.

- Files -> store (`follow`, on every open; `sync`): a memory file that is new or changed is applied to memory.db
  (text, tags, entities, links; the keyword indexes updated and the vector recomputed for that memory only), a
  tombstone or a removed file deletes the memory. Opening a store must stay cheap (hooks open it on every event),
  so `follow` stats the shard folders only (git replaces a file it checks out, which changes its folder's mtime)
  and walks just the shards whose stat changed since the last walk; a shard that was changing while it was walked,
  or holds a file that could not be read, is walked again next time. An edit in place (an editor saving over the file)
  leaves the folder alone: `codememory sync` (and the daemon's full pass) walks every shard.
- A file that does not parse (conflict markers included) is reported and skipped, never applied in part; the store
  keeps its version of that memory until the file is fixed. It is remembered (its size, mtime and sha256, and why):
  it is not parsed again until it changes, and its folder is not walked again for it, so thousands of broken files
  cost one parse each, not one per open. A file fixed in place (its folder unchanged) is seen by `codememory sync` and
  the daemon's full pass; one git checks out (a pull, a merge) on the next open. The file is the shared truth: when
  it changed, its content wins over a local change not yet written to it.
- Store -> files (`publish`, after every write of Store): the memories' files (a tombstone for a forgotten one)
  are written atomically; personal memories never are, and neither is a memory whose file is in conflict.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codememory.core import safe_files
from codememory.core.config import Config
from codememory.core.dates import now_iso
from codememory.core.model import ID_RE, Memory
from codememory.core.project import STORE_DIR, store_dir
from codememory.core.provenance import Provenance
from codememory.core.result import Result
from codememory.core.sharing_state import is_sharing
from codememory.errors import CodememoryError, InvalidInput
from codememory.service.git_origin import last_authors
from codememory.service.shared_form import (
    FILE_RE,
    FOLDER,
    MAX_FILE_BYTES,
    memory_bytes,
    parse_file,
    relative_path,
    sha256,
    shard_of,
    tombstone_bytes,
)
from codememory.store.database import Database
from codememory.store.shared import SharedMemory, SharedRecord
from codememory.text.instructions import is_instruction_like

_SHARD_CHARS = set("0123456789abcdef")
# A folder whose mtime is this close to the walk may still be changing within the file system's time resolution.
_RACY_NS = 2_000_000_000


@dataclass
class SkippedFile(Result):
    """A memory file that was not applied, and why (one line, scrubbed)."""

    file: str  # relative to the project root
    error: str


@dataclass
class SyncReport(Result):
    """`codememory sync --json`: what following the text form changed in this store, and what it wrote to it."""

    sharing: bool  # this clone writes its memories to the text form (`codememory share on`)
    folder: str  # the text form's folder
    added: list[str] = field(default_factory=list)  # memories new from the files
    updated: list[str] = field(default_factory=list)  # memories whose file changed
    deleted: list[str] = field(default_factory=list)  # memories forgotten (tombstone) or whose file was removed
    written: int = 0  # files written from the store (sharing on)
    skipped: list[SkippedFile] = field(default_factory=list)  # files that did not parse, left unapplied
    embedded: int = 0  # vectors computed for the memories that changed

    @property
    def changed(self) -> list[str]:
        return self.added + self.updated

    def merged(self, later: SyncReport) -> SyncReport:
        """This report followed by a later one (a memory counted once, by what became of it last)."""
        deleted = list(dict.fromkeys(self.deleted + later.deleted))
        updated = [i for i in dict.fromkeys(self.updated + later.updated) if i not in deleted]
        added = [i for i in dict.fromkeys(self.added + later.added) if i not in deleted]
        return SyncReport(
            later.sharing,
            later.folder,
            added,
            [i for i in updated if i not in added],
            deleted,
            self.written + later.written,
            later.skipped,
            self.embedded + later.embedded,
        )


@dataclass
class _Seen:
    """One memory file found in a walk."""

    memory_id: str
    mtime_ns: int
    size: int


class Sharing:
    """The text form of one project's store (see the module docstring)."""

    def __init__(self, root: Path, db: Database, config: Config) -> None:
        self.root = root
        self.db = db
        self.config = config
        self.folder = store_dir(root) / FOLDER
        self._linked: list[str] = []  # shard folders that are links (never followed), seen by the last look

    # ------------------------------------------------------------------ who shares
    @property
    def on(self) -> bool:
        return is_sharing(self.root)

    def personal(self, category: str, entered_by: str | None, asked: bool | None) -> bool:
        """Whether a new memory stays out of the text form: asked for, or by the [share] settings."""
        if asked is not None:
            return asked
        share = self.config.share
        return category in share.personal_categories or (entered_by or "").lower() in share.personal_entered_by

    def _shown(self, memory_id: str) -> str:
        return f"{STORE_DIR}/{FOLDER}/{relative_path(memory_id)}"

    # ------------------------------------------------------------------ store -> files
    def publish(self, ids: Iterable[str], *, force: bool = False) -> int:
        """Write the files of these memories (a tombstone for one no longer in the store that had a file), when
        sharing is on (or `force`). Returns how many files were written."""
        ids = [i for i in dict.fromkeys(ids) if ID_RE.match(i)]
        if not ids or not (force or self.on):
            return 0
        forms = self._forms(ids)
        records = self.db.shared_records(ids)
        written = 0
        saved: list[SharedRecord] = []
        for mid in ids:
            record = records.get(mid)
            if record is not None and record.status != "ok":
                continue  # its file is in conflict or broken: the person resolving it decides
            if mid in forms:
                data = forms[mid]
            elif record is not None and record.form_sha256 is not None:
                data = tombstone_bytes(mid, now_iso())
            else:
                continue  # personal, or never shared: nothing to write or to take back
            path = self.folder / relative_path(mid)
            try:
                current = safe_files.read_bytes(path, MAX_FILE_BYTES + 1)
            except (FileNotFoundError, NotADirectoryError):
                current = None
            if current != data and not (current is not None and mid not in forms and _is_tombstone(current)):
                safe_files.write_atomic(path, data)
                written += 1
            else:
                data = current
            st = os.lstat(path)
            form = sha256(data) if mid in forms else None
            saved.append(SharedRecord(mid, sha256(data), form, st.st_mtime_ns, st.st_size))
        self.db.save_shared_records(saved)
        return written

    def _forms(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The file of each of these memories as the store holds it (personal ones left out)."""
        personal = self.db.personal_ids(ids)
        rows = [(pk, m) for pk, m in self.db.get_by_ids(list(ids)) if m.id not in personal]
        return self._render(rows)

    def _render(
        self, rows: Sequence[tuple[int, Memory]], every_link: dict[str, list[dict[str, Any]]] | None = None
    ) -> dict[str, bytes]:
        """`every_link`: the store's outgoing links read once by a caller rendering many memories."""
        pks = [pk for pk, _ in rows]
        entities = self.db.entities_of(pks)
        out: dict[str, bytes] = {}
        if every_link is None:
            every_link = {
                m.id: [{"to": o, "type": t, "score": sc} for d, o, t, sc in self.db.links_of(pk) if d == "out"]
                for pk, m in rows
            }
        links = {m.id: [(x["to"], x["type"], x["score"]) for x in every_link.get(m.id, [])] for _, m in rows}
        targets = [to for ls in links.values() for to, _, _ in ls]
        personal_targets = self.db.personal_ids(targets) if targets else set()
        for pk, mem in rows:
            outgoing = [link for link in links[mem.id] if link[0] not in personal_targets]
            out[mem.id] = memory_bytes(mem, [n for n, _ in entities.get(pk, [])], outgoing)
        return out

    # ------------------------------------------------------------------ files -> store
    def follow(self) -> SyncReport | None:
        """The cheap check on open: apply the files of the shards whose folders changed since the last walk.
        None when nothing changed (or there is no text form)."""
        shards = self._shard_stats()
        if shards is None:
            return None
        known = self._known_shards()
        todo = [s for s, st in shards.items() if st is None or known.get(s) != st]
        gone = [s for s in known if s not in shards]
        if not todo and not gone:
            return None
        return self._walk(todo + gone, shards, known)

    def sync(self, *, embed: Callable[[list[str]], int] | None = None) -> SyncReport:
        """`codememory sync`: walk every shard and apply what changed; when sharing is on, also write the files of
        the memories changed here but not written yet (after a crash, or from before `share on`)."""
        shards = self._shard_stats()
        if shards is None:  # no text form (or the whole folder removed: that is not "forget everything")
            report = SyncReport(self.on, f"{STORE_DIR}/{FOLDER}")
            if self.folder.is_symlink():
                report.skipped.append(SkippedFile(report.folder, "a link (links are never followed)"))
        else:
            known = self._known_shards()
            report = self._walk(sorted(set(shards) | set(known)), shards, known)
        if self.on:
            report.written = self.publish_all()
        if embed is not None and report.changed:
            report.embedded = embed(report.changed)
        return report

    def publish_all(self) -> int:
        """Write every shared memory whose file is missing or older than the store's version; tombstones for the
        memories forgotten here whose file is still live."""
        ids = self.db.shared_memory_ids()
        records = self.db.shared_records()
        every_link = self.db.outgoing_links()
        stale: list[str] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            forms = self._render(self.db.get_by_ids(chunk), every_link)
            for mid, data in forms.items():
                record = records.get(mid)
                if record is None or record.form_sha256 != sha256(data):
                    stale.append(mid)
        present = set(ids)
        stale += [mid for mid, r in records.items() if mid not in present and r.form_sha256 is not None]
        return self.publish(stale, force=True)

    def _shard_stats(self) -> dict[str, list[int] | None] | None:
        """{shard: [mtime_ns, inode]} of the text form's shard folders (None: there is no text form). A folder
        modified within the file system's time resolution of now maps to None: it is walked again next time."""
        try:
            if not safe_files.check_dir(self.folder):
                return None
        except CodememoryError:
            return None  # a linked folder: not followed (sync reports it)
        out: dict[str, list[int] | None] = {}
        self._linked = []
        now = time.time_ns()
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if len(entry.name) == 2 and set(entry.name) <= _SHARD_CHARS:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        out[entry.name] = None if now - st.st_mtime_ns < _RACY_NS else [st.st_mtime_ns, st.st_ino]
                    elif stat.S_ISLNK(st.st_mode):
                        self._linked.append(entry.name)
        return out

    def _known_shards(self) -> dict[str, list[int] | None]:
        raw = self.db.shared_state("folders")
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _walk(
        self, shards: Sequence[str], stats: dict[str, list[int] | None], known: dict[str, list[int] | None]
    ) -> SyncReport:
        report = SyncReport(self.on, f"{STORE_DIR}/{FOLDER}")
        report.skipped += [
            SkippedFile(f"{STORE_DIR}/{FOLDER}/{name}", "a link (links are never followed)") for name in self._linked
        ]
        seen: dict[str, _Seen] = {}
        problems: set[str] = set()
        for shard in shards:
            if shard in stats:
                found = self._scan(shard, report)
                if found is None:
                    problems.add(shard)
                    continue
                for item in found:
                    seen[item.memory_id] = item
        records = self._records_in(shards)
        upserts: list[SharedMemory] = []
        deletes: list[str] = []
        saved: list[SharedRecord] = []
        dropped: list[str] = []
        file_sha: dict[str, str] = {}
        unshared = self._held_never_shared([mid for mid in seen if not _in_text_form(records.get(mid))])
        for mid, item in seen.items():
            record = records.get(mid)
            same_stat = record is not None and (record.mtime_ns, record.size) == (item.mtime_ns, item.size)
            if record and record.status == "ok" and same_stat:
                continue
            if record and record.status == INVALID and same_stat:  # refused before, unchanged since: not read again
                report.skipped.append(SkippedFile(self._shown(mid), record.reason or _INVALID))
                continue
            try:
                data = safe_files.read_bytes(self.folder / relative_path(mid), MAX_FILE_BYTES + 1)
            except (OSError, CodememoryError) as exc:
                report.skipped.append(SkippedFile(self._shown(mid), str(exc)))
                problems.add(shard_of(mid))
                continue
            digest = sha256(data)
            if record and record.status == "ok" and record.file_sha256 == digest:
                saved.append(SharedRecord(mid, digest, record.form_sha256, item.mtime_ns, item.size))
                continue
            if record and record.status == INVALID and record.file_sha256 == digest:  # touched, not changed
                report.skipped.append(SkippedFile(self._shown(mid), record.reason or _INVALID))
                saved.append(replace(record, mtime_ns=item.mtime_ns, size=item.size))
                continue
            try:
                parsed = parse_file(data, mid)
            except InvalidInput as exc:
                # Remembered by its stat and hash, and its folder is not walked again for it: a file that does not
                # parse costs one parse, not one per open (`sync` and the daemon's full pass see an edit in place).
                report.skipped.append(SkippedFile(self._shown(mid), str(exc)))
                form = record.form_sha256 if record else None
                saved.append(SharedRecord(mid, digest, form, item.mtime_ns, item.size, INVALID, str(exc)))
                continue
            if mid in unshared and (parsed.shared is None or unshared[mid] != digest):
                # A memory made here that never reached the text form: a file naming its id is a collision (or a
                # pushed file aimed at it, its id seen elsewhere); it neither deletes nor overwrites it. Not a
                # problem shard: the folder is not walked again for it on every open.
                report.skipped.append(SkippedFile(self._shown(mid), _NEVER_SHARED))
                saved.append(SharedRecord(mid, digest, None, item.mtime_ns, item.size, "skipped", _NEVER_SHARED))
                continue
            hidden = self._never_shared([to for to, _, _ in parsed.shared.links]) if parsed.shared else []
            if hidden:
                # A teammate cannot know the id of a memory this store never shared: the link is forged (or the file
                # was made from someone's own store). Looked at again on every walk: sharing it changes the answer.
                said = f"links to {hidden[0]}, a memory this store holds but never shared (personal or local-only)"
                report.skipped.append(SkippedFile(self._shown(mid), said))
                saved.append(SharedRecord(mid, digest, None, item.mtime_ns, item.size, "skipped", said))
                continue
            file_sha[mid] = digest
            if parsed.shared is None:
                deletes.append(mid)
                saved.append(SharedRecord(mid, digest, None, item.mtime_ns, item.size))
            else:
                upserts.append(parsed.shared)
                saved.append(SharedRecord(mid, digest, None, item.mtime_ns, item.size))
        for mid, record in records.items():
            if mid not in seen and shard_of(mid) not in problems:
                dropped.append(mid)
                if _in_text_form(record):
                    deletes.append(mid)  # the file was removed (`git rm`, a checkout): the memory goes too
        # Unchanged memories are not rewritten (their row, indexes and vector stay as they are).
        current = self._forms([u.memory.id for u in upserts])
        changed = [u for u in upserts if sha256(current.get(u.memory.id, b"")) != file_sha[u.memory.id]]
        self._pulled(changed)
        folders = dict(known)
        for shard in shards:
            if shard in stats and shard not in problems:
                folders[shard] = stats[shard]
            elif shard in stats:
                folders[shard] = None
            else:
                folders.pop(shard, None)
        added, updated, deleted = self.db.apply_shared(
            changed, deletes, saved, dropped, ("folders", json.dumps(folders, sort_keys=True))
        )
        report.added, report.updated, report.deleted = added, updated, deleted
        live = [r for r in saved if r.memory_id in file_sha and r.status == "ok" and r.memory_id not in deletes]
        if live:  # the store's form of what it now holds from the files: a later local change is told from it
            forms = self._forms([r.memory_id for r in live])
            self.db.save_shared_records(
                [
                    SharedRecord(r.memory_id, r.file_sha256, sha256(forms[r.memory_id]), r.mtime_ns, r.size)
                    for r in live
                    if r.memory_id in forms
                ]
            )
        return report

    def _pulled(self, changed: Sequence[SharedMemory]) -> None:
        """Each memory a file brings is `git`, by the author of the file's last commit as git tells it (never what the
        file says), and waits for review when its text reads like instructions (core/provenance.py)."""
        if not changed:
            return
        paths = {u.memory.id: f"{STORE_DIR}/{FOLDER}/{relative_path(u.memory.id)}" for u in changed}
        authors = last_authors(self.root, list(paths.values()))
        now = now_iso()
        for item in changed:
            review = "pending" if is_instruction_like(item.memory.text) else None
            item.memory.provenance = Provenance("git", authors.get(paths[item.memory.id]), now, review)

    def _never_shared(self, targets: Sequence[str]) -> list[str]:
        """The link targets that this store holds but that never reached the text form: personal memories, and those
        written here while sharing was off (a pulled file naming such an id is a collision, refused itself)."""
        held = [mid for mid, _pk in self.db.get_pk_map(list(dict.fromkeys(targets)))] if targets else []
        if not held:
            return []
        personal = self.db.personal_ids(held)
        records = self.db.shared_records(held)
        return [t for t in held if t in personal or not _in_text_form(records.get(t))]

    def _held_never_shared(self, ids: Sequence[str]) -> dict[str, str]:
        """{id: sha256 of its form} of these memories that this store holds (not personal: files never touch those)
        although they were never in the text form."""
        held = [mid for mid, _pk in self.db.get_pk_map(ids)] if ids else []
        return {mid: sha256(data) for mid, data in self._forms(held).items()} if held else {}

    def _records_in(self, shards: Sequence[str]) -> dict[str, SharedRecord]:
        out: dict[str, SharedRecord] = {}
        for shard in shards:
            out.update(self.db.shared_records_with_prefix(f"mem_{shard}"))
        return out

    def _scan(self, shard: str, report: SyncReport) -> list[_Seen] | None:
        """The memory files of a shard (None: the folder cannot be walked safely; nothing in it is judged)."""
        folder = self.folder / shard
        out: list[_Seen] = []
        try:
            safe_files.check_dir(folder)
        except CodememoryError as exc:
            report.skipped.append(SkippedFile(f"{STORE_DIR}/{FOLDER}/{shard}", str(exc)))
            return None
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    continue  # another process's file being written
                shown = f"{STORE_DIR}/{FOLDER}/{shard}/{entry.name}"
                if not FILE_RE.match(entry.name) or shard_of(entry.name) != shard:
                    report.skipped.append(SkippedFile(shown[:300], "not a memory file name (mem_<8 hex>.json)"))
                    continue
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    report.skipped.append(SkippedFile(shown, "not a regular file (links are never followed)"))
                    continue
                out.append(_Seen(entry.name[:-5], st.st_mtime_ns, st.st_size))
        return out


INVALID = "invalid"  # the status of a file that did not parse
_INVALID = "did not parse"
_NEVER_SHARED = (
    "this store holds a memory with this id that was never shared: left alone (if it is the same memory, "
    "`codememory forget` it here and run `codememory sync`)"
)


def _in_text_form(record: SharedRecord | None) -> bool:
    """The memory was written to or applied from the text form (a file that was only ever refused does not count)."""
    return record is not None and (
        record.form_sha256 is not None or (record.status == "ok" and record.file_sha256 is not None)
    )


def _is_tombstone(data: bytes) -> bool:
    try:
        return parse_file(data, json.loads(data).get("id", "")).shared is None
    except (InvalidInput, ValueError, AttributeError, RecursionError):
        return False
