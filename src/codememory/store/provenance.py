"""The provenance table group: each memory's origin columns (origin, origin_by, origin_at) and the user's review of
untrusted ones (review), and the facts about the store file itself (store_meta). What they mean is
core/provenance.py; deciding them is for the layers above (service/provenance_check.py, operations/review.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from codememory.core.provenance import REVIEW_STATES, Provenance, stored_provenance
from codememory.store.connection import chunks
from codememory.store.memories import MemoryRows
from codememory.store.rows import VALID_MEMORY_SQL, is_memory_id
from codememory.store.salvage import open_read_only, real_table


class ProvenanceRows(MemoryRows):
    # ------------------------------------------------------------------ the store file's own facts
    def meta(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM store_meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row and isinstance(row[0], str) else None

    def set_meta(self, name: str, value: str | None) -> None:
        with self.transaction():
            self._set_meta(name, value)

    def _set_meta(self, name: str, value: str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM store_meta WHERE name = ?", (name,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO store_meta(name, value) VALUES (?, ?)", (name, value))

    # ------------------------------------------------------------------ origins
    def set_provenance(self, rows: Sequence[tuple[int, Provenance]]) -> None:
        with self.transaction():
            self._set_provenance(rows)

    def _set_provenance(self, rows: Sequence[tuple[int, Provenance]]) -> None:
        self.conn.executemany(
            "UPDATE memories SET origin = ?, origin_by = ?, origin_at = ?, review = ? WHERE pk = ?",
            [(p.origin, p.by, p.at, p.review, pk) for pk, p in rows],
        )

    def mark_committed(self, ids: Collection[str] | None, now: str, pending: Sequence[int], home: str | None) -> int:
        """The memories of this file with these ids (None: every one) become `committed` (they arrived with the
        repository, whatever their rows say), those in `pending` wait for review, and the file is recorded as this
        machine's now (`home`, unless None), in one transaction. Returns how many memories were marked."""
        with self.transaction():
            if ids is None:
                count = self.conn.execute(
                    "UPDATE memories SET origin = 'committed', origin_by = NULL, origin_at = ?, review = NULL", (now,)
                ).rowcount
            else:
                count = 0
                for chunk in chunks(list(ids)):
                    count += self.conn.execute(
                        "UPDATE memories SET origin = 'committed', origin_by = NULL, origin_at = ?, review = NULL "
                        f"WHERE id IN ({','.join('?' * len(chunk))})",
                        (now, *chunk),
                    ).rowcount
            for chunk in chunks(list(pending)):
                self.conn.execute(
                    f"UPDATE memories SET review = 'pending' WHERE pk IN ({','.join('?' * len(chunk))})", chunk
                )
            if home is not None:
                self._set_meta("home", home)
            self._set_meta("shared_origins", None)  # whatever it said: these rows are all committed now
        return int(count)

    def texts(self, where: str = "1", params: Sequence[object] = ()) -> Iterator[tuple[int, str]]:
        """(pk, text) of the memories matching `where` (on `m`), in batches."""
        last = 0
        while True:
            rows = self.conn.execute(
                f"SELECT m.pk, m.text FROM memories m WHERE m.pk > ? AND ({where}) AND typeof(m.text) = 'text' "
                "ORDER BY m.pk LIMIT 1000",
                (last, *params),
            ).fetchall()
            if not rows:
                return
            yield from ((int(pk), str(text)) for pk, text in rows)
            last = rows[-1][0]

    def provenance_of(self, ids: Sequence[str]) -> dict[str, tuple[int, str, Provenance]]:
        """id -> (pk, origin columns as stored) of these memories."""
        out: dict[str, tuple[int, str, Provenance]] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            for pk, mid, text, origin, by, at, review in self.conn.execute(
                "SELECT pk, id, text, origin, origin_by, origin_at, review FROM memories "
                f"WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[mid] = (pk, text if isinstance(text, str) else "", stored_provenance(origin, by, at, review))
        return out

    # ------------------------------------------------------------------ review
    def set_review(self, ids: Sequence[str], state: str | None) -> list[str]:
        """Record the user's answer (`state`: accepted, rejected, or None to ask again) for these memories; returns
        the ids that exist and were not written here (a memory written here has nothing to review)."""
        if state is not None and state not in REVIEW_STATES:
            raise ValueError(f"unknown review state {state!r}")
        done: list[str] = []
        with self.transaction():
            for chunk in chunks(list(dict.fromkeys(ids))):
                marks = ",".join("?" * len(chunk))
                done += [
                    r[0]
                    for r in self.conn.execute(
                        f"SELECT id FROM memories WHERE id IN ({marks}) AND origin <> 'local'", chunk
                    )
                ]
                self.conn.execute(
                    f"UPDATE memories SET review = ? WHERE id IN ({marks}) AND origin <> 'local'", (state, *chunk)
                )
        return [i for i in dict.fromkeys(ids) if i in set(done)]

    def review_counts(self) -> dict[str, int]:
        """How many valid memories wait for review, were accepted or rejected."""
        rows = self.conn.execute(
            f"SELECT m.review, count(*) FROM memories m WHERE m.review IS NOT NULL AND {VALID_MEMORY_SQL} "
            "GROUP BY m.review"
        ).fetchall()
        counts = dict.fromkeys(REVIEW_STATES, 0)
        counts.update({r: int(n) for r, n in rows if r in counts})
        return counts

    def origin_counts(self) -> dict[str, int]:
        rows = self.conn.execute(
            f"SELECT m.origin, count(*) FROM memories m WHERE {VALID_MEMORY_SQL} GROUP BY m.origin"
        ).fetchall()
        return {str(o): int(n) for o, n in rows}


def memory_ids_in(path: Path) -> set[str] | None:
    """The memory ids another store file holds (a copy of one from git), read as repair reads a foreign file:
    read-only, nothing it defines runs, only a real `memories` table; None when it cannot be read."""
    try:
        src = open_read_only(path)
    except sqlite3.Error:
        return None
    try:
        objects = {
            str(n): (str(t), str(sql or ""))
            for n, t, sql in src.execute("SELECT name, type, sql FROM sqlite_master").fetchall()
        }
        if real_table(objects, "memories") is not None:
            return None
        return {str(r[0]) for r in src.execute("SELECT id FROM memories") if is_memory_id(r[0])}
    except (sqlite3.Error, ValueError):
        return None
    finally:
        src.close()
