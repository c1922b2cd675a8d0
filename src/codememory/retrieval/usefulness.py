"""How a memory's usefulness record (store/usage.py: the sessions it was shown in, used in) weighs in ranking: one
bounded factor on the final score, in proactive retrieval (the HUD and the hooks' blocks) and in search.

The record's counts decay (a half-life, `[usefulness] half_life_days`), so old evidence fades. Its use rate is
smoothed towards NEUTRAL_RATE by PRIOR_SHOWS pretend sessions, so one ignored showing barely moves a memory and a
long run of them moves it most:

    rate   = (used + PRIOR_SHOWS * NEUTRAL_RATE) / (shown + PRIOR_SHOWS)
    factor = 1 - MAX_SINK * (NEUTRAL_RATE - rate) / NEUTRAL_RATE        below the neutral rate
           = 1 + MAX_RISE * (rate - NEUTRAL_RATE) / (1 - NEUTRAL_RATE)  above it

and `[usefulness] weight` (default 0.5, at most 1; 0 switches it off) scales the move. At the default, a memory shown
and never used goes from 0.96 (one session) to 0.91 (three) towards 0.825, and one used every time it is shown rises
towards 1.075 (at weight 1: 0.91, 0.825, towards 0.65 and 1.15). Bounded both ways: a strong keyword match is
demoted at most to 1 - MAX_SINK * weight of its score, never buried, and a popular memory cannot outrank one that
answers the question. A contradiction does not move the factor: it flags the memory for review (it may be stale, or
the agent wrong).

A **warning** (a memory that forbids something use detection can catch being done: text/usage_cues.py `warns`,
"Rejected declaring `USE_EXACT_ALARM`", "never run `pytest` bare") is heeded by not doing it, which leaves no
trace: a session shown it that neither used it nor went against it is not counted as ignoring it. Only the sessions
that judged it count as its showings (`judged`: those that used it or went against it), so feedback never sinks a
warning that is simply obeyed, a use still raises it, and a session that does what it forbids still counts against
it and flags it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from codememory.core.config import UsefulnessConfig
from codememory.core.dates import now_iso
from codememory.store.database import Database
from codememory.store.usage import UsefulnessRow
from codememory.text.usage_cues import warns

Entry = tuple[float, int, str, dict[str, Any]]  # a ranking's row: (score, pk, match, explain)

PRIOR_SHOWS = 3.0
NEUTRAL_RATE = 0.5  # used in half the sessions it is shown in: neither rises nor sinks
MAX_SINK = 0.35
MAX_RISE = 0.15


@dataclass(frozen=True)
class Factor:
    value: float  # what the score is multiplied by
    shown: float  # the decayed counts it came from
    used: float

    def to_why(self) -> dict[str, Any]:
        return {"factor": round(self.value, 3), "shown": round(self.shown, 2), "used": round(self.used, 2)}


def use_rate(record: UsefulnessRow) -> float:
    return (record.used + PRIOR_SHOWS * NEUTRAL_RATE) / (record.shown + PRIOR_SHOWS)


def judged(record: UsefulnessRow, warning: bool) -> UsefulnessRow:
    """The record as ranking weighs it: a warning's showings are only the sessions that judged it, those that used
    it or went against it (a session can do both: never more than it was shown)."""
    if not warning:
        return record
    return replace(record, shown=min(record.shown, record.used + record.contradicted))


def warnings_among(db: Database, memory_ids: Sequence[str]) -> set[str]:
    """Which of these memories are warnings (see the module docstring)."""
    return {mid for mid, (_, text) in db.memory_texts(memory_ids).items() if warns(text)}


def factor(record: UsefulnessRow, weight: float = UsefulnessConfig.weight, warning: bool = False) -> float:
    """The ranking factor of a record (see the module docstring); `warning`: the memory is a warning."""
    record = judged(record, warning)
    rate = min(1.0, use_rate(record))
    if rate < NEUTRAL_RATE:
        move = -MAX_SINK * (NEUTRAL_RATE - rate) / NEUTRAL_RATE
    else:
        move = MAX_RISE * (rate - NEUTRAL_RATE) / (1.0 - NEUTRAL_RATE)
    return 1.0 + max(0.0, min(1.0, weight)) * move


def factors(db: Database, pks: Sequence[int], session_id: str | None = None) -> dict[int, Factor]:
    """The factor of each of these memories that has a record and is moved by it (weight 0: none). In `session_id`
    (the agent's session asking), a memory it was shown and has not used yet is still in play: that showing does
    not count against it."""
    if not pks or db.usage_weight <= 0:
        return {}
    out: dict[int, Factor] = {}
    records = db.usefulness_of_pks(pks, now_iso(), open_in=session_id)
    warning = warnings_among(db, [r.memory_id for r in records.values()]) if records else set()
    for pk, record in records.items():
        record = judged(record, record.memory_id in warning)
        value = factor(record, db.usage_weight)
        if abs(value - 1.0) >= 0.001:
            out[pk] = Factor(value, record.shown, record.used)
    return out


def adjusted(score: float, value: float) -> float:
    """A score moved by a factor, whatever its sign (fused scores are z-scores): a factor under 1 always loses
    ground, one over 1 always gains it."""
    return score * value if score >= 0 else score * (2.0 - value)


def reorder(db: Database, order: list[Entry]) -> list[Entry]:
    """A search ranking with each score moved by its memory's factor (`explain.usefulness` says by how much),
    reordered within each run of descending scores only: a ranking made of layers (strict matches of explicit
    syntax first, then related ones; typo matches after keyword ones) keeps its layers."""
    moved = factors(db, [pk for _, pk, _, _ in order])
    if not moved:
        return order
    blocks: list[list[Entry]] = []
    previous: float | None = None
    for entry in order:
        if previous is None or entry[0] > previous:
            blocks.append([])
        blocks[-1].append(entry)
        previous = entry[0]
    out: list[Entry] = []
    for block in blocks:
        scored = [
            (adjusted(score, moved[pk].value), pk, match, {**explain, "usefulness": moved[pk].to_why()})
            if pk in moved
            else (score, pk, match, explain)
            for score, pk, match, explain in block
        ]
        out += sorted(scored, key=lambda entry: -entry[0])
    return out
