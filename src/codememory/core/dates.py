"""Timestamps: one canonical text form in the store, and forgiving parsing of what people type.

Stored form is UTC ISO 8601 with milliseconds and a `Z` (`2026-11-22T02:24:36.123Z`): it sorts
lexicographically in SQL and survives export/import unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import InvalidInput

_UNITS = {
    "minute": timedelta(minutes=1),
    "min": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "h": timedelta(hours=1),
    "day": timedelta(days=1),
    "d": timedelta(days=1),
    "week": timedelta(weeks=1),
    "w": timedelta(weeks=1),
    "month": timedelta(days=30),
    "year": timedelta(days=365),
    "y": timedelta(days=365),
}
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
}
_AMOUNT = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve)"
_UNIT = r"(minute|min|hour|h|day|d|week|w|month|year|y)s?"
_IN_RE = lazy_pattern(rf"^(?:in\s+)?{_AMOUNT}\s*{_UNIT}(?:\s+from\s+now)?$")
_AGO_RE = lazy_pattern(rf"^{_AMOUNT}\s*{_UNIT}\s+ago$")
_NEXT_LAST_RE = lazy_pattern(r"^(next|last|this)\s+(hour|day|week|month|year)$")


def now_utc() -> datetime:
    return datetime.now(UTC)


def to_iso(dt: datetime) -> str:
    """Canonical stored form (UTC, millisecond precision)."""
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def now_iso() -> str:
    return to_iso(now_utc())


def now_iso_seconds() -> str:
    """Now as the user's own JSON files record it (the project registry, the trust list): UTC to the second,
    `2026-11-22T02:24:36+00:00`. Not the store's form: these files are read by people and never sorted in SQL."""
    return now_utc().replace(microsecond=0).isoformat()


def from_iso(text: str) -> datetime:
    """Parse a stored or exported timestamp (any ISO 8601 form; naive means UTC)."""
    dt = datetime.fromisoformat(text.strip().replace("z", "Z"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


_CANONICAL_RE = lazy_pattern(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def canonical_iso(text: str) -> str:
    if _CANONICAL_RE.fullmatch(text):  # already the stored form (every export): checked, not reformatted
        from_iso(text)  # still a real date (no 31 February)
        return text
    return to_iso(from_iso(text))


def _amount(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def parse_when(text: str, *, now: datetime | None = None, what: str = "date") -> datetime:
    """Parse an ISO date/time or plain-English time ("in 2 weeks", "3 days ago", "tomorrow").

    Raises InvalidInput with a message naming `what` (e.g. "--expires") when it cannot.
    """
    now = now or now_utc()
    raw = text
    text = " ".join(text.strip().lower().split())
    if not text:
        raise InvalidInput(f"{what}: empty date")
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    simple = {
        "now": now,
        "today": today,
        "tomorrow": today + timedelta(days=1),
        "yesterday": today - timedelta(days=1),
    }
    if text in simple:
        return simple[text]
    if m := _IN_RE.match(text):
        return now + _amount(m.group(1)) * _UNITS[m.group(2)]
    if m := _AGO_RE.match(text):
        return now - _amount(m.group(1)) * _UNITS[m.group(2)]
    if m := _NEXT_LAST_RE.match(text):
        step = _UNITS[m.group(2)]
        return {"next": now + step, "last": now - step, "this": now}[m.group(1)]
    try:
        return from_iso(raw)
    except ValueError:
        pass
    if any(ch.isdigit() for ch in text) or any(len(w) >= 3 for w in text.split()):
        from dateutil import parser as dateutil_parser  # only here: it costs ~15 ms to import

        try:
            dt = dateutil_parser.parse(raw, default=today.replace(tzinfo=None))
        except (ValueError, OverflowError):
            pass
        else:
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
            return dt.astimezone(UTC)
    raise InvalidInput(
        f"{what}: cannot understand date {raw!r} "
        "(use ISO like 2026-04-01 or 2026-04-01T09:30, or words like 'in 2 weeks', '3 days ago', 'tomorrow')"
    )
