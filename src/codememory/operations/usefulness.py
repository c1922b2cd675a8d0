"""A memory's usefulness as `show`, MCP memory_get, the daemon's /memory/get and the viewer give it: in how many
agent sessions it was shown, used and contradicted (capture/usage.py), when last, the factor ranking applies now
(retrieval/usefulness.py), and whether it is flagged for review (an agent did what it warns against: it may be
stale or wrong).

`Usefulness` JSON: {shown, used, contradicted, last_shown_at, last_used_at, last_contradicted_at, recent_shown,
recent_used, factor, review, last_use, last_contradiction, warning}. `shown`/`used`/`contradicted` count sessions,
all time; `recent_*` are the same counts decayed ([usefulness] half_life_days), which is what ranking reads (for a
`warning`, a memory that forbids something, `recent_shown` counts only the sessions that used it or went against
it: one that did neither is not counted as ignoring it, see retrieval/usefulness.py); `last_use` and
`last_contradiction` the evidence of the newest ones still on record ("edit: app/api/photos.py", "never run
pytest bare | bash: pytest -q").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.dates import now_iso
from codememory.core.result import Result

if TYPE_CHECKING:
    from codememory.service.project_store import Store
    from codememory.store.database import Database


@dataclass
class Usefulness(Result):
    shown: int  # agent sessions it was shown in
    used: int  # of them, the sessions that used it (cited, fetched, or acted on what it says)
    contradicted: int  # sessions that did what it warns against
    last_shown_at: str | None
    last_used_at: str | None
    last_contradicted_at: str | None
    recent_shown: float  # `shown` decayed by [usefulness] half_life_days: what ranking weighs
    recent_used: float
    factor: float  # what ranking multiplies its score by now (1: unmoved)
    review: bool  # contradicted: may be stale or wrong, worth a look
    last_use: str | None  # how the newest use on record showed (signal: evidence)
    last_contradiction: str | None  # the rule and the action of the newest contradiction on record
    warning: bool = False  # it forbids something: a session that did not go against it is not counted as ignoring it


NONE = Usefulness(0, 0, 0, None, None, None, 0.0, 0.0, 1.0, False, None, None)


def usefulness_of(db: Database, memory_id: str, edited_at: str | None = None) -> Usefulness:
    """The usefulness of one memory (NONE when it was never shown to an agent). A contradiction flags it for review
    until a session uses it again or it is edited (`edited_at`, its updated_at) after the contradiction."""
    from codememory.retrieval.usefulness import factor, judged, warnings_among

    record = db.usefulness([memory_id], now_iso()).get(memory_id)
    if record is None:
        return NONE
    warning = bool(warnings_among(db, [memory_id]))
    weighed = judged(record, warning)
    recent = db.memory_exposures(memory_id, limit=50)
    use = next((e for e in recent if e.used_at), None)
    against = next((e for e in recent if e.contradicted_at), None)
    return Usefulness(
        record.shown_total,
        record.used_total,
        record.contradicted_total,
        record.last_shown_at,
        record.last_used_at,
        record.last_contradicted_at,
        round(weighed.shown, 3),
        round(weighed.used, 3),
        round(factor(weighed, db.usage_weight), 3),
        _review(record.last_contradicted_at, record.last_used_at, edited_at),
        f"{use.used_by}: {use.evidence}" if use else None,
        against.contradiction if against else None,
        warning,
    )


def _review(contradicted: str | None, used: str | None, edited: str | None) -> bool:
    return contradicted is not None and all(later is None or later < contradicted for later in (used, edited))


def detail_usefulness(store: Store, memory_id: str) -> Usefulness:
    """A memory's usefulness as its full record shows it (`show`, memory_get, the viewer)."""
    pk = store.db.pk_of(memory_id)
    memory = store.db.get_by_pks([pk]).get(pk) if pk is not None else None
    return usefulness_of(store.db, memory_id, memory.updated_at if memory else None)
