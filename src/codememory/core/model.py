"""The memory record and the rules for its fields, shared by every entry point."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.provenance import Provenance
from codememory.errors import InvalidInput

MAX_TEXT = 10_000
DEFAULT_CATEGORY = "note"
DEFAULT_IMPORTANCE = 0.5
CATEGORIES = (
    "decision",
    "rejected_alternative",
    "convention",
    "preference",
    "gotcha",
    "fact",
    "todo",
    "note",
)
ID_RE = lazy_pattern(r"^mem_[0-9a-f]{8}$")
_TAG_SPACE_RE = lazy_pattern(r"\s+")


# Where a memory sits in the session it came from, read from its `source` (documented in docs/search.md):
# "D3:14" (LoCoMo-style <session>:<turn>) or "session:ses_abc turn:14" / "session=ses_abc message=14".
_SOURCE_TURN_RE = lazy_pattern(r"^(?P<session>[^\s:]+):(?P<turn>\d+)$")
_SOURCE_SESSION_RE = lazy_pattern(r"\bsession[:=](?P<session>\S+)(?:\s+(?:turn|message|msg)[:=](?P<turn>\d+))?")


def session_position(source: str | None) -> tuple[str | None, int | None]:
    """(session key, turn number) of a memory's source, or (None, None) when it names no session."""
    if not source:
        return None, None
    if m := _SOURCE_TURN_RE.match(source.strip()):
        return m.group("session"), int(m.group("turn"))
    if m := _SOURCE_SESSION_RE.search(source):
        turn = m.group("turn")
        return m.group("session"), int(turn) if turn else None
    return None, None


def new_memory_id() -> str:
    return "mem_" + os.urandom(4).hex()  # os.urandom, not secrets: that import costs a hook ~5 ms


# Characters that do not occur in text people write: control characters (C0 other than the whitespace ones, DEL,
# C1: what a binary read as Latin-1 is full of), and the replacement character that stands for an undecodable byte.
# Not the escape character that starts a terminal's control sequence (colour, `ESC[1m`): output piped from a terminal
# with colour on is text, and a coloured progress line holds one such escape for every two or three characters.
_NOT_TEXT_RE = lazy_pattern(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]|\x1b(?!\[[0-?]*[ -/]*[@-~])")


def validate_text(text: str) -> str:
    """The text without NUL characters; InvalidInput when empty, too long, or binary data: more than a fifth of it
    (and at least 4 characters) control characters or replacement characters, what a binary file decodes to. A
    few stray ones (a byte that was not UTF-8 in a transcript) pass, kept as they are."""
    odd = len(_NOT_TEXT_RE.findall(text))
    if odd >= 4 and odd * 5 > len(text):
        raise InvalidInput(
            f"memory text looks like binary data, not text ({odd:,} of its {len(text):,} characters are control "
            "or undecodable bytes)"
        )
    text = text.replace("\x00", "")
    if not text.strip():
        raise InvalidInput("memory text is empty")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"memory text is {len(text):,} characters; the limit is {MAX_TEXT:,}")
    return text


def validate_category(category: str | None) -> str:
    if category is None:
        return DEFAULT_CATEGORY
    norm = category.strip().lower().replace("-", "_").replace(" ", "_")
    if norm not in CATEGORIES:
        raise InvalidInput(f"unknown category {category!r}; choose one of: {', '.join(CATEGORIES)}")
    return norm


def validate_importance(importance: float | str | None) -> float:
    if importance is None:
        return DEFAULT_IMPORTANCE
    try:
        value = float(importance)
    except (TypeError, ValueError):
        raise InvalidInput(f"importance must be a number between 0 and 1, got {importance!r}") from None
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"importance must be between 0 and 1, got {value}")
    return value


def normalize_tag(tag: str) -> str:
    """Tags are case-insensitive and whitespace-free: ' Docker Compose ' -> 'docker-compose'."""
    return _TAG_SPACE_RE.sub("-", tag.strip().lstrip("#").strip().lower())


def normalize_tags(tags: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Accept 'a,b' or ['a', 'b']; drop empties and repeats, keep first-seen order."""
    if tags is None:
        return []
    items = tags.split(",") if isinstance(tags, str) else [p for t in tags for p in str(t).split(",")]
    out: list[str] = []
    for item in items:
        tag = normalize_tag(item)
        if tag and tag not in out:
            if len(tag) > 100:
                raise InvalidInput(f"tag is {len(tag)} characters; the limit is 100: {tag[:30]}…")
            out.append(tag)
    return out


@dataclass
class Memory:
    id: str
    text: str
    category: str = DEFAULT_CATEGORY
    importance: float = DEFAULT_IMPORTANCE
    tags: list[str] = field(default_factory=list)
    entered_by: str | None = None
    source: str | None = None
    created_at: str = ""
    updated_at: str = ""
    expires_at: str | None = None
    access_count: int = 0
    last_accessed_at: str | None = None
    archived: bool = False
    superseded_by: str | None = None
    # Where it came from (core/provenance.py): set by the path that stored it, never read from its own fields.
    provenance: Provenance = field(default_factory=Provenance)

    @property
    def ranked_importance(self) -> float:
        """The importance ranking may use: its own when written here, neutral otherwise (a claim)."""
        return self.provenance.ranked_importance(self.importance)

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape used by --json, export and the Python API."""
        return {
            "id": self.id,
            "text": self.text,
            "category": self.category,
            "importance": self.importance,
            "tags": list(self.tags),
            "entered_by": self.entered_by,
            "source": self.source,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at,
            "archived": self.archived,
            "superseded_by": self.superseded_by,
            "provenance": self.provenance.to_dict(),
        }


# How one memory relates to another (memory_links.link_type).
LINK_TYPES = ("corroborates", "conflicts", "supersedes", "refines", "contextualizes")
