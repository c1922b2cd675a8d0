"""A memory's free-form fields as they are stored: one rule for `store` (CLI, MCP, daemon, Python API) and
`import`, so that a field cannot reach the store unscrubbed through one path but not another (docs/architecture.md,
principle 1). The text loses private spans and secrets; source is scrubbed the same way, entered_by as a label
(`scrub_label`: a bare random-looking token goes too); a tag that holds a secret (by the label rules) is dropped
rather than stored redacted (a tag is a label, not a sentence)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from codememory.core.model import normalize_tags, validate_text
from codememory.errors import InvalidInput
from codememory.text.privacy import scrub, scrub_label


def clean_text(text: str) -> str:
    """The text scrubbed; InvalidInput when nothing is left or it is too long."""
    valid = validate_text(text)
    cleaned = scrub(valid)
    if cleaned is valid:  # nothing was taken out (most texts): checked already, and checking is idempotent
        return valid
    if not cleaned.strip():
        raise InvalidInput("memory text is empty after removing private spans and secrets")
    return validate_text(cleaned)  # a redaction marker can be longer than the secret it replaces


def clean_label(value: str | None) -> str | None:
    """source: scrubbed, None when empty."""
    return _cached(value, label=False) or None if value else None


def clean_name(value: str | None) -> str | None:
    """entered_by: scrubbed as a label (`scrub_label`: a random-looking token goes too), None when empty."""
    return _cached(value, label=True) or None if value else None


def clean_tags(tags: str | Sequence[str] | None) -> list[str]:
    """Normalised tags ('a,b' or a list), without the ones that hold a secret (`scrub_label`)."""
    if tags is None:
        return []
    items = tuple(tags.split(",") if isinstance(tags, str) else [str(t) for t in tags])
    if sum(map(len, items)) > 1000:
        return _clean_tag_items(items)
    return list(_clean_tag_list(items))  # a copy: the caller may change its list


def _clean_tag_items(items: tuple[str, ...]) -> list[str]:
    return normalize_tags([t for t in items if _cached(t, label=True) == t])


@functools.lru_cache(maxsize=8192)
def _clean_tag_list(items: tuple[str, ...]) -> tuple[str, ...]:
    """The same few tag lists come back on thousands of memories in an import: each is cleaned once per process."""
    return tuple(_clean_tag_items(items))


def _cached(value: str, *, label: bool) -> str:
    """Labels and tags repeat (the same agent, tags and sources on thousands of memories in an import): each
    distinct short one is scrubbed once per process (scrubbing depends on nothing but the text)."""
    if len(value) > 200:
        return scrub_label(value) if label else scrub(value)
    return _scrub_short(value, label)


@functools.lru_cache(maxsize=8192)
def _scrub_short(value: str, label: bool) -> str:
    return scrub_label(value) if label else scrub(value)
