"""The usefulness table group (migration 13): `memory_exposures`, one row per memory shown to one agent session and
what the session did with it next, and `memory_usefulness`, each memory's record (shown, used, contradicted) as
counts that decay with time. Like every table group, the only place these tables are spoken to; the rules (what
counts as a use, how the record weighs in ranking) are in capture/usage.py, text/usage_cues.py and
retrieval/usefulness.py.

The unit is the session: a memory shown on twenty model calls of one session (a pinned HUD entry) was shown once,
and is used at most once per session. A record's `shown`, `used` and `contradicted` halve every `half_life_days`:
each is stored as of `decayed_at` and brought to the present on every write and read (`decay`), so old evidence
fades and a memory ignored long ago gets a fresh chance. The totals never decay.

Rows are untrusted like every row (a committed store may hold anything): every value is checked as it is read,
and a row that fails is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from codememory.core.config import UsefulnessConfig
from codememory.core.dates import from_iso
from codememory.store.connection import StoreConnection, chunks
from codememory.store.rows import is_int, is_label, is_memory_id, is_stamp, is_text
from codememory.text.privacy import scrub

MAX_EXPOSURES = 50_000  # rows kept; past it the oldest go (the records keep their counts)
MAX_CONTEXT_CHARS = 2000  # of the query a memory was first shown for
MAX_EVIDENCE_CHARS = 300
MAX_CUES_CHARS = 20_000  # an exposure's cues (a longer value is ignored: they are computed again)
SIGNALS = ("cited", "fetched", "entity", "answered")
KINDS = ("hud", "cold_start", "hook_start", "hook_prompt", "search", "fetched")

_EXPOSURE_COLUMNS = (
    "id, memory_id, source, session_id, kind, first_shown_at, last_shown_at, shows, tokens, context, used_at, used_by, "
    "evidence, contradicted_at, contradiction, cues"
)
_RECORD_COLUMNS = (
    "memory_id, shown, used, contradicted, decayed_at, shown_total, used_total, contradicted_total, last_shown_at, "
    "last_used_at, last_contradicted_at"
)


def decay(value: float, since: str, now: str, half_life_days: float) -> float:
    """`value` as of `since`, halved every `half_life_days` up to `now` (unchanged without a valid span or with a
    half-life of 0 or less, which turns decay off)."""
    if half_life_days <= 0 or value == 0:
        return value
    try:
        days = (from_iso(now) - from_iso(since)).total_seconds() / 86400
    except ValueError:
        return value
    return value * math.pow(0.5, max(0.0, days) / half_life_days)


@dataclass(frozen=True)
class Exposure:
    """One memory shown to one agent session, and what the session did with it."""

    id: int
    memory_id: str
    source: str
    session_id: str
    kind: str  # how it was first shown: hud, cold_start, hook_start, hook_prompt, search or fetched
    first_shown_at: str
    last_shown_at: str
    shows: int
    tokens: int
    context: str  # the query it was first shown for (scrubbed)
    used_at: str | None
    used_by: str | None  # cited, fetched, entity or answered
    evidence: str | None  # what matched
    contradicted_at: str | None
    contradiction: str | None  # the rule and the action
    cues: str | None = None  # the memory's terms and rules as shown (JSON, capture/usage.py; untrusted: re-checked)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("id", "context", "cues")}


@dataclass(frozen=True)
class UsefulnessRow:
    """A memory's record, decayed to the time it was read."""

    memory_id: str
    shown: float
    used: float
    contradicted: float
    shown_total: int
    used_total: int
    contradicted_total: int
    last_shown_at: str | None
    last_used_at: str | None
    last_contradicted_at: str | None


@dataclass(frozen=True)
class Shown:
    """A memory put in front of a session: its id and what it cost in tokens."""

    memory_id: str
    tokens: int = 0


@dataclass(frozen=True)
class Outcome:
    """What a session did with a memory it was shown: `signal` is cited, fetched, entity or answered for a use, or
    "contradicted"; `shown_kind` creates the exposure when there is none yet (a memory fetched by id that no
    injection showed)."""

    memory_id: str
    signal: str
    at: str
    evidence: str
    shown_kind: str | None = None


def _label(value: str) -> str:
    """A session id or a tool name as stored: one short line (they are matched as given, so never rewritten)."""
    return " ".join(value.split())[:200]


