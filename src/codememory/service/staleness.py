"""Staleness tied to the code: which memories name paths or symbols that are gone from the project.

A memory records HEAD when it is written (memories.git_commit, read from .git's files: core/git_head.py). The
check looks at every live memory whose entities (text/entities.py) include files or identifiers, and asks git,
one process per kind of question for the whole store (service/git_history.py):

- a path that is not in the working tree now, but was in the memory's commit: deleted or renamed. Git's log of
  deletions and renames (`log -M --diff-filter=DR`) says which and in which commit; a rename is followed through
  later renames to where the file lives now (a renamed path whose new home is gone counts as deleted). A path
  gone from the working tree that no commit removed yet is "deleted" with no commit. A memory with no recorded
  commit (written before this existed) is judged by the log alone: a deletion or rename committed after the
  memory was written.
- a symbol (identifier, `a.b`, `A::b`) that occurs as a whole word in the memory's commit and nowhere in the
  working tree now (`git grep -w -F`, tracked and untracked files; .codememory/ excluded). Without a recorded
  commit a symbol is not judged: nothing says it ever was in the code.

A path or symbol never seen in the repository (a file of another project, a library's API) makes nothing stale.
Each finding is a mark (memory_staleness) with the reason; a mark whose subject exists again is cleared by the
next check; every check is recorded (staleness_runs) with what it marked and cleared.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from codememory.core.dates import from_iso, now_iso
from codememory.service import git_history as git
from codememory.store.database import Database
from codememory.store.staleness import Candidate, StaleMark

MAX_CHAIN = 20  # renames followed from one path


@dataclass
class Finding:
    pk: int
    id: str
    marks: list[StaleMark]
    new: bool  # at least one mark was not there before this check


@dataclass
class CheckOutcome:
    head: str
    checked: int
    findings: list[Finding] = field(default_factory=list)
    marked: int = 0  # marks added or changed
    cleared: list[tuple[str, str]] = field(default_factory=list)  # (memory id, subject)
    run_id: int = 0


class _Tree:
    """The working tree as the check sees it: whether a path exists, inside the project (a link that leads out
    of it does not count), cached per path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = os.path.realpath(root)
        self._seen: dict[str, bool] = {}

    def has(self, path: str) -> bool:
        found = self._seen.get(path)
        if found is None:
            full = os.path.join(self.root, path)
            real = os.path.realpath(full)
            found = os.path.lexists(full) and (real == self.real or real.startswith(self.real + os.sep))
            self._seen[path] = found
        return found


def _epoch(stamp: str) -> int | None:
    try:
        return int(from_iso(stamp).timestamp())
    except ValueError:
        return None


def _follow(
    first: git.Removal, by_old: dict[str, list[git.Removal]], tree: _Tree
) -> tuple[str, str | None, str | None]:
    """(kind, commit, new path) for a path removed by `first`, following renames to where it lives now."""
    event = first
    for _ in range(MAX_CHAIN):
        if event.new is None:
            return "deleted", event.commit, None
        new = git.safe_path(event.new)
        if new is not None and tree.has(new):
            return "renamed", event.commit, new
        later = [e for e in by_old.get(event.new, []) if e.order < event.order]  # newest first
        if not later:
            return "deleted", None, None  # renamed to a path that is gone with no commit saying so
        event = later[-1]  # the first removal after this one
    return "deleted", event.commit, None


