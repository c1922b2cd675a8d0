"""The links table group: typed links between memories (refines, contextualizes, supersedes, ...) and the
superseded marks they imply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codememory.core.model import LINK_TYPES
from codememory.store.connection import StoreConnection, chunks
from codememory.store.rows import escape, is_memory_id, warn


class LinkRows(StoreConnection):
    """Writes and reads of memory links; a stored link no codememory writes is skipped (warned)."""

    def add_links(self, rows: Sequence[tuple[int, int, str, float | None]], now: str) -> None:
        """rows: (from pk, to pk, link type, score). An existing link between the pair is replaced."""
        if not rows:
            return
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO memory_links(memory_pk, linked_pk, link_type, score, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(a, b, t, s, now) for a, b, t, s in rows],
            )

    def supersede(self, old_pks: Sequence[int], new_id: str, now: str) -> None:
        with self.transaction():
            for chunk in chunks(list(old_pks)):
                self.conn.execute(
                    f"UPDATE memories SET superseded_by = ?, updated_at = ? WHERE pk IN ({','.join('?' * len(chunk))})",
                    (new_id, now, *chunk),
                )

    def outgoing_links(self) -> dict[str, list[dict[str, Any]]]:
        """Every link, by the id of the memory it starts from: {id: [{to, type, score}]} (export)."""
        out: dict[str, list[dict[str, Any]]] = {}
        rows = self.conn.execute(
            "SELECT a.id, b.id, l.link_type, l.score FROM memory_links l "
            "JOIN memories a ON a.pk = l.memory_pk JOIN memories b ON b.pk = l.linked_pk ORDER BY a.pk, b.pk"
        )
        for from_id, to_id, kind, score in rows:
            if _valid_link(from_id, to_id, kind, score):
                out.setdefault(from_id, []).append({"to": to_id, "type": kind, "score": score})
        return out

    def links_of(self, pk: int) -> list[tuple[str, str, str, float | None]]:
        """(direction 'out'|'in', other memory id, link type, score) for one memory."""
        rows = self.conn.execute(
            "SELECT 'out', m.id, l.link_type, l.score FROM memory_links l JOIN memories m ON m.pk = l.linked_pk "
            "WHERE l.memory_pk = ? UNION ALL "
            "SELECT 'in', m.id, l.link_type, l.score FROM memory_links l JOIN memories m ON m.pk = l.memory_pk "
            "WHERE l.linked_pk = ? ORDER BY 1 DESC, 4 DESC",
            (pk, pk),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows if _valid_link(r[1], r[1], r[2], r[3])]


def _valid_link(from_id: object, to_id: object, kind: object, score: object) -> bool:
    ok = is_memory_id(from_id) and is_memory_id(to_id) and kind in LINK_TYPES
    if not ok or not (score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))):
        warn(f"skipped a link of memory {escape(from_id)}")
        return False
    return True
