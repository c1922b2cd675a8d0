"""Checks on values read back from a store, before anything uses or shows them.

A store may come from a cloned repository, and SQLite enforces little (a hostile file can hold rows that
break every CHECK constraint, blobs where text belongs, newlines in ids). So rows are checked as they
are mapped: a memory with a bad id, an unknown category or no text is skipped (with one logged warning),
and a bad optional field is dropped to its default. `VALID_MEMORY_SQL` states the skip rule in SQL so
that filtered queries never pick a row the mapper would skip; `repair` uses the same checks to decide
what it keeps.
"""

from __future__ import annotations

import json
from typing import Any

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import CATEGORIES, DEFAULT_IMPORTANCE, ID_RE, MAX_TEXT, Memory
from codememory.core.provenance import stored_provenance
from codememory.core.safe_text import printable_line

MAX_STAMP = 40  # canonical timestamps are 24 characters
MAX_LABEL = 1000  # entered_by, source, tags, entity names, tool names
MAX_CONTENT = 100_000  # a session chunk, a goal, a captured turn's summary
MAX_PATH = 400
_WARNINGS_SHOWN = 5

_STAMP_RE = lazy_pattern(r"[ -~]{1,40}")  # printable ASCII: no newline, no control character
_NAME_RE = lazy_pattern(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,199}")  # session ids, tools, slugs, sources, turn ids
_SESSION_MD_RE = lazy_pattern(r"sessions/[^/\\\x00-\x1f\x7f]{1,200}\.md")
_CONTROL_RE = lazy_pattern(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_TAG_RE = lazy_pattern(r"[^\s\x00-\x1f\x7f]{1,100}")

_HEX8 = "[0-9a-f]" * 8
VALID_MEMORY_SQL = (
    f"m.id GLOB 'mem_{_HEX8}' AND m.category IN ({', '.join(repr(c) for c in CATEGORIES)}) "
    "AND typeof(m.text) = 'text' AND length(m.text) BETWEEN 1 AND 10000 "
    "AND typeof(m.importance) IN ('real', 'integer') AND m.importance BETWEEN 0 AND 1 "
    "AND typeof(m.created_at) = 'text' AND m.created_at GLOB '[0-9]*' AND length(m.created_at) <= 40 "
    "AND typeof(m.updated_at) = 'text' AND length(m.updated_at) <= 40"
)

_shown = 0


def warn(message: str) -> None:
    """Log that a stored value was refused (the first few per process; logging is imported only then,
    as hooks pay for every import)."""
    global _shown
    _shown += 1
    if _shown > _WARNINGS_SHOWN:
        return
    import logging

    note = "" if _shown < _WARNINGS_SHOWN else " (further invalid rows are skipped silently)"
    logging.getLogger("codememory.store").warning(
        "codememory: warning: %s; run 'codememory repair' to rebuild a clean store%s", escape(message), note
    )


def escape(value: object, limit: int = 120) -> str:
    """A stored value of any type as it may appear in a message (`printable_line` of its text or repr)."""
    return printable_line(value if isinstance(value, str) else repr(value), limit)


def is_int(value: object) -> bool:
    """An integer, and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_memory_id(value: object) -> bool:
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


def is_name(value: object) -> bool:
    """An identifier-like value (session id, tool, slug, source, turn id): no path or line separators."""
    return isinstance(value, str) and _NAME_RE.fullmatch(value) is not None


def is_stamp(value: object) -> bool:
    return isinstance(value, str) and _STAMP_RE.fullmatch(value) is not None


def is_text(value: object, limit: int = MAX_CONTENT) -> bool:
    return isinstance(value, str) and len(value) <= limit


def is_label(value: object) -> bool:
    """Short free text shown on one line (an agent name, an entity, a tool)."""
    return isinstance(value, str) and len(value) <= MAX_LABEL and not _CONTROL_RE.search(value) and "\n" not in value


def is_tag(value: object) -> bool:
    return isinstance(value, str) and _TAG_RE.fullmatch(value) is not None


def is_session_markdown(value: object) -> bool:
    """A session's markdown path as the store writes it: sessions/<one file name>.md."""
    return isinstance(value, str) and _SESSION_MD_RE.fullmatch(value) is not None and ".." not in value[9:-3]


def is_relative_path(value: object) -> bool:
    """A path under .codememory/ (a daily log): relative, no '..', no control character."""
    if not isinstance(value, str) or not value or len(value) > MAX_PATH or _CONTROL_RE.search(value):
        return False
    parts = value.replace("\\", "/").split("/")
    return not value.startswith(("/", "\\")) and ":" not in parts[0] and all(p not in ("", ".", "..") for p in parts)


def memory_problem(mid: object, text: object, category: object) -> str | None:
    """Why a memory row must be skipped (the rule VALID_MEMORY_SQL also states), or None."""
    if not is_memory_id(mid):
        return f"id {escape(mid)} is not mem_ followed by 8 hex digits"
    if category not in CATEGORIES:
        return f"memory {mid} has unknown category {escape(category)}"
    if not isinstance(text, str) or not text:
        return f"memory {mid} has no text"
    return None


def memory_from_row(r: tuple[Any, ...], tags: list[str]) -> Memory | None:
    """Map (pk, id, text, category, importance, entered_by, source, created_at, updated_at, expires_at,
    access_count, last_accessed_at, archived, superseded_by, origin, origin_by, origin_at, review) to a Memory, or
    None (warned) if unusable. An unknown origin reads as an untrusted one (stored_provenance)."""
    pk, mid, text, category = r[0], r[1], r[2], r[3]
    problem = memory_problem(mid, text, category)
    if problem is not None:
        warn(f"skipped memory row {escape(pk)}: {problem}")
        return None
    assert isinstance(mid, str) and isinstance(text, str) and isinstance(category, str)
    importance = r[4]
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 1:
        importance = DEFAULT_IMPORTANCE
    access = r[10] if isinstance(r[10], int) and r[10] >= 0 else 0
    good_tags = [t for t in tags if is_tag(t)]
    if len(good_tags) != len(tags):
        warn(f"dropped invalid tags of memory {mid}")
    return Memory(
        id=mid,
        text=text[:MAX_TEXT],
        category=category,
        importance=float(importance),
        tags=good_tags,
        entered_by=r[5] if is_label(r[5]) else None,
        source=r[6] if is_text(r[6], MAX_LABEL) else None,
        created_at=r[7] if is_stamp(r[7]) else "",
        updated_at=r[8] if is_stamp(r[8]) else "",
        expires_at=r[9] if is_stamp(r[9]) else None,
        access_count=access,
        last_accessed_at=r[11] if is_stamp(r[11]) else None,
        archived=r[12] == 1,
        superseded_by=r[13] if is_memory_id(r[13]) else None,
        provenance=stored_provenance(*r[14:18]),
    )


def json_object(raw: object, required: str, optional: str) -> dict[str, Any] | None:
    """A stored JSON object {required: str, optional: str or null} (a plan file, a reference), else None."""
    if not isinstance(raw, str) or len(raw) > MAX_CONTENT:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get(required), str):
        return None
    extra = value.get(optional)
    if extra is not None and not isinstance(extra, str):
        return None
    return {k: value[k] for k in (required, optional) if k in value}
