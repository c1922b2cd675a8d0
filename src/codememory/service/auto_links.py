"""Which of a new memory's close neighbours it is linked to on write (`refines` or `contextualizes`).

A cosine alone is weak evidence that two notes of one project belong together: on e5's compressed scale unrelated
notes of a project score 0.80-0.87 and related ones 0.83-0.90, so any cosine that keeps the unrelated out keeps
nearly every related pair out too. A link therefore needs the two memories to name the same thing (an entity both
hold: a library, tool, service, file, identifier) and a cosine over the model's `link` value; meaning alone links
only over `link_alone` (embedding/relevance.py: per model, calibrated on labelled pairs by
benchmarks/bench_links.py; figures in benchmarks/README.md, "Links and paraphrases")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codememory.embedding.relevance import Scale

# Nearest neighbours looked at: the closest by cosine need not be the ones that name the same thing.
LINK_POOL = 20


def shared_names(a: Iterable[str], b: Iterable[str]) -> set[str]:
    """The entity names two memories both hold (compared case-insensitively)."""
    return {n.lower() for n in a} & {n.lower() for n in b}


def link_worthy(cosine: float, shared: set[str], scale: Scale) -> bool:
    """Whether two memories this close, naming `shared` in common, are related enough to link."""
    return cosine >= scale.link_alone or (bool(shared) and cosine >= scale.link)


def links_to_make(
    neighbours: Sequence[tuple[int, float]],
    own_names: Iterable[str],
    names_of: Mapping[int, Sequence[str]],
    scale: Scale,
    limit: int,
) -> list[tuple[int, float]]:
    """The (neighbour pk, cosine) pairs worth a link, closest first, at most `limit`."""
    own = list(own_names)
    chosen = [
        (pk, cosine)
        for pk, cosine in sorted(neighbours, key=lambda n: -n[1])
        if link_worthy(cosine, shared_names(own, names_of.get(pk, ())), scale)
    ]
    return chosen[: max(limit, 0)]