def _stamp(value: object) -> str | None:
    return value if isinstance(value, str) and is_stamp(value) else None


def _text(value: object, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and is_text(value, limit * 4) else None


def _exposure(row: tuple[Any, ...]) -> Exposure | None:
    (
        pk,
        mid,
        source,
        session,
        kind,
        first,
        last,
        shows,
        tokens,
        context,
        used_at,
        used_by,
        evidence,
        c_at,
        c_what,
        cues,
    ) = row
    if not (is_int(pk) and is_memory_id(mid) and is_label(source) and is_label(session) and kind in KINDS):
        return None
    if not (is_stamp(first) and is_stamp(last)):
        return None
    return Exposure(
        pk,
        mid,
        source,
        session,
        kind,
        first,
        last,
        shows if is_int(shows) and shows > 0 else 1,
        tokens if is_int(tokens) and tokens >= 0 else 0,
        _text(context, MAX_CONTEXT_CHARS) or "",
        _stamp(used_at),
        used_by if used_by in SIGNALS else None,
        _text(evidence, MAX_EVIDENCE_CHARS),
        _stamp(c_at),
        _text(c_what, MAX_EVIDENCE_CHARS),
        cues if isinstance(cues, str) and len(cues) <= MAX_CUES_CHARS else None,
    )


def _count(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else 0.0


def _record(row: tuple[Any, ...], now: str, half_life: float) -> UsefulnessRow | None:
    mid, shown, used, contra, decayed_at, s_total, u_total, c_total, last_s, last_u, last_c = row
    if not is_memory_id(mid):
        return None
    since = decayed_at if is_stamp(decayed_at) else now

    def total(value: object) -> int:
        return value if isinstance(value, int) and is_int(value) and value >= 0 else 0

    return UsefulnessRow(
        mid,
        decay(_count(shown), since, now, half_life),
        decay(_count(used), since, now, half_life),
        decay(_count(contra), since, now, half_life),
        total(s_total),
        total(u_total),
        total(c_total),
        _stamp(last_s),
        _stamp(last_u),
        _stamp(last_c),
    )


class UsageRows(StoreConnection):
    """Reads and writes of exposures and usefulness records."""

    usage_half_life_days: float = UsefulnessConfig.half_life_days  # the Store sets its configured value
    usage_weight: float = UsefulnessConfig.weight  # the Store sets its configured [usefulness] weight (0: not at all)

    # ------------------------------------------------------------------ writes
    def record_shown(
        self,
        *,
        at: str,
        source: str,
        session_id: str,
        kind: str,
        memories: Sequence[Shown],
        context: str = "",
        cues_of: Callable[[Sequence[str], str], Mapping[str, str]] | None = None,
    ) -> list[str]:
        """Note that these memories were put in front of the session; a memory shown in it for the first time counts
        once more in its record's `shown`. `cues_of(ids, context)` gives the cues kept with the memories shown to the
        session for the first time (capture/usage.py). Returns those ids."""
        if kind not in KINDS:
            raise ValueError(f"unknown exposure kind {kind!r}")
        items = {m.memory_id: m for m in memories if is_memory_id(m.memory_id)}
        if not items:
            return []
        source, session_id = _label(source), _label(session_id)
        context = scrub(context)[:MAX_CONTEXT_CHARS] if context else ""
        with self.transaction() as c:
            marks = ",".join("?" * len(items))
            known = {
                mid
                for (mid,) in c.execute(
                    f"SELECT memory_id FROM memory_exposures WHERE session_id = ? AND memory_id IN ({marks})",
                    (session_id, *items),
                )
            }
            c.executemany(
                "UPDATE memory_exposures SET shows = shows + 1, last_shown_at = max(last_shown_at, ?), "
                "tokens = tokens + ? WHERE session_id = ? AND memory_id = ?",
                [(at, max(0, m.tokens), session_id, mid) for mid, m in items.items() if mid in known],
            )
            fresh = [mid for mid in items if mid not in known]
            cues = cues_of(fresh, context) if cues_of and fresh else {}
            c.executemany(
                "INSERT INTO memory_exposures(memory_id, source, session_id, kind, first_shown_at, last_shown_at, "
                "tokens, context, cues) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (mid, source, session_id, kind, at, at, max(0, items[mid].tokens), context, cues.get(mid))
                    for mid in fresh
                ],
            )
            self._bump_many(c, fresh, at, shown=1)
            if fresh:
                newest = int(c.execute("SELECT max(id) FROM memory_exposures").fetchone()[0] or 0)
                c.execute("DELETE FROM memory_exposures WHERE id <= ?", (newest - MAX_EXPOSURES,))
        return fresh

    def record_outcomes(self, session_id: str, source: str, outcomes: Iterable[Outcome]) -> int:
        """Apply what the session did with memories it was shown: the first use of each marks its exposure used (and
        counts in the record's `used`), the first contradiction marks it contradicted. An outcome for a memory the
        session was never shown creates the exposure first when it says how (`shown_kind`), else is dropped.
        Returns how many exposures changed."""
        changed = 0
        session_id, source = _label(session_id), _label(source)
        with self.transaction() as c:
            for o in outcomes:
                if not is_memory_id(o.memory_id):
                    continue
                row = c.execute(
                    "SELECT id, used_at, contradicted_at FROM memory_exposures WHERE session_id = ? AND memory_id = ?",
                    (session_id, o.memory_id),
                ).fetchone()
                if row is None:
                    if (
                        o.shown_kind not in KINDS
                        or not c.execute("SELECT 1 FROM memories WHERE id = ?", (o.memory_id,)).fetchone()
                    ):
                        continue
                    cur = c.execute(
                        "INSERT INTO memory_exposures(memory_id, source, session_id, kind, first_shown_at, "
                        "last_shown_at) VALUES (?, ?, ?, ?, ?, ?)",
                        (o.memory_id, source, session_id, o.shown_kind, o.at, o.at),
                    )
                    self._bump(c, o.memory_id, o.at, shown=1)
                    row = (cur.lastrowid, None, None)
                pk, used_at, contradicted_at = row
                evidence = scrub(o.evidence)[:MAX_EVIDENCE_CHARS]
                if o.signal in SIGNALS and used_at is None:
                    c.execute(
                        "UPDATE memory_exposures SET used_at = ?, used_by = ?, evidence = ? WHERE id = ?",
                        (o.at, o.signal, evidence, pk),
                    )
                    self._bump(c, o.memory_id, o.at, used=1)
                    changed += 1
                elif o.signal == "contradicted" and contradicted_at is None:
                    c.execute(
                        "UPDATE memory_exposures SET contradicted_at = ?, contradiction = ? WHERE id = ?",
                        (o.at, evidence, pk),
                    )
                    self._bump(c, o.memory_id, o.at, contradicted=1)
                    changed += 1
        return changed

    def _bump(self, c: Any, memory_id: str, at: str, *, shown: int = 0, used: int = 0, contradicted: int = 0) -> None:
        self._bump_many(c, [memory_id], at, shown=shown, used=used, contradicted=contradicted)

    def _bump_many(
        self, c: Any, memory_ids: Sequence[str], at: str, *, shown: int = 0, used: int = 0, contradicted: int = 0
    ) -> None:
        """Add to these memories' records, their decayed counts first brought to `at`."""
        if not memory_ids:
            return
        marks = ",".join("?" * len(memory_ids))
        select = f"SELECT {_RECORD_COLUMNS} FROM memory_usefulness WHERE memory_id IN ({marks})"
        rows = {row[0]: row for row in c.execute(select, list(memory_ids))}
        values = []
        for memory_id in memory_ids:
            row = rows.get(memory_id)
            # An event stamped before the record's last write (a turn captured late) is counted at the record's time.
            now = max(at, row[4]) if row and is_stamp(row[4]) else at
            old = _record(row, now, self.usage_half_life_days) if row else None
            base = old or UsefulnessRow(memory_id, 0.0, 0.0, 0.0, 0, 0, 0, None, None, None)
            values.append(
                (
                    memory_id,
                    base.shown + shown,
                    base.used + used,
                    base.contradicted + contradicted,
                    now,
                    base.shown_total + shown,
                    base.used_total + used,
                    base.contradicted_total + contradicted,
                    max(filter(None, (base.last_shown_at, at if shown else None)), default=None),
                    max(filter(None, (base.last_used_at, at if used else None)), default=None),
                    max(filter(None, (base.last_contradicted_at, at if contradicted else None)), default=None),
                )
            )
        c.executemany(
            f"INSERT OR REPLACE INTO memory_usefulness({_RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )

    # ------------------------------------------------------------------- reads
    def memory_texts(self, memory_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """id -> (row key, text) of these memories (those that exist): all use detection reads of a memory."""
        out: dict[str, tuple[int, str]] = {}
        for chunk in chunks(list(dict.fromkeys(memory_ids))):
            for pk, mid, text in self.conn.execute(
                f"SELECT pk, id, text FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                if is_int(pk) and is_memory_id(mid) and isinstance(text, str):
                    out[mid] = (pk, text)
        return out

    def session_exposures(self, session_id: str) -> list[Exposure]:
        rows = self.conn.execute(
            f"SELECT {_EXPOSURE_COLUMNS} FROM memory_exposures WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
        return [e for e in map(_exposure, rows) if e is not None]

    def exposures_since(self, since: str | None, limit: int = MAX_EXPOSURES) -> list[Exposure]:
        """Exposures first shown at or after `since` (every one kept with None), oldest first."""
        rows = self.conn.execute(
            f"SELECT {_EXPOSURE_COLUMNS} FROM memory_exposures WHERE first_shown_at >= ? ORDER BY id LIMIT ?",
            (since or "", limit),
        ).fetchall()
        return [e for e in map(_exposure, rows) if e is not None]

    def memory_exposures(self, memory_id: str, limit: int = 20) -> list[Exposure]:
        """A memory's newest exposures, newest first."""
        rows = self.conn.execute(
            f"SELECT {_EXPOSURE_COLUMNS} FROM memory_exposures WHERE memory_id = ? ORDER BY id DESC LIMIT ?",
            (memory_id, limit),
        ).fetchall()
        return [e for e in map(_exposure, rows) if e is not None]

    def usefulness(self, memory_ids: Sequence[str], now: str) -> dict[str, UsefulnessRow]:
        """The records of these memories (those that have one), decayed to `now`."""
        out: dict[str, UsefulnessRow] = {}
        for chunk in chunks(list(dict.fromkeys(memory_ids))):
            for row in self.conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM memory_usefulness WHERE memory_id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                record = _record(row, now, self.usage_half_life_days)
                if record is not None:
                    out[record.memory_id] = record
        return out

    def usefulness_of_pks(self, pks: Sequence[int], now: str, open_in: str | None = None) -> dict[int, UsefulnessRow]:
        """The records of these memory rows (those that have one), decayed to `now`: what ranking reads. With
        `open_in` (a session id), a showing in that session not used yet is left out of `shown`: it is still in
        play there."""
        out: dict[int, UsefulnessRow] = {}
        for chunk in chunks(list(dict.fromkeys(pks))):
            marks = ",".join("?" * len(chunk))
            for pk, *row in self.conn.execute(
                f"SELECT m.pk, {', '.join('u.' + c.strip() for c in _RECORD_COLUMNS.split(','))} "
                f"FROM memories m JOIN memory_usefulness u ON u.memory_id = m.id WHERE m.pk IN ({marks})",
                chunk,
            ):
                record = _record(tuple(row), now, self.usage_half_life_days)
                if record is not None and is_int(pk):
                    out[pk] = record
            if open_in and out:
                for pk, first in self.conn.execute(
                    "SELECT m.pk, e.first_shown_at FROM memory_exposures e JOIN memories m ON m.id = e.memory_id "
                    f"WHERE e.session_id = ? AND e.used_at IS NULL AND m.pk IN ({marks})",
                    (open_in, *chunk),
                ):
                    record = out.get(pk)
                    if record is not None and is_stamp(first):
                        still = decay(1.0, first, now, self.usage_half_life_days)
                        out[pk] = replace(record, shown=max(0.0, record.shown - still))
        return out

    def all_usefulness(self, now: str) -> list[UsefulnessRow]:
        """Every record, decayed to `now`."""
        rows = self.conn.execute(f"SELECT {_RECORD_COLUMNS} FROM memory_usefulness ORDER BY memory_id").fetchall()
        return [r for r in (_record(row, now, self.usage_half_life_days) for row in rows) if r is not None]
