"""`codememory report`: what memory cost the agents and what they did with it — tokens spent on memory per session
and per day (the injection ledger), the memories shown and used (capture/usage.py), the most useful ones, the ones
shown again and again and never used (offered to `consolidate --never-used`), the contradicted ones (to review)
and the stale ones still being shown.

`report --json` (UsageReport): {since, generated_at, sessions, injections, tokens, shown, used, exposures, uses,
by_signal: {cited, fetched, entity, answered}, days: [{day, sessions, injections, tokens, shown, used}], per_session:
[{session_id, source, first_shown_at, injections, tokens, shown, used, contradicted}], most_useful, never_used,
contradicted, stale_shown, memories}, where each of the last five lists holds MemoryUse rows {id, state, category,
text, shown, used, contradicted, tokens, shown_total, used_total, contradicted_total, last_used_at, factor,
offered, stale, evidence, warning}.

`shown`/`used`/`contradicted` of a memory count the agent sessions in the window (`--since`) that were shown it,
used it, went against it; the `_total` ones count every session on record. Tokens are what the injections cost
(the memories and the framing around them), from the ledger, which keeps its newest 5000 rows. A memory is
`offered` for archiving when it was shown in at least `[usefulness] never_used_after` sessions (default 5) and
never used in any. A `warning` (a memory that forbids something: retrieval/usefulness.py) is heeded by not doing
it, which leaves no trace, so a session that did not go against it is not counted as ignoring it: a warning is
never listed as never used nor offered for archiving (going against it lists it as contradicted).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codememory.core.dates import now_iso, parse_when, to_iso
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.result import Result
from codememory.store.usage import SIGNALS
from codememory.text.context_render import one_line
from codememory.text.usage_cues import warns

if TYPE_CHECKING:
    from codememory.service.project_store import Store
    from codememory.store.usage import Exposure

TEXT_CHARS = 120
DEFAULT_LIMIT = 10  # rows per list in the text and markdown forms (--json has every memory in `memories`)
_DURATION_RE = lazy_pattern(r"\d+\s*[a-z]+")


@dataclass
class MemoryUse(Result):
    id: str
    state: str  # live, archived, superseded, expired or forgotten
    category: str | None
    text: str | None  # its first line, cut (None once forgotten)
    shown: int  # sessions in the window it was shown in
    used: int  # of them, those that used it
    contradicted: int  # sessions in the window that went against it
    tokens: int  # what showing it cost in the window (its own lines)
    shown_total: int  # every session on record
    used_total: int
    contradicted_total: int
    last_used_at: str | None
    factor: float  # what ranking multiplies its score by now
    offered: bool  # never used in enough sessions: `consolidate --never-used` archives it
    stale: bool  # a staleness check marked it (it names code that is gone)
    evidence: str | None  # the newest use (or contradiction, in `contradicted`) in the window
    warning: bool = False  # it forbids something: a session that did not go against it is not counted as ignoring it


@dataclass
class DayUse(Result):
    day: str
    sessions: int
    injections: int
    tokens: int
    shown: int  # memories first shown to a session that day
    used: int  # of those, used


@dataclass
class SessionUse(Result):
    session_id: str | None
    source: str
    first_shown_at: str | None
    injections: int
    tokens: int
    shown: int
    used: int
    contradicted: int


@dataclass
class UsageReport(Result):
    since: str | None
    generated_at: str
    sessions: int  # agent sessions shown memory in the window
    injections: int
    tokens: int
    shown: int  # distinct memories shown
    used: int  # distinct memories used
    exposures: int  # (memory, session) showings
    uses: int  # of them, used
    by_signal: dict[str, int]  # cited, fetched, entity, answered
    days: list[DayUse]
    per_session: list[SessionUse]
    most_useful: list[MemoryUse]
    never_used: list[MemoryUse]
    contradicted: list[MemoryUse]
    stale_shown: list[MemoryUse]
    memories: list[MemoryUse] = field(default_factory=list)  # every memory shown in the window


def since_stamp(text: str | None) -> str | None:
    """`--since` as a stored stamp: ISO dates and words as everywhere ("yesterday", "2 weeks ago"), and a bare
    duration ("7d", "12h") counted back from now."""
    if text is None or not text.strip():
        return None
    value = text.strip().lower()
    return to_iso(parse_when(f"{value} ago" if _DURATION_RE.fullmatch(value) else value, what="--since"))


def usage_report(store: Store, *, since: str | None = None, limit: int = DEFAULT_LIMIT) -> UsageReport:
    """The report over the exposures first shown at or after `since` (a stored stamp; None: everything on record)."""
    from codememory.retrieval.usefulness import factor
    from codememory.store.injections import InjectionTables

    db = store.db
    now = now_iso()
    exposures = db.exposures_since(since)
    spend = InjectionTables(db).spend(since)
    by_memory: dict[str, list[Exposure]] = {}
    for e in exposures:
        by_memory.setdefault(e.memory_id, []).append(e)
    records = db.usefulness(list(by_memory), now)
    current = {mem.id: (pk, mem) for pk, mem in db.get_by_ids(list(by_memory))}
    stale = set(db.stale_marks([pk for pk, _ in current.values()]))
    threshold = max(1, store.config.usefulness.never_used_after)
    rows: list[MemoryUse] = []
    for mid, shown in by_memory.items():
        record = records.get(mid)
        pk, mem = current.get(mid, (None, None))
        used = [e for e in shown if e.used_at]
        against = [e for e in shown if e.contradicted_at]
        newest = max(used, key=lambda e: e.used_at or "", default=None)
        total_shown = record.shown_total if record else len(shown)
        total_used = record.used_total if record else len(used)
        warning = mem is not None and warns(mem.text)
        rows.append(
            MemoryUse(
                id=mid,
                state=_state(mem, now),
                category=mem.category if mem else None,
                text=one_line(mem.text, TEXT_CHARS) if mem else None,
                shown=len(shown),
                used=len(used),
                contradicted=len(against),
                tokens=sum(e.tokens for e in shown),
                shown_total=total_shown,
                used_total=total_used,
                contradicted_total=record.contradicted_total if record else len(against),
                last_used_at=record.last_used_at if record else (newest.used_at if newest else None),
                factor=round(factor(record, db.usage_weight, warning), 3) if record else 1.0,
                offered=mem is not None
                and not warning
                and _state(mem, now) == "live"
                and total_used == 0
                and total_shown >= threshold,
                stale=pk in stale,
                evidence=f"{newest.used_by}: {newest.evidence}" if newest else None,
                warning=warning,
            )
        )
    rows.sort(key=lambda r: (-r.shown, r.id))
    contradictions = {
        mid: max((e for e in es if e.contradicted_at), key=lambda e: e.contradicted_at or "")
        for mid, es in by_memory.items()
        if any(e.contradicted_at for e in es)
    }
    contradicted = [_with_evidence(r, contradictions[r.id].contradiction) for r in rows if r.id in contradictions]
    signals = Counter(e.used_by for e in exposures if e.used_by)
    return UsageReport(
        since=since,
        generated_at=now,
        sessions=len({e.session_id for e in exposures} | {s for s, *_ in spend if s}),
        injections=sum(n for *_, n, _t in spend),
        tokens=sum(t for *_, t in spend),
        shown=len(by_memory),
        used=sum(1 for r in rows if r.used),
        exposures=len(exposures),
        uses=sum(1 for e in exposures if e.used_at),
        by_signal={k: signals.get(k, 0) for k in SIGNALS},
        days=_days(exposures, spend),
        per_session=_sessions(exposures, spend),
        most_useful=sorted((r for r in rows if r.used), key=lambda r: (-r.used, -r.used / r.shown, r.id))[:limit],
        never_used=sorted(
            (r for r in rows if not r.used_total and not r.warning), key=lambda r: (-r.shown_total, r.id)
        )[:limit],
        contradicted=contradicted[:limit],
        stale_shown=[r for r in rows if r.stale][:limit],
        memories=rows,
    )


def _with_evidence(row: MemoryUse, evidence: str | None) -> MemoryUse:
    from dataclasses import replace

    return replace(row, evidence=evidence)


def _state(mem: object, now: str) -> str:
    if mem is None:
        return "forgotten"
    if getattr(mem, "archived", False):
        return "archived"
    if getattr(mem, "superseded_by", None):
        return "superseded"
    expires = getattr(mem, "expires_at", None)
    return "expired" if expires is not None and expires <= now else "live"


def _days(exposures: list[Exposure], spend: list[tuple[str | None, str, str, int, int]]) -> list[DayUse]:
    days: dict[str, DayUse] = {}
    sessions: dict[str, set[str]] = {}
    for session, _source, day, count, tokens in spend:
        d = days.setdefault(day, DayUse(day, 0, 0, 0, 0, 0))
        d.injections += count
        d.tokens += tokens
        if session:  # calls without a session (a plain /retrieve) spend tokens but are no agent session
            sessions.setdefault(day, set()).add(session)
    for e in exposures:
        day = e.first_shown_at[:10]
        d = days.setdefault(day, DayUse(day, 0, 0, 0, 0, 0))
        d.shown += 1
        d.used += 1 if e.used_at else 0
        sessions.setdefault(day, set()).add(e.session_id)
    for day, d in days.items():
        d.sessions = len(sessions.get(day, ()))
    return [days[k] for k in sorted(days)]


def _sessions(exposures: list[Exposure], spend: list[tuple[str | None, str, str, int, int]]) -> list[SessionUse]:
    out: dict[str | None, SessionUse] = {}
    for session, source, _day, count, tokens in spend:
        s = out.setdefault(session, SessionUse(session, source, None, 0, 0, 0, 0, 0))
        s.injections += count
        s.tokens += tokens
    for e in exposures:
        s = out.setdefault(e.session_id, SessionUse(e.session_id, e.source, None, 0, 0, 0, 0, 0))
        s.first_shown_at = min(filter(None, (s.first_shown_at, e.first_shown_at)))
        s.shown += 1
        s.used += 1 if e.used_at else 0
        s.contradicted += 1 if e.contradicted_at else 0
    return sorted(out.values(), key=lambda s: (s.first_shown_at or "", s.session_id or ""))


# ------------------------------------------------------------------------------------------ text forms
def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def render_text(report: UsageReport, limit: int = DEFAULT_LIMIT) -> str:
    """The report for a terminal. Memory text and evidence come from the store (untrusted): each is one line."""
    window = f"since {report.since}" if report.since else "everything on record"
    lines = [
        f"Memory use, {window}:",
        f"  {report.sessions} agent sessions, {report.injections} injections, {report.tokens:,} tokens spent on memory",
        f"  {report.shown} memories shown in {report.exposures} session showings; {report.used} memories used, in "
        f"{report.uses} showings ({_percent(report.uses, report.exposures)}); by "
        + ", ".join(f"{k} {v}" for k, v in report.by_signal.items()),
    ]
    if report.days:
        lines += ["", "Per day:", *(f"  {d.day}  {d.sessions} sessions, {d.tokens:,} tokens, shown {d.shown}, used "
                                    f"{d.used}" for d in report.days[-limit:])]  # fmt: skip
    if report.per_session:
        lines += ["", "Per session (newest last):"]
        for s in report.per_session[-limit:]:
            lines.append(
                f"  {one_line(s.session_id or '(none)', 60)} ({one_line(s.source, 30)}): {s.tokens:,} tokens, "
                f"shown {s.shown}, used {s.used}" + (f", contradicted {s.contradicted}" if s.contradicted else "")
            )
    for title, rows in (
        ("Most useful", report.most_useful),
        ("Shown and never used", report.never_used),
        ("Contradicted (review: stale or wrong?)", report.contradicted),
        ("Stale and still shown", report.stale_shown),
    ):
        if not rows:
            continue
        lines += ["", f"{title}:"]
        for r in rows[:limit]:
            lines.append(f"  {r.id}  {_what(title, r)}  x{r.factor:.2f}  {r.text or '(' + r.state + ')'}")
            if r.evidence and title.startswith(("Most", "Contra")):
                lines.append(f"      {one_line(r.evidence, 160)}")
    quiet = _quiet_warnings(report)
    if quiet:
        lines += ["", quiet]
    if not report.exposures:
        lines += ["", "Nothing shown to an agent session yet in this window."]
    return "\n".join(lines)


def _quiet_warnings(report: UsageReport) -> str:
    """Why warnings shown and never used are missing from "never used": said, not claimed as heeded."""
    quiet = sum(1 for r in report.memories if r.warning and not r.used_total and not r.contradicted)
    if not quiet:
        return ""
    return (
        f"{quiet} warning(s) shown, never used and not gone against: not listed as never used, since obeying a "
        "warning leaves no trace (those sessions are not counted either way)."
    )


def _what(title: str, r: MemoryUse) -> str:
    if title.startswith("Most"):
        return f"used in {r.used} of {r.shown} sessions"
    if title.startswith("Shown"):
        offered = " (offered to consolidate --never-used)" if r.offered else ""
        return f"shown in {r.shown_total} sessions{offered}"
    if title.startswith("Contra"):
        return f"in {r.contradicted} sessions"
    return f"shown in {r.shown} sessions"


def _cell(text: str | None) -> str:
    return one_line(text or "", TEXT_CHARS).replace("|", "\\|")


def render_markdown(report: UsageReport, limit: int = DEFAULT_LIMIT) -> str:
    window = f"since {report.since}" if report.since else "everything on record"
    out = [
        f"## Memory use ({window})",
        "",
        f"{report.sessions} agent sessions, {report.injections} injections, {report.tokens:,} tokens spent on memory. "
        f"{report.shown} memories shown in {report.exposures} session showings; {report.used} used, in {report.uses} "
        f"showings ({_percent(report.uses, report.exposures)}).",
    ]
    if report.days:
        out += ["", "| day | sessions | tokens | shown | used |", "|---|---:|---:|---:|---:|"]
        out += [f"| {d.day} | {d.sessions} | {d.tokens} | {d.shown} | {d.used} |" for d in report.days[-limit:]]
    if report.per_session:
        out += ["", "| session | tool | tokens | shown | used | contradicted |", "|---|---|---:|---:|---:|---:|"]
        out += [
            f"| {_cell(s.session_id)} | {_cell(s.source)} | {s.tokens} | {s.shown} | {s.used} | {s.contradicted} |"
            for s in report.per_session[-limit:]
        ]
    for title, rows in (
        ("Most useful", report.most_useful),
        ("Shown and never used", report.never_used),
        ("Contradicted", report.contradicted),
        ("Stale and still shown", report.stale_shown),
    ):
        if not rows:
            continue
        out += [
            "",
            f"### {title}",
            "",
            "| memory | shown | used | contradicted | ranking | text |",
            "|---|---:|---:|---:|---:|---|",
        ]
        out += [
            f"| `{r.id}` | {r.shown} ({r.shown_total}) | {r.used} ({r.used_total}) | {r.contradicted} | "
            f"x{r.factor:.2f} | {_cell(r.text or r.state)} |"
            for r in rows[:limit]
        ]
    quiet = _quiet_warnings(report)
    if quiet:
        out += ["", quiet]
    return "\n".join(out) + "\n"
