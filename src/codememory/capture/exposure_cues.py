"""The cues a memory is judged on for use (text/usage_cues.py): its distinctive terms and the rules it states,
computed from its text and the store's entities, and kept with each exposure when the memory is first shown to a
session, so that the session is judged against the memory as it saw it (capture/usage.py reads them back).

A term must be rare in the store: a name more than `max(MIN_COMMON, memories / COMMON_SHARE)` memories mention says
nothing about which of them was acted on. A common file is kept as a **place** instead: no evidence of which
memory was used, but a look there can be the look behind an answer that states the memory.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codememory.store.database import Database
from codememory.store.usage import Exposure
from codememory.text.usage_cues import (
    MAX_CUE_TERMS,
    MAX_TERMS,
    PLACE,
    Prohibition,
    Term,
    memory_terms,
    new_terms,
    prohibitions,
)

MIN_COMMON = 3  # an entity more memories than max(this, memories / COMMON_SHARE) name is not distinctive
COMMON_SHARE = 200
MAX_PLACES = 3  # of a memory's common files kept as places (see memory_cues)


@dataclass(frozen=True)
class Cues:
    terms: tuple[Term, ...]
    rules: tuple[Prohibition, ...]


@functools.lru_cache(maxsize=4096)
def _text_cues(text: str, entities: tuple[tuple[str, str], ...], places: tuple[str, ...]) -> Cues:
    terms = [*memory_terms(text, entities), *(Term(p, PLACE) for p in places[:MAX_PLACES])]
    return Cues(tuple(terms), tuple(prohibitions(text)))


def memory_cues(db: Database, memory_ids: Iterable[str]) -> dict[str, Cues]:
    """The cues of these memories (those that still exist), their common entities left out of their terms. A
    common file is kept as a **place** (`config/config.exs`, which many memories name): no evidence of which memory
    was acted on, but a look there can be the look behind an answer that states the memory (`answered`)."""
    found = db.memory_texts(list(memory_ids))
    if not found:
        return {}
    cap = max(MIN_COMMON, db.count_all() // COMMON_SHARE)
    counts = db.entities_with_counts([pk for pk, _ in found.values()], cap)
    out: dict[str, Cues] = {}
    for mid, (pk, text) in found.items():
        entities = tuple((name, kind) for name, kind, n in counts.get(pk, []) if n <= cap)
        places = tuple(name for name, kind, n in counts.get(pk, []) if n > cap and kind == "file")
        out[mid] = _text_cues(text, entities, places)
    return out


def exposure_cues(db: Database, memory_ids: Sequence[str], context: str) -> dict[str, str]:
    """The cues kept with a memory's exposure when it is first shown to a session (store.usage's `cues_of`), as
    JSON: its terms the query it was shown for did not hold already, and its rules. Each turn of the session reads
    them back instead of parsing every shown memory again (a hook process starts with no cache)."""
    out: dict[str, str] = {}
    for mid, cue in memory_cues(db, memory_ids).items():
        terms = [[t.text, t.kind] for t in new_terms(cue.terms, context)]
        rules = [[r.thing, r.kind, r.clause] for r in cue.rules]
        out[mid] = json.dumps({"terms": terms, "rules": rules}, ensure_ascii=False, separators=(",", ":"))
    return out


def kept_cues(exposure: Exposure) -> tuple[list[Term], list[Prohibition]] | None:
    """An exposure's kept cues (see exposure_cues), or None when it has none or they do not read back (the store is
    untrusted input: anything of the wrong shape is computed again instead)."""
    if not exposure.cues:
        return None
    try:
        data = json.loads(exposure.cues)
        terms = [Term(t, k) for t, k in data["terms"] if isinstance(t, str) and t and isinstance(k, str)]
        rules = [Prohibition(t, k, c) for t, k, c in data["rules"] if all(isinstance(v, str) for v in (t, k, c))]
    except (ValueError, TypeError, KeyError):
        return None
    return terms[: MAX_CUE_TERMS + MAX_PLACES], rules[:MAX_TERMS]
