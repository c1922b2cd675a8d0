"""Counts over the whole store for `codememory stats`: memories by state, category, agent and tag, and the
sizes of the other table groups. Stored labels no codememory writes are counted as '(invalid)'."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from codememory.core.model import CATEGORIES
from codememory.store.filters import Filters
from codememory.store.rows import VALID_MEMORY_SQL, is_label, is_tag
from codememory.store.staleness import StaleRows


class StoreStats(StaleRows):
    """Aggregate reads; nothing here writes."""

    def stats(self, now: str) -> dict[str, Any]:
        c = self.conn
        total, archived, expired = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(archived), 0), "
            "COALESCE(SUM(expires_at IS NOT NULL AND expires_at <= ?), 0) FROM memories",
            (now,),
        ).fetchone()
        oldest, newest = c.execute(
            f"SELECT MIN(created_at), MAX(created_at) FROM memories m WHERE {VALID_MEMORY_SQL}"
        ).fetchone()
        live = Filters(now=now)
        where, params = live.where()
        live_count = c.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0]
        return {
            "total": total,
            "live": live_count,
            "archived": archived,
            "expired": expired,
            "oldest": oldest,
            "newest": newest,
            "categories": _known(
                c.execute("SELECT category, COUNT(*) FROM memories GROUP BY category ORDER BY 2 DESC"), CATEGORIES
            ),
            "tag_count": c.execute("SELECT COUNT(*) FROM tags").fetchone()[0],
            "entity_count": c.execute("SELECT COUNT(*) FROM entities").fetchone()[0],
            "link_count": c.execute("SELECT COUNT(*) FROM memory_links").fetchone()[0],
            "superseded": c.execute("SELECT COUNT(*) FROM memories WHERE superseded_by IS NOT NULL").fetchone()[0],
            "stale": self.stale_count(now),
            "stale_checks": c.execute("SELECT COUNT(*) FROM staleness_runs").fetchone()[0],
            "embeddings": _known(c.execute("SELECT model, COUNT(*) FROM embeddings GROUP BY model ORDER BY 2 DESC")),
            "schema_version": self.schema_version(),
        }

    def tag_frequencies(self) -> dict[str, int]:
        return {
            name: n
            for name, n in self.conn.execute(
                "SELECT t.name, COUNT(*) FROM tags t JOIN memory_tags mt ON mt.tag_id = t.id "
                "GROUP BY t.id ORDER BY 2 DESC, t.name"
            )
            if is_tag(name)
        }

    def agent_frequencies(self) -> dict[str, int]:
        return _known(
            ("(unknown)" if name is None else name, n)
            for name, n in self.conn.execute(
                "SELECT entered_by, COUNT(*) FROM memories GROUP BY entered_by ORDER BY 2 DESC, entered_by"
            )
        )


def _known(pairs: Iterable[tuple[Any, Any]], allowed: Sequence[str] | None = None) -> dict[str, int]:
    """Counts by a stored label; labels no codememory writes (control characters, not text, too long, not
    in `allowed`) are counted together as '(invalid)' instead of being shown."""
    out: dict[str, int] = {}
    for label, n in pairs:
        good = is_label(label) and (allowed is None or label in allowed)
        key = label if good else "(invalid)"
        out[key] = out.get(key, 0) + int(n)
    return out
