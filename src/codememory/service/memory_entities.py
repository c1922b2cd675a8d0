"""The entities of a memory as the store records them (when it is added or imported), and entity names as the
filters and retrieval take them."""

from __future__ import annotations

from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern
from codememory.text.privacy import scrub

_IDENTIFIER_RE = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_.:-]{1,63}")


def entity_names(entity: str | Sequence[str] | None) -> list[str]:
    """Normalised entity names from a comma-separated string or a list (duplicates once)."""
    if not entity:
        return []
    items = entity.split(",") if isinstance(entity, str) else list(entity)
    from codememory.text.entities import normalize_entity_name

    return list(dict.fromkeys(normalize_entity_name(e) for e in items if e.strip()))


def entities_in(text: str, given: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(name, type) of the entities in the text, then of the `given` names: a given name is kept when the
    extractor recognises it, or when it is one identifier-like word (`CartService`, `retry_policy`)."""
    from codememory.text.entities import (  # its regexes and vocabulary load only when memories are written
        entity_pairs,
        extract_entities,
    )

    found = dict(entity_pairs(text))
    for raw in given:
        name = scrub(str(raw)).strip()
        if not name or len(name) > 100 or "[REDACTED" in name:
            continue
        known = extract_entities(name)
        if known:
            found.update((e.name, e.type) for e in known if e.name not in found)
        elif _IDENTIFIER_RE.fullmatch(name):
            found.setdefault(name, "identifier")
    return list(found.items())
