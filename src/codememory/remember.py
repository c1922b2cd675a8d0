"""`*Remember*: …` notes in agent output, with automatic tags and expiry (the llmemory seed's
extractRememberPatterns, autoExtractTags and autoExtractExpiration)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from .dates import now_utc

_REMEMBER_RE = re.compile(r"\*Remember\*:?\s+(.+?)(?=\n\s*\n|\*Remember\*|\Z)", re.IGNORECASE | re.DOTALL)

_TECH_TAGS = {
    "docker": re.compile(r"docker|container|compose", re.I),
    "kubernetes": re.compile(r"k8s|kubernetes|kubectl", re.I),
    "git": re.compile(r"\bgit\b|github|gitlab", re.I),
    "nodejs": re.compile(r"node\.?js|\bnpm\b|\byarn\b", re.I),
    "postgresql": re.compile(r"postgres|postgresql", re.I),
    "nixos": re.compile(r"\bnix\b|nixos|flake", re.I),
    "python": re.compile(r"\bpython\b|\bpip\b|pytest|\bvenv\b", re.I),
    "typescript": re.compile(r"typescript|\btsc\b|\.tsx?\b", re.I),
}
_TOPIC_TAGS = {
    "troubleshooting": re.compile(r"error|bug|fix", re.I),
    "performance": re.compile(r"performance|optimi[sz]e", re.I),
    "security": re.compile(r"security|vulnerab", re.I),
}
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}


@dataclass
class RememberNote:
    text: str
    tags: list[str] = field(default_factory=list)
    expires_at: datetime | None = None


def auto_tags(text: str) -> list[str]:
    return [tag for table in (_TECH_TAGS, _TOPIC_TAGS) for tag, pattern in table.items() if pattern.search(text)]


def _month_end(year: int, month: int) -> datetime:
    first_next = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return first_next - timedelta(milliseconds=1)


def auto_expiry(text: str, now: datetime | None = None) -> datetime | None:
    """'valid until March 2027' -> end of that month; 'expires 2027-01-31' -> that day; 'Q2 2027' ->
    end of that quarter; 'temporary' -> 90 days from now. None when the note says nothing."""
    now = now or now_utc()
    if m := re.search(r"valid (?:through|until) (\w+) (\d{4})", text, re.I):
        month = _MONTHS.get(m.group(1).lower())
        if month:
            return _month_end(int(m.group(2)), month)
    if m := re.search(r"expires? (?:on )?(\d{4}-\d{2}-\d{2})", text, re.I):
        try:
            return datetime.fromisoformat(m.group(1)).replace(tzinfo=UTC) + timedelta(days=1, milliseconds=-1)
        except ValueError:
            pass
    if m := re.search(r"\bQ([1-4]) (\d{4})\b", text, re.I):
        return _month_end(int(m.group(2)), int(m.group(1)) * 3)
    if re.search(r"\btemporary\b|\btemp\b", text, re.I):
        return now + timedelta(days=90)
    return None


def without_remember_notes(text: str) -> str:
    """The text with every `*Remember*: …` note (to the end of its paragraph) taken out."""
    return _REMEMBER_RE.sub("\n\n", text)


def extract_remember_notes(text: str, now: datetime | None = None) -> list[RememberNote]:
    notes = []
    for match in _REMEMBER_RE.finditer(text):
        body = match.group(1).strip()
        if body:
            notes.append(RememberNote(body, auto_tags(body), auto_expiry(body, now)))
    return notes
