"""Entity garbage collection: one entity per thing. Spellings of one tool or library (`py.test` / `pytest`,
`postgres` / `PostgreSQL`, `K8s` / `kubernetes`) and paths written two ways (`./src/app.py` / `src/app.py`) are
merged into the canonical name, by the alias table of well-known spellings (data/tech_vocabulary.txt) and the
normalisation entity lookups already use (text.entities.normalize_entity_name). Names the vocabulary does not
know keep their case: `CartService` and `cartservice` may well be two symbols."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EntityMerge:
    entity_id: int
    name: str
    type: str
    into: str
    into_type: str
    memories: int


def plan_entity_merges(rows: list[tuple[int, str, str, int]]) -> list[EntityMerge]:
    """rows: (entity id, name, type, memories naming it). The merges that leave one entity per canonical name."""
    from codememory.text.entities import normalize_entity_name
    from codememory.text.entity_vocabulary import vocabulary

    known = vocabulary()
    types = {name: typ for _id, name, typ, _n in rows}
    out: list[EntityMerge] = []
    for entity_id, name, typ, count in rows:
        canonical = normalize_entity_name(name)
        if not canonical or canonical == name:
            continue
        term = known.aliases.get(canonical.lower())
        into_type = types.get(canonical) or (term.type if term is not None else typ)
        out.append(EntityMerge(entity_id, name, typ, canonical, into_type, count))
    return out