def check(db: Database, root: Path, *, progress: Callable[[str], None] | None = None) -> CheckOutcome:
    """Check every live memory naming paths or symbols against `root`'s working tree and git history, write the
    marks and clear those whose subject is back, and record the run. GitError without a usable repository."""
    started = now_iso()
    head = git.head(root)
    candidates: list[Candidate] = [c for batch in db.stale_candidates() for c in batch]
    if progress and candidates:
        progress(f"checking {len(candidates)} memories that name paths or symbols")
    tree = _Tree(root)
    commit_times = git.commits_known(root, (c.commit for c in candidates if c.commit))

    missing: dict[int, list[str]] = {}
    for cand in candidates:
        paths = [p for name, kind in cand.names if kind == "file" and (p := git.safe_path(name)) is not None]
        gone = [p for p in dict.fromkeys(paths) if not tree.has(p)]
        if gone:
            missing[cand.pk] = gone
    by_pk = {c.pk: c for c in candidates}
    pairs = sorted(
        {(by_pk[pk].commit or "", p) for pk, ps in missing.items() for p in ps if by_pk[pk].commit in commit_times}
    )
    existed = dict(zip(pairs, git.exist_at(root, pairs), strict=True))

    by_old: dict[str, list[git.Removal]] = defaultdict(list)
    if missing:
        dated = all(by_pk[pk].commit in commit_times for pk in missing)
        oldest = min((commit_times[by_pk[pk].commit or ""] for pk in missing), default=None) if dated else None
        since = [s for s, t in commit_times.items() if t == oldest] if oldest is not None else []
        for event in git.removals(root, since[:1]):
            by_old[event.old].append(event)

    symbols: dict[int, list[str]] = {}
    for cand in candidates:
        if cand.commit in commit_times:
            names = [s for name, kind in cand.names if kind == "identifier" and (s := git.safe_symbol(name))]
            if names:
                symbols[cand.pk] = list(dict.fromkeys(names))
    present_now = git.symbols_in(root, {s for names in symbols.values() for s in names})
    absent_by_commit: dict[str, set[str]] = defaultdict(set)
    for pk, names in symbols.items():
        absent_by_commit[by_pk[pk].commit or ""].update(s for s in names if s not in present_now)
    present_then = {sha: git.symbols_in(root, names, sha) for sha, names in absent_by_commit.items() if names}

    marked_at = now_iso()
    previous = db.stale_marks([c.pk for c in candidates])
    outcome = CheckOutcome(head, len(candidates))
    writes: list[tuple[int, StaleMark]] = []
    clears: list[tuple[int, str]] = []
    for cand in candidates:
        marks: list[StaleMark] = []
        for path in missing.get(cand.pk, []):
            if cand.commit in commit_times:
                if not existed.get((cand.commit or "", path)):
                    continue  # never in the memory's commit: not a file of this project then
                events = by_old.get(path, [])
            else:
                written = _epoch(cand.created_at)
                events = [e for e in by_old.get(path, []) if written is not None and e.time >= written]
                if not events:
                    continue
            if events:
                kind, commit, new_path = _follow(events[0], by_old, tree)
            else:
                kind, commit, new_path = "deleted", None, None  # gone from the working tree, not committed yet
            marks.append(StaleMark(path, kind, commit, new_path, marked_at))
        then = present_then.get(cand.commit or "", set())
        for name in symbols.get(cand.pk, []):
            if name not in present_now and name in then:
                marks.append(StaleMark(name, "symbol_removed", None, None, marked_at))
        before = {m.subject: m for m in previous.get(cand.pk, [])}
        fresh = [m for m in marks if not _same(before.get(m.subject), m)]
        writes += [(cand.pk, m) for m in fresh]
        subjects = {m.subject for m in marks}
        gone = [s for s in before if s not in subjects]
        clears += [(cand.pk, s) for s in gone]
        outcome.cleared += [(cand.id, s) for s in gone]
        if marks:
            kept = [before[m.subject] if _same(before.get(m.subject), m) else m for m in marks]
            outcome.findings.append(Finding(cand.pk, cand.id, kept, bool(fresh)))
    outcome.marked = len(writes)
    ids = {c.pk: c.id for c in candidates}
    run = {
        "started_at": started,
        "finished_at": now_iso(),
        "head": head,
        "checked": len(candidates),
        "marked": len(writes),
        "cleared": len(clears),
        "changes": {
            "marked": [{"id": ids[pk], "subject": m.subject, "kind": m.kind} for pk, m in writes[:1000]],
            "cleared": [{"id": ids[pk], "subject": s} for pk, s in clears[:1000]],
        },
    }
    outcome.run_id = db.apply_staleness(writes, clears, run)
    return outcome


def _same(old: StaleMark | None, new: StaleMark) -> bool:
    return old is not None and (old.kind, old.commit, old.new_path) == (new.kind, new.commit, new.new_path)


def suggested_text(text: str, marks: list[StaleMark]) -> str | None:
    """The memory's text with each renamed path replaced by where it lives now (None: no rename it names)."""
    out = text
    for mark in marks:
        if mark.kind != "renamed" or not mark.new_path:
            continue
        pattern = re.compile(r"(?:(?<=\./)|(?<![\w./-]))" + re.escape(mark.subject) + r"(?![\w/-]|\.\w)")
        out = pattern.sub(mark.new_path.replace("\\", "\\\\"), out)  # the new path, taken literally
    return out if out != text else None
