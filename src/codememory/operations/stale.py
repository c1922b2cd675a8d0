"""`codememory stale`: which memories name code that is gone (a path deleted or renamed, a symbol removed), with
the reason, and the daemon's scheduled check (codememory.service.staleness does the work).

`stale --json` (StaleReport): {head, checked, stale, marked, cleared: [{id, subject}], run_id, memories: [{id,
text, note, new, suggested_text, reasons: [{subject, kind, commit, new_path, marked_at}]}], fixed: [{id, new_id}]}.

A renamed path is offered to the memory as `suggested_text` (its text with the old path replaced by the new one).
`--fix` stores that text as a new memory that supersedes the stale one (category, importance, tags, author and
source kept; the old one stays readable with `show`, out of search), for memories whose every reason is a rename:
a memory that also names a deleted file or a removed symbol is left for a person to rewrite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result
from codememory.store.staleness import StaleMark
from codememory.text.context_render import stale_note

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class StaleReason(Result):
    """Why a memory may be stale."""

    subject: str  # the path or symbol the memory names
    kind: str  # deleted, renamed or symbol_removed
    commit: str | None  # the commit that deleted or renamed it (None: not committed yet, or a symbol)
    new_path: str | None  # renamed: where it lives now
    marked_at: str


@dataclass
class Staleness(Result):
    """A memory's staleness as `show` and memory_get give it: the note agents see with it, the reasons, and the
    commit it was written at (None outside git, or written before commits were recorded)."""

    note: str | None
    reasons: list[StaleReason]
    written_at_commit: str | None


@dataclass
class StaleMemory(Result):
    id: str
    text: str
    note: str  # as shown to agents: "may be stale: `src/x.py` deleted in abc1234"
    new: bool  # this check marked it (or changed its reason)
    suggested_text: str | None  # renamed paths replaced by where they live now
    reasons: list[StaleReason]


@dataclass
class ClearedMark(Result):
    id: str
    subject: str  # exists again: the mark is gone


@dataclass
class FixedMemory(Result):
    id: str  # the stale memory, now superseded
    new_id: str  # the memory holding the suggested text


@dataclass
class StaleReport(Result):
    """`codememory stale --json`."""

    head: str  # the commit checked against
    checked: int  # live memories naming paths or symbols
    stale: int  # of them, marked stale now (not counting those --fix just superseded)
    marked: int  # marks this check added or changed
    cleared: list[ClearedMark]
    run_id: int  # the recorded run (staleness_runs)
    memories: list[StaleMemory]  # still stale (a memory --fix superseded is in `fixed` instead)
    fixed: list[FixedMemory]


def reasons(marks: Sequence[StaleMark]) -> list[StaleReason]:
    return [StaleReason(m.subject, m.kind, m.commit, m.new_path, m.marked_at) for m in marks]


def note_of(marks: Sequence[StaleMark]) -> str | None:
    return stale_note([(m.kind, m.subject, m.commit, m.new_path) for m in marks])


def notes_by_id(store: Store, ids: Sequence[str]) -> dict[str, str]:
    """The note of each of these memories that is marked stale (for a block rendered outside retrieval)."""
    from codememory.retrieval.search import stale_notes

    pks = dict(store.db.get_pk_map(list(ids)))
    notes = stale_notes(store.db, list(pks.values()))
    return {mid: notes[pk] for mid, pk in pks.items() if pk in notes}


def staleness_of(store: Store, memory_id: str) -> Staleness:
    pk = store.db.pk_of(memory_id)
    if pk is None:
        return Staleness(None, [], None)
    marks = store.db.stale_marks([pk]).get(pk, [])
    return Staleness(note_of(marks), reasons(marks), store.db.commits_of([pk]).get(pk))


def check_stale(store: Store, *, fix: bool = False, progress: Callable[[str], None] | None = None) -> StaleReport:
    """Run the staleness check on the store's project (GitError outside a git repository); with `fix`, store the
    suggested text of each memory stale only by renames as a memory superseding it."""
    from codememory.service.staleness import check, suggested_text

    outcome = check(store.db, store.root, progress=progress)
    texts = {pk: mem.text for pk, mem in store.db.get_by_pks([f.pk for f in outcome.findings]).items()}
    memories = []
    for finding in outcome.findings:
        text = texts.get(finding.pk)
        if text is None:
            continue
        memories.append(
            StaleMemory(
                finding.id,
                text,
                note_of(finding.marks) or "",
                finding.new,
                suggested_text(text, finding.marks),
                reasons(finding.marks),
            )
        )
    fixed = _fix(store, memories) if fix else []
    superseded = {item.id for item in fixed}  # out of search now: listed under `fixed`, no longer as stale
    memories = [m for m in memories if m.id not in superseded]
    cleared = [ClearedMark(mid, subject) for mid, subject in outcome.cleared]
    return StaleReport(
        outcome.head, outcome.checked, len(memories), outcome.marked, cleared, outcome.run_id, memories, fixed
    )


def _fix(store: Store, memories: list[StaleMemory]) -> list[FixedMemory]:
    done = []
    for item in memories:
        if item.suggested_text is None or any(r.kind != "renamed" for r in item.reasons):
            continue
        old = store.get(item.id, touch=False)
        if old.superseded_by or old.archived:
            continue
        added = store.add(
            item.suggested_text,
            category=old.category,
            importance=old.importance,
            tags=old.tags,
            entered_by=old.entered_by,
            source=old.source,
            supersedes=[old.id],
            check_duplicates=False,  # one path changed: the stale memory itself would count as a duplicate
            provenance=old.provenance,  # a path renamed in it does not make someone else's memory ours
        )
        done.append(FixedMemory(old.id, added.memory.id))
    return done
