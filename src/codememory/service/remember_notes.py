"""Storing the `*Remember*: ...` notes of a text (`Store.remember_scan`: the hooks, `codememory remember-scan`),
bounded so that a huge or hostile text costs a bounded amount of work."""

from __future__ import annotations

from collections.abc import Callable

from codememory.core.bounded_input import REMEMBER_SCAN_MAX_BYTES, REMEMBER_SCAN_MAX_NOTES, size_text
from codememory.core.dates import now_utc
from codememory.errors import InvalidInput
from codememory.service.results import AddResult
from codememory.text.privacy import scrub
from codememory.text.remember import scan_remember_notes

Add = Callable[..., AddResult]  # Store.add


def remember_notes(
    add: Add,
    text: str,
    *,
    entered_by: str | None = None,
    source: str | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> list[AddResult]:
    """Store (through `add`) every note in `text`; see `Store.remember_scan` for the rules."""
    warn = on_warning or (lambda _message: None)
    if len(text) > REMEMBER_SCAN_MAX_BYTES:
        cut = text.rfind("\n", 0, REMEMBER_SCAN_MAX_BYTES) + 1 or REMEMBER_SCAN_MAX_BYTES
        text = text[:cut]
        limit = size_text(REMEMBER_SCAN_MAX_BYTES)
        warn(f"the text is over the {limit} limit; scanned its first {cut:,} characters")
    if "*remember*" not in text.lower():
        return []  # nothing to scrub a long text for
    now = now_utc()
    scan = scan_remember_notes(scrub(text), now, max_notes=REMEMBER_SCAN_MAX_NOTES)
    for skipped in scan.skipped:
        warn(str(skipped))
    if scan.more:
        warn(f"stopped after {REMEMBER_SCAN_MAX_NOTES:,} notes; the notes after them were not stored")
    results = []
    for note in scan.notes:
        if not scrub(note.text).strip():
            continue
        expires = note.expires_at if note.expires_at and note.expires_at > now else None
        try:
            added = add(
                note.text, tags=note.tags, expires=expires, entered_by=entered_by or "auto-extract", source=source
            )
        except InvalidInput as exc:  # one bad note must not cost the others
            warn(f"skipped a *Remember* note: {exc}")
            continue
        results.append(added)
    return results
