"""The staleness table group: the commit each memory was written at, the marks of memories whose code is gone
(memory_staleness) and the record of each check (staleness_runs). The check itself is service/staleness.py."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from codememory.core.lazy_pattern import lazy_pattern
from codememory.store.connection import StoreConnection, chunks
from codememory.store.filters import Filters
from codememory.store.rows import MAX_LABEL, is_label, is_memory_id, is_stamp

STALE_KINDS = ("deleted", "renamed", "symbol_removed")
# What the check looks at: the entity types text.entities gives paths and code names.
CHECKED_TYPES = ("file", "identifier")
_SHA_RE = lazy_pattern(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_sha(value: object) -> bool:
    return isinstance(value, str) and _SHA_RE.fullmatch(value) is not None


@dataclass(frozen=True)
class StaleMark:
    """Why a memory may be stale: `subject` (a path or symbol it names) was deleted, renamed to `new_path`, or
    is no longer in the code; `commit` is where that happened (None: not committed yet, or a symbol)."""

    subject: str
    kind: str
    commit: str | None
    new_path: str | None
    marked_at: str


@dataclass(frozen=True)
class Candidate:
    """A live memory that names paths or symbols, as the check needs it."""

    pk: int
    id: str
    created_at: str
    commit: str | None  # HEAD when it was written (a 40/64-hex SHA), else None
    names: tuple[tuple[str, str], ...]  # (entity name, type): files and identifiers


class StaleRows(StoreConnection):
    """Reads and writes of staleness marks and runs."""

    def set_commit(self, pk: int, sha: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE memories SET git_commit = ? WHERE pk = ?", (sha, pk))

    def commits_of(self, pks: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for chunk in chunks(list(pks)):
            for pk, sha in self.conn.execute(
                f"SELECT pk, git_commit FROM memories WHERE pk IN ({','.join('?' * len(chunk))})", chunk
            ):
                if is_sha(sha):
                    out[pk] = sha
        return out

    def stale_candidates(self, batch: int = 2000) -> Iterator[list[Candidate]]:
        """Live memories naming files or identifiers, in batches (oldest first)."""
        where, params = Filters().where()
        last = 0
        while True:
            rows = self.conn.execute(
                f"SELECT m.pk, m.id, m.created_at, m.git_commit FROM memories m WHERE m.pk > ? AND {where} "
                "AND EXISTS (SELECT 1 FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk = m.pk AND e.type IN {CHECKED_TYPES}) ORDER BY m.pk LIMIT ?",
                (last, *params, batch),
            ).fetchall()
            if not rows:
                return
            names = self._checked_names([r[0] for r in rows])
            yield [
                Candidate(pk, mid, created if is_stamp(created) else "", sha if is_sha(sha) else None, names[pk])
                for pk, mid, created, sha in rows
                if is_memory_id(mid) and names.get(pk)
            ]
            last = rows[-1][0]

    def _checked_names(self, pks: list[int]) -> dict[int, tuple[tuple[str, str], ...]]:
        out: dict[int, list[tuple[str, str]]] = {}
        for chunk in chunks(pks):
            for pk, name, typ in self.conn.execute(
                "SELECT me.memory_pk, e.name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk IN ({','.join('?' * len(chunk))}) AND e.type IN {CHECKED_TYPES} "
                "ORDER BY me.memory_pk, e.id",
                chunk,
            ):
                if is_label(name):
                    out.setdefault(pk, []).append((name, typ))
        return {pk: tuple(v) for pk, v in out.items()}

    def stale_marks(self, pks: Sequence[int] | None = None) -> dict[int, list[StaleMark]]:
        """The marks of these memories (every marked memory when `pks` is None), checked as they are read."""
        out: dict[int, list[StaleMark]] = {}
        select = "SELECT memory_pk, subject, kind, commit_sha, new_path, marked_at FROM memory_staleness"
        if pks is None:
            batches: list[tuple[str, list[Any]]] = [(select + " ORDER BY memory_pk, subject", [])]
        else:
            batches = [
                (f"{select} WHERE memory_pk IN ({','.join('?' * len(c))}) ORDER BY memory_pk, subject", c)
                for c in chunks(list(pks))
            ]
        for sql, params in batches:
            for pk, subject, kind, sha, new_path, marked_at in self.conn.execute(sql, params):
                if kind not in STALE_KINDS or not is_label(subject) or len(subject) > MAX_LABEL:
                    continue
                out.setdefault(pk, []).append(
                    StaleMark(
                        subject,
                        kind,
                        sha if is_sha(sha) else None,
                        new_path if is_label(new_path) and kind == "renamed" else None,
                        marked_at if is_stamp(marked_at) else "",
                    )
                )
        return out

    def apply_staleness(
        self,
        marks: Sequence[tuple[int, StaleMark]],
        clears: Sequence[tuple[int, str]],
        run: dict[str, Any],
    ) -> int:
        """Write new marks, delete cleared ones and record the run, in one transaction; returns the run id."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO memory_staleness(memory_pk, subject, kind, commit_sha, new_path, marked_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(memory_pk, subject) DO UPDATE SET kind = excluded.kind, "
                "commit_sha = excluded.commit_sha, new_path = excluded.new_path, marked_at = excluded.marked_at",
                [(pk, m.subject, m.kind, m.commit, m.new_path, m.marked_at) for pk, m in marks],
            )
            self.conn.executemany(
                "DELETE FROM memory_staleness WHERE memory_pk = ? AND subject = ?", [(pk, s) for pk, s in clears]
            )
            cur = self.conn.execute(
                "INSERT INTO staleness_runs(started_at, finished_at, head, checked, marked, cleared, changes) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    run["started_at"],
                    run["finished_at"],
                    run.get("head"),
                    run["checked"],
                    run["marked"],
                    run["cleared"],
                    json.dumps(run.get("changes", {}), separators=(",", ":")),
                ),
            )
            return int(cur.lastrowid or 0)

    def stale_count(self, now: str) -> int:
        """Live memories with at least one mark."""
        where, params = Filters(now=now).where()
        return int(
            self.conn.execute(
                f"SELECT COUNT(*) FROM memories m WHERE {where} "
                "AND EXISTS (SELECT 1 FROM memory_staleness s WHERE s.memory_pk = m.pk)",
                params,
            ).fetchone()[0]
        )

    def staleness_runs(self, limit: int) -> list[tuple[int, str, str, str | None, int, int, int]]:
        """The newest recorded checks: (id, started_at, finished_at, head, checked, marked, cleared)."""
        rows = self.conn.execute(
            "SELECT id, started_at, finished_at, head, checked, marked, cleared FROM staleness_runs "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [
            (int(r[0]), str(r[1]), str(r[2]), r[3] if is_sha(r[3]) else None, int(r[4]), int(r[5]), int(r[6]))
            for r in rows
        ]

    def staleness_run_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM staleness_runs").fetchone()[0])

    def last_staleness_check(self) -> str | None:
        """When the newest recorded check finished (canonical UTC text), or None."""
        row = self.conn.execute("SELECT MAX(finished_at) FROM staleness_runs").fetchone()
        return row[0] if row and is_stamp(row[0]) else None
