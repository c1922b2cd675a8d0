"""Entities for the memories an import stored before reading them (`entities_pending`, migration 15).

A large import writes and indexes the text and leaves the entities to a pass after it, so what the user waits for
is the text being searchable. The pass runs in the daemon (a few batches per project per poll) when one serves the
project; otherwise the import runs it itself before it returns, and any later import (`entities="now"`, the default)
fills whatever an interrupted pass left. Each batch writes the entities and removes their pending marks in
one transaction: a pass that is interrupted leaves the rest marked for the next one (the daemon's next poll, or the
next import; until then entity filters and counts say how many they miss).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from codememory.core.worker_pool import in_order
from codememory.service.memory_entities import entities_in
from codememory.store.database import Database

BATCH = 2_000  # memories a transaction: ~0.2 s of extraction here, so a writer waiting on the lock waits little


def fill_pending_entities(
    db: Database, limit: int | None = None, progress: Callable[[int], None] | None = None, *, workers: int = 1
) -> int:
    """Extract and store the entities of up to `limit` (None: all) memories still waiting for them; returns how
    many were filled. With `workers` > 1 and more than a batch waiting, the extraction runs in that many processes
    while this one writes (the import command's own pass; the daemon's runs in its thread, a batch at a time)."""
    if workers > 1 and len(db.entities_pending(BATCH + 1)) > BATCH and (limit is None or limit > BATCH):
        return _fill_in_parallel(db, limit, progress, workers)
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


def _extract(rows: list[tuple[int, str]]) -> list[tuple[int, list[tuple[str, str]]]]:
    return [(pk, entities_in(text)) for pk, text in rows]


def _fill_in_parallel(db: Database, limit: int | None, progress: Callable[[int], None] | None, workers: int) -> int:
    def calls() -> Iterator[tuple[list[tuple[int, str]]]]:
        last, read = 0, 0
        while limit is None or read < limit:
            rows = db.entities_pending(BATCH if limit is None else min(BATCH, limit - read), last)
            if not rows:
                return
            last, read = rows[-1][0], read + len(rows)
            yield (rows,)

    done = 0
    for extracted in in_order(_extract, calls(), workers):
        with db.transaction():  # texts were read before it: only those still marked are unchanged since
            still = db.still_pending([pk for pk, _ in extracted])
            db.add_entities([(pk, found) for pk, found in extracted if pk in still])
        done += len(extracted)
        if progress is not None:
            progress(done)
    return done
