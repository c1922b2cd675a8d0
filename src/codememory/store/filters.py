"""Which memories a query considers (`Filters`: tags, dates, categories, entities, what is archived,
expired or superseded) and the orders a listing can take; the table groups turn them into SQL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from codememory.core.dates import now_iso
from codememory.core.provenance import NEUTRAL_IMPORTANCE
from codememory.store.rows import VALID_MEMORY_SQL

# Importance and creation date sort as ranking reads them: a memory not written here by its content's merit only
# (neutral importance, no date after its arrival: store/memories.py), and after one written here on a tie.
SORT_COLUMNS = {
    "created": "(CASE WHEN m.origin = 'local' OR m.origin_at IS NULL OR m.created_at <= m.origin_at "
    "THEN m.created_at ELSE m.origin_at END)",
    "updated": "m.updated_at",
    "expires": "m.expires_at",
    "importance": f"(CASE WHEN m.origin = 'local' THEN m.importance ELSE {NEUTRAL_IMPORTANCE} END)",
    "accessed": "m.last_accessed_at",
    "content": "m.text COLLATE NOCASE",
}
SORT_TIE = {"created": "(m.origin = 'local')", "importance": "(m.origin = 'local')"}


@dataclass
class Filters:
    """Restrictions shared by search, list and count. Times are canonical ISO strings."""

    now: str = field(default_factory=now_iso)
    tags_all: list[str] = field(default_factory=list)
    tags_any: list[str] = field(default_factory=list)
    after: str | None = None
    before: str | None = None
    entered_by: str | None = None
    categories: list[str] = field(default_factory=list)
    include_expired: bool = False
    include_archived: bool = False
    include_superseded: bool = False
    entities: list[str] = field(default_factory=list)
    # The user's review of untrusted memories (core/provenance.py): rejected ones are left out unless included;
    # `injectable` keeps only what may enter a block put in an agent's context unasked (no pending, no rejected);
    # `review` only those in that state; `origins` only those origins.
    include_rejected: bool = False
    injectable: bool = False
    review: str | None = None
    origins: list[str] = field(default_factory=list)

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = [VALID_MEMORY_SQL]  # a row the mapper would skip is never a candidate
        params: list[Any] = []
        if not self.include_archived:
            clauses.append("m.archived = 0")
        if not self.include_superseded:
            clauses.append("m.superseded_by IS NULL")
        if not self.include_expired:
            clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
            params.append(self.now)
        if self.injectable:
            clauses.append("(m.review IS NULL OR m.review = 'accepted')")
        elif not self.include_rejected and self.review != "rejected":
            clauses.append("(m.review IS NULL OR m.review <> 'rejected')")
        if self.review:
            clauses.append("m.review = ?")
            params.append(self.review)
        if self.origins:
            clauses.append(f"m.origin IN ({','.join('?' * len(self.origins))})")
            params.extend(self.origins)
        if self.after:
            clauses.append("m.created_at >= ?")
            params.append(self.after)
        if self.before:
            clauses.append("m.created_at < ?")
            params.append(self.before)
        if self.entered_by:
            clauses.append("m.entered_by = ?")
            params.append(self.entered_by)
        if self.categories:
            clauses.append(f"m.category IN ({','.join('?' * len(self.categories))})")
            params.extend(self.categories)
        if self.tags_all:
            clauses.append(
                "m.pk IN (SELECT mt.memory_pk FROM memory_tags mt JOIN tags t ON t.id = mt.tag_id "
                f"WHERE t.name IN ({','.join('?' * len(self.tags_all))}) "
                "GROUP BY mt.memory_pk HAVING COUNT(*) = ?)"
            )
            params.extend(self.tags_all)
            params.append(len(self.tags_all))
        if self.entities:
            clauses.append(
                "EXISTS (SELECT 1 FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
                f"WHERE me.memory_pk = m.pk AND e.name IN ({','.join('?' * len(self.entities))}))"
            )
            params.extend(self.entities)
        if self.tags_any:
            clauses.append(
                "EXISTS (SELECT 1 FROM memory_tags mt JOIN tags t ON t.id = mt.tag_id "
                f"WHERE mt.memory_pk = m.pk AND t.name IN ({','.join('?' * len(self.tags_any))}))"
            )
            params.extend(self.tags_any)
        return (" AND ".join(clauses) or "1"), params
