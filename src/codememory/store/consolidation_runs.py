"""SQL for consolidation (table `consolidation_runs`, migration 8, and the writes a run makes to memories, links and
entities). The only place that table is spoken to; codememory.operations.consolidation holds the rules (what to
squash, link, archive or merge) and builds the changes this module applies, each run in one transaction with its
record, so a run is either wholly applied and recorded (and can be undone) or not at all.

`changes` is a JSON list of plain objects written by the operation layer; this module stores and returns it as
data and never acts on a row's JSON by itself: undo re-reads it through the operation layer's checks (a committed
store is untrusted)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codememory.core.model import Memory
from codememory.errors import InvalidInput
from codememory.store.connection import BUSY_TIMEOUT_S, chunks
from codememory.store.database import Database
from codememory.store.failures import store_errors
from codememory.store.filters import Filters
from codememory.store.rows import is_label, is_stamp

MAX_RUNS_LISTED = 200

CONSOLIDATION_AGENT = "consolidation"  # entered_by of the memories a squash writes (what `stats` counts)


@dataclass(frozen=True)
class RunRow:
    id: int
    started_at: str
    finished_at: str
    trigger: str
    method: str
    status: str
    changes: list[Any]
    summary: dict[str, Any]
    undone_at: str | None


def _json(raw: object, kind: type) -> Any:
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):  # untrusted: a committed memory.db may hold anything
        value = None
    return value if isinstance(value, kind) else kind()


def _run(row: tuple[Any, ...]) -> RunRow | None:
    pk, started, finished, trigger, method, status, changes, summary, undone = row
    if not (isinstance(pk, int) and is_stamp(started) and is_stamp(finished) and is_label(method)):
        return None
    if trigger not in ("command", "schedule") or status not in ("applied", "undone"):
        return None
    return RunRow(
        pk,
        started,
        finished,
        trigger,
        method,
        status,
        _json(changes, list),
        _json(summary, dict),
        undone if is_stamp(undone) else None,
    )


_COLUMNS = "id, started_at, finished_at, trigger, method, status, changes, summary, undone_at"


@dataclass
class Squash:
    """One consolidated memory to write (`memory`, with its entities and links to memories outside the group)
    and the originals it replaces (archived, marked superseded by it, linked from it with `supersedes`)."""

    memory: Memory
    originals: list[int]  # row keys
    entities: list[tuple[str, str]]
    links: list[tuple[int, str, str, float | None]]  # (other pk, 'out'|'in', link type, score)
    vector_from: int | None = None  # an original whose text it keeps: its vectors are copied


@store_errors(BUSY_TIMEOUT_S)
class ConsolidationTables:
    """Reads for planning a run, the writes that apply and undo one, and the run records."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    # ------------------------------------------------------------------ reads for planning
    def live(self, filters: Filters) -> list[tuple[int, Memory]]:
        """Every memory the filters let through, oldest first, with its row key."""
        where, params = filters.where()
        pks = [r[0] for r in self.conn.execute(f"SELECT m.pk FROM memories m WHERE {where} ORDER BY m.pk", params)]
        found = self.db.get_by_pks(pks)
        return [(pk, found[pk]) for pk in pks if pk in found]

    def linked_pairs(self, pks: Sequence[int], types: Sequence[str]) -> set[tuple[int, int]]:
        """Pairs (low pk, high pk) among `pks` already linked with one of `types`, either direction."""
        wanted = set(pks)
        out: set[tuple[int, int]] = set()
        rows = self.conn.execute(
            f"SELECT memory_pk, linked_pk FROM memory_links WHERE link_type IN ({','.join('?' * len(types))})",
            list(types),
        )
        for a, b in rows:
            if a in wanted and b in wanted:
                out.add((min(a, b), max(a, b)))
        return out

    def links_touching(self, pks: Sequence[int]) -> list[tuple[int, int, str, float | None]]:
        """(from pk, to pk, type, score) of every link that starts or ends at one of `pks`."""
        out: list[tuple[int, int, str, float | None]] = []
        seen: set[tuple[int, int]] = set()
        for chunk in chunks(list(pks)):
            marks = ",".join("?" * len(chunk))
            for a, b, kind, score in self.conn.execute(
                "SELECT memory_pk, linked_pk, link_type, score FROM memory_links "
                f"WHERE memory_pk IN ({marks}) OR linked_pk IN ({marks})",
                (*chunk, *chunk),
            ):
                if (a, b) not in seen:
                    seen.add((a, b))
                    out.append((a, b, kind, score))
        return out

    def link_type(self, a: int, b: int) -> str | None:
        row = self.conn.execute(
            "SELECT link_type FROM memory_links WHERE memory_pk = ? AND linked_pk = ?", (a, b)
        ).fetchone()
        return str(row[0]) if row else None

    def shown_since(self, since: str) -> set[str]:
        """Ids of the memories the injection ledger says were put in front of a model since `since`."""
        rows = self.conn.execute(
            "SELECT DISTINCT json_extract(j.value, '$.id') FROM injections i, json_each(i.memories) j "
            "WHERE i.at >= ? AND json_valid(i.memories) AND json_type(j.value) = 'object'",
            (since,),
        )
        return {r[0] for r in rows if isinstance(r[0], str)}

    def decay_candidates(self, filters: Filters, before: str, max_importance: float) -> list[tuple[int, Memory]]:
        """Live memories of at most `max_importance` neither created nor read since `before`."""
        where, params = filters.where()
        pks = [
            r[0]
            for r in self.conn.execute(
                f"SELECT m.pk FROM memories m WHERE {where} AND m.importance <= ? "
                "AND m.created_at < ? AND (m.last_accessed_at IS NULL OR m.last_accessed_at < ?) ORDER BY m.pk",
                (*params, max_importance, before, before),
            )
        ]
        found = self.db.get_by_pks(pks)
        return [(pk, found[pk]) for pk in pks if pk in found]

    def entity_table(self) -> list[tuple[int, str, str, int]]:
        """(entity id, name, type, memories naming it) for every entity."""
        rows = self.conn.execute(
            "SELECT e.id, e.name, e.type, COUNT(me.memory_pk) FROM entities e "
            "LEFT JOIN memory_entities me ON me.entity_id = e.id GROUP BY e.id ORDER BY e.id"
        ).fetchall()
        return [(i, n, t, c) for i, n, t, c in rows if is_label(n) and is_label(t)]

    def memories_of_entity(self, entity_id: int) -> list[int]:
        return [
            r[0] for r in self.conn.execute("SELECT memory_pk FROM memory_entities WHERE entity_id = ?", (entity_id,))
        ]

    # ------------------------------------------------------------------ runs
    def latest_run_id(self) -> int:
        return int(self.conn.execute("SELECT COALESCE(MAX(id), 0) FROM consolidation_runs").fetchone()[0])

    def schedule_reference(self) -> str | None:
        """When the schedule counts from: the last run, else the store's creation (its first migration), so a
        new store is first consolidated one interval after `init`, not the moment a daemon sees it."""
        row = self.conn.execute(
            "SELECT COALESCE((SELECT MAX(started_at) FROM consolidation_runs), "
            "(SELECT MIN(applied_at) FROM schema_migrations))"
        ).fetchone()
        return row[0] if row and is_stamp(row[0]) else None

    def runs(self, limit: int = MAX_RUNS_LISTED) -> list[RunRow]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM consolidation_runs ORDER BY id DESC LIMIT ?", (limit,))
        return [r for r in (_run(row) for row in rows) if r is not None]

    def run(self, run_id: int) -> RunRow | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM consolidation_runs WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def counts(self) -> tuple[int, str | None, int, list[dict[str, Any]]]:
        """(runs recorded, the last one's start, live memories a squash wrote, summaries of applied runs)."""
        n, last = self.conn.execute("SELECT COUNT(*), MAX(started_at) FROM consolidation_runs").fetchone()
        live = self.conn.execute(
            "SELECT COUNT(*) FROM memories WHERE entered_by = ? AND archived = 0 AND superseded_by IS NULL",
            (CONSOLIDATION_AGENT,),
        ).fetchone()[0]
        summaries = [
            _json(raw, dict)
            for (raw,) in self.conn.execute("SELECT summary FROM consolidation_runs WHERE status = 'applied'")
        ]
        return int(n), last if is_stamp(last) else None, int(live), summaries

    # ------------------------------------------------------------------ writes
    def apply(
        self,
        *,
        started_at: str,
        now: str,
        trigger: str,
        method: str,
        squashes: Sequence[Squash],
        links: Sequence[tuple[int, int, str, float | None, bool]],
        archive: Sequence[int],
        entity_merges: Sequence[tuple[int, str, str]],
        changes: list[dict[str, Any]],
        summary: dict[str, Any],
        planned_after: int,
    ) -> tuple[int, dict[int, str], list[dict[str, Any]]]:
        """Apply a planned run and record it, in one transaction. `links`: (from pk, to pk, type, score, retire
        the target: mark it superseded by the source); a negative pk -1-i stands for the new memory of squash i.
        `archive`: row keys to archive (decay). `entity_merges`: (entity id, into name, into type). Returns the run
        id, the ids given to the squashes' new memories by position, and per entity merge what undo needs
        ({from, type, renamed, moved, shared}). `planned_after`: the latest run when the plan was made; another run
        recorded since (the daemon's and a command's at once) refuses this one: its plan may be out of date."""
        new_ids: dict[int, str] = {}
        merged: list[dict[str, Any]] = []
        db = self.db
        with db.transaction() as c:
            if self.latest_run_id() != planned_after:
                raise InvalidInput("another consolidation run finished while this one was planned: run it again")
            for i, squash in enumerate(squashes):
                db._insert(squash.memory)
                pk = db.pk_of(squash.memory.id)
                assert pk is not None
                new_ids[i] = squash.memory.id
                self._write_entities(pk, squash.entities)
                rows = []
                for other, direction, kind, score in squash.links:
                    rows.append((pk, other, kind, score) if direction == "out" else (other, pk, kind, score))
                rows += [(pk, o, "supersedes", None) for o in squash.originals]
                c.executemany(
                    "INSERT OR REPLACE INTO memory_links(memory_pk, linked_pk, link_type, score, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(a, b, t, s, now) for a, b, t, s in rows if a != b],
                )
                for chunk in chunks(squash.originals):
                    c.execute(
                        f"UPDATE memories SET archived = 1, superseded_by = ?, updated_at = ? "
                        f"WHERE pk IN ({','.join('?' * len(chunk))})",
                        (squash.memory.id, now, *chunk),
                    )
                if squash.vector_from is not None:
                    db.copy_embeddings(squash.vector_from, pk)
            new_pks = {i: db.pk_of(mid) for i, mid in new_ids.items()}
            resolved = [
                (new_pks.get(-1 - a) if a < 0 else a, new_pks.get(-1 - b) if b < 0 else b, kind, score, retire)
                for a, b, kind, score, retire in links
            ]
            ids = db.ids_of([p for a, b, *_ in resolved for p in (a, b) if p is not None])
            for a, b, kind, score, retire in resolved:
                if a is None or b is None:
                    continue
                c.execute(
                    "INSERT OR REPLACE INTO memory_links(memory_pk, linked_pk, link_type, score, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (a, b, kind, score, now),
                )
                if retire and a in ids:
                    c.execute("UPDATE memories SET superseded_by = ?, updated_at = ? WHERE pk = ?", (ids[a], now, b))
            for chunk in chunks(list(archive)):
                c.execute(
                    f"UPDATE memories SET archived = 1, updated_at = ? WHERE pk IN ({','.join('?' * len(chunk))})",
                    (now, *chunk),
                )
            for entity_id, into, into_type in entity_merges:
                merged.append(self._merge_entity(entity_id, into, into_type))
            for change, undo in zip((ch for ch in changes if ch.get("kind") == "entity"), merged, strict=False):
                change.update(undo)
            for change in changes:
                if change.get("kind") == "squash" and isinstance(change.get("slot"), int):
                    change["memory"] = new_ids.get(change.pop("slot"))
                for end in ("from", "to"):
                    slot = change.pop(f"{end}_slot", None)
                    if isinstance(slot, int):
                        change[end] = new_ids.get(slot)
            cur = c.execute(
                f"INSERT INTO consolidation_runs({_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, 'applied', ?, ?, NULL)",
                (
                    started_at,
                    now,
                    trigger,
                    method,
                    json.dumps(changes, ensure_ascii=False, separators=(",", ":")),
                    json.dumps(summary, separators=(",", ":")),
                ),
            )
            run_id = int(cur.lastrowid or 0)
        return run_id, new_ids, merged

    def _write_entities(self, pk: int, entities: Sequence[tuple[str, str]]) -> None:
        if not entities:
            return
        self.conn.executemany(
            "INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", list(entities)
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) SELECT ?, id FROM entities WHERE name = ?",
            [(pk, name) for name, _ in entities],
        )

    def _merge_entity(self, entity_id: int, into: str, into_type: str) -> dict[str, Any]:
        c = self.conn
        row = c.execute("SELECT name, type FROM entities WHERE id = ?", (entity_id,)).fetchone()
        if row is None:
            return {}
        name, typ = row
        target = c.execute("SELECT id FROM entities WHERE name = ?", (into,)).fetchone()
        members = self.memories_of_entity(entity_id)
        ids = self.db.ids_of(members)
        if target is None:  # the canonical spelling is not in the store yet: the entity is renamed
            c.execute("UPDATE entities SET name = ?, type = ? WHERE id = ?", (into, into_type, entity_id))
            return {"from": name, "type": typ, "renamed": True, "moved": [ids[p] for p in members if p in ids]}
        target_id = target[0]
        had = {r[0] for r in c.execute("SELECT memory_pk FROM memory_entities WHERE entity_id = ?", (target_id,))}
        c.executemany(
            "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) VALUES (?, ?)",
            [(p, target_id) for p in members],
        )
        c.execute("DELETE FROM memory_entities WHERE entity_id = ?", (entity_id,))
        c.execute("DELETE FROM entities WHERE id = ?", (entity_id,))
        return {
            "from": name,
            "type": typ,
            "renamed": False,
            "moved": [ids[p] for p in members if p in ids and p not in had],
            "shared": [ids[p] for p in members if p in ids and p in had],
        }

    def undo(
        self,
        run_id: int,
        now: str,
        *,
        unarchive: Sequence[str],
        clear_superseded: Sequence[tuple[str, str]],
        archive: Sequence[str],
        unlink: Sequence[tuple[str, str, str | None]],
        entities: Sequence[dict[str, Any]],
    ) -> None:
        """Reverse a run in one transaction and mark it undone. `clear_superseded`: (memory id, the id it must
        still be superseded by). `unlink`: (from id, to id, the link type to put back or None to delete)."""
        with self.db.transaction() as c:
            for chunk in chunks(list(unarchive)):
                c.execute(
                    f"UPDATE memories SET archived = 0, updated_at = ? WHERE id IN ({','.join('?' * len(chunk))})",
                    (now, *chunk),
                )
            c.executemany(
                "UPDATE memories SET superseded_by = NULL, updated_at = ? WHERE id = ? AND superseded_by = ?",
                [(now, mid, by) for mid, by in clear_superseded],
            )
            for chunk in chunks(list(archive)):
                c.execute(
                    f"UPDATE memories SET archived = 1, updated_at = ? WHERE id IN ({','.join('?' * len(chunk))})",
                    (now, *chunk),
                )
            for a, b, previous in unlink:
                pks = dict(self.db.get_pk_map([a, b]))
                if a not in pks or b not in pks:
                    continue
                if previous is None:
                    c.execute("DELETE FROM memory_links WHERE memory_pk = ? AND linked_pk = ?", (pks[a], pks[b]))
                else:
                    c.execute(
                        "UPDATE memory_links SET link_type = ? WHERE memory_pk = ? AND linked_pk = ?",
                        (previous, pks[a], pks[b]),
                    )
            for merge in entities:
                self._unmerge_entity(merge)
            c.execute("UPDATE consolidation_runs SET status = 'undone', undone_at = ? WHERE id = ?", (now, run_id))

    def _unmerge_entity(self, merge: dict[str, Any]) -> None:
        c = self.conn
        old, typ, into = merge["from"], merge["type"], merge["into"]
        target = c.execute("SELECT id FROM entities WHERE name = ?", (into,)).fetchone()
        if target is None:
            return
        moved = dict(self.db.get_pk_map(merge.get("moved", [])))
        shared = dict(self.db.get_pk_map(merge.get("shared", [])))
        if merge.get("renamed"):
            if c.execute("SELECT 1 FROM entities WHERE name = ?", (old,)).fetchone() is None:
                c.execute("UPDATE entities SET name = ?, type = ? WHERE id = ?", (old, typ, target[0]))
            return
        c.execute("INSERT INTO entities(name, type) VALUES (?, ?) ON CONFLICT(name) DO NOTHING", (old, typ))
        old_id = c.execute("SELECT id FROM entities WHERE name = ?", (old,)).fetchone()[0]
        c.executemany(
            "INSERT OR IGNORE INTO memory_entities(memory_pk, entity_id) VALUES (?, ?)",
            [(p, old_id) for p in (*moved.values(), *shared.values())],
        )
        c.executemany(
            "DELETE FROM memory_entities WHERE memory_pk = ? AND entity_id = ?",
            [(p, target[0]) for p in moved.values()],
        )
