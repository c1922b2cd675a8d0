"""`*Remember*: …` notes in agent output, with automatic tags and expiry (the llmemory seed's
extractRememberPatterns, autoExtractTags and autoExtractExpiration).

A note starts at `*Remember*` (optional colon, then whitespace) and ends at the end of its paragraph (a
blank line) or at the next `*Remember*`. The scan is one pass over the text; a note longer than a
memory may be (`REMEMBER_NOTE_MAX_CHARS`) is reported as skipped, never stored cut, and the notes after
it are still found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from codememory.core.bounded_input import REMEMBER_NOTE_MAX_CHARS
from codememory.core.dates import now_utc
from codememory.core.lazy_pattern import lazy_pattern

_MARKER_RE = lazy_pattern(r"\*Remember\*", re.IGNORECASE)
_SPACE_RE = lazy_pattern(r"\s*")
_BLANK_LINE_RE = lazy_pattern(r"\n[^\S\n]*\n")  # a newline, spaces or tabs only, a newline

_TECH_TAGS = {
    "docker": lazy_pattern(r"docker|container|compose", re.I),
    "kubernetes": lazy_pattern(r"k8s|kubernetes|kubectl", re.I),
    "git": lazy_pattern(r"\bgit\b|github|gitlab", re.I),
    "nodejs": lazy_pattern(r"node\.?js|\bnpm\b|\byarn\b", re.I),
    "postgresql": lazy_pattern(r"postgres|postgresql", re.I),
    "nixos": lazy_pattern(r"\bnix\b|nixos|flake", re.I),
    "python": lazy_pattern(r"\bpython\b|\bpip\b|pytest|\bvenv\b", re.I),
    "typescript": lazy_pattern(r"typescript|\btsc\b|\.tsx?\b", re.I),
}
_TOPIC_TAGS = {
    "troubleshooting": lazy_pattern(r"error|bug|fix", re.I),
    "performance": lazy_pattern(r"performance|optimi[sz]e", re.I),
    "security": lazy_pattern(r"security|vulnerab", re.I),
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


@dataclass(frozen=True)
class SkippedNote:
    """A note too long to be a memory: left out of the scan's results, with what the user needs to find it."""

    length: int  # characters
    start: str  # its first words, on one line

    def __str__(self) -> str:
        return (
            f"skipped a *Remember* note of {self.length:,} characters starting {self.start!r}"
            f" (a note holds at most {REMEMBER_NOTE_MAX_CHARS:,}; end it with a blank line)"
        )


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


def _note_spans(text: str) -> Iterator[tuple[int, int, int]]:
    """(marker start, body start, body end) of every note, in one pass: each stretch of text between two
    markers is searched at most twice."""
    size = len(text)
    marker = _MARKER_RE.search(text)
    while marker is not None:
        after = marker.end() + (1 if text.startswith(":", marker.end()) else 0)
        body = _SPACE_RE.match(text, after).end()  # type: ignore[union-attr]  # \s* always matches
        following = _MARKER_RE.search(text, body)
        if body in (after, size) or (following is not None and following.start() == body):
            marker = following  # no whitespace after the marker, or nothing before the next one
            continue
        end = following.start() if following is not None else size
        blank = _BLANK_LINE_RE.search(text, body, end)
        if blank is not None:
            end = blank.start()
            following = _MARKER_RE.search(text, end)
        yield marker.start(), body, end
        marker = following


def without_remember_notes(text: str) -> str:
    """The text with every `*Remember*: …` note (to the end of its paragraph) taken out."""
    parts: list[str] = []
    last = 0
    for start, _body, end in _note_spans(text):
        parts += [text[last:start], "\n\n"]
        last = end
    parts.append(text[last:])
    return "".join(parts)


@dataclass
class RememberScan:
    notes: list[RememberNote] = field(default_factory=list)
    skipped: list[SkippedNote] = field(default_factory=list)
    more: bool = False  # stopped at `max_notes`: the text holds further notes, not scanned


def scan_remember_notes(text: str, now: datetime | None = None, max_notes: int | None = None) -> RememberScan:
    """The notes in `text` (at most `max_notes`), and those skipped for being longer than a memory may be."""
    scan = RememberScan()
    for _start, body_start, end in _note_spans(text):
        body = text[body_start:end].strip()
        if not body:
            continue
        if max_notes is not None and len(scan.notes) + len(scan.skipped) >= max_notes:
            scan.more = True
            break
        if len(body) > REMEMBER_NOTE_MAX_CHARS:
            words = " ".join(body[:200].split())[:60]
            scan.skipped.append(SkippedNote(len(body), "".join(c if c.isprintable() else "?" for c in words)))
        else:
            scan.notes.append(RememberNote(body, auto_tags(body), auto_expiry(body, now)))
    return scan


def extract_remember_notes(text: str, now: datetime | None = None) -> list[RememberNote]:
    """The notes in `text` (those too long to be a memory left out)."""
    return scan_remember_notes(text, now).notes
