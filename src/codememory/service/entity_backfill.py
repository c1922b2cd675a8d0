"""Entities for the memories an import stored before reading them (`entities_pending`, migration 15).

A large import writes and indexes the text and leaves the entities to a pass after it, so what the user waits for
is the text being searchable. The pass runs in the daemon (a batch per project per poll), or in whichever process
next reads entities (`fill_pending_entities`). Each batch writes the entities and removes their pending marks in
one transaction: a pass that is interrupted leaves the rest marked for the next one, never a memory without
entities for good.
"""

from __future__ import annotations

from collections.abc import Callable

from codememory.service.memory_entities import entities_in
from codememory.store.database import Database

BATCH = 2_000  # memories a transaction: ~0.2 s of extraction here, so a writer waiting on the lock waits little


def fill_pending_entities(db: Database, limit: int | None = None, progress: Callable[[int], None] | None = None) -> int:
    """Extract and store the entities of up to `limit` (None: all) memories still waiting for them; returns how
    many were filled."""
    done = 0
    while limit is None or done < limit:
        size = BATCH if limit is None else min(BATCH, limit - done)
        with db.transaction():  # read inside it: an edit between the read and the write would be overwritten
            rows = db.entities_pending(size)
            db.add_entities([(pk, entities_in(text)) for pk, text in rows])
        if not rows:
            break
        done += len(rows)
        if progress is not None:
            progress(done)
    return done
