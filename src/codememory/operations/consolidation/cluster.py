"""Candidate pairs for consolidation and the clusters they form (connected components of the similarity graph).

With vectors: every pair of live memories whose cosine reaches the threshold (the model's `cluster` value, or
`[consolidation] similarity_threshold` when the user set it: embedding/relevance.py), computed block by block so
10k memories need no 10k x 10k matrix in memory. Without vectors: pairs that share most of their content words
(a Jaccard or an overlap coefficient over content words, candidates by prefix filtering), so consolidation still
finds copies and contained restatements."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codememory.operations.consolidation.facts import Fact

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BLOCK = 1024
LEXICAL_JACCARD = 0.5
LEXICAL_OVERLAP = 0.8  # of the shorter memory's words: a restatement contained in a longer memory
# Words in more memories than this are not indexed: a pair that shares only such words is not compared (a
# copy or restatement shares its rarer words too), and indexing them makes the pairs quadratic.
COMMON = 50


def vector_edges(matrix: npt.NDArray[np.float32], threshold: float) -> list[tuple[int, int, float]]:
    """(i, j, cosine) for i < j with cosine >= threshold; rows of `matrix` are unit vectors."""
    import numpy as np

    n = len(matrix)
    out: list[tuple[int, int, float]] = []
    for start in range(0, n, BLOCK):
        sims = matrix[start : start + BLOCK] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold)
        keep = cols > rows + start
        for r, c in zip(rows[keep].tolist(), cols[keep].tolist(), strict=True):
            out.append((start + r, c, float(sims[r, c])))
    return out


def lexical_edges(facts: Sequence[Fact]) -> list[tuple[int, int, float | None]]:
    """(i, j, None) for pairs that share most of their content words (no cosine to give). Candidates come from
    prefix filtering: each memory is indexed under its rarest words only (as many as a pair over the Jaccard
    threshold must have in common there), and never under a word more than COMMON memories use."""
    import math
    from collections import Counter

    freq = Counter(w for f in facts for w in f.words)
    postings: dict[str, list[int]] = defaultdict(list)
    candidates: set[tuple[int, int]] = set()
    for i, fact in enumerate(facts):
        words = sorted(fact.words, key=lambda w: (freq[w], w))
        for word in words[: len(words) - math.ceil(LEXICAL_JACCARD * len(words)) + 1]:
            if freq[word] > COMMON:
                break  # the rest of the prefix is commoner still
            candidates.update((j, i) for j in postings[word])
            postings[word].append(i)
    out: list[tuple[int, int, float | None]] = []
    for i, j in sorted(candidates):
        a, b = facts[i].words, facts[j].words
        n = len(a & b)
        if n and (n / len(a | b) >= LEXICAL_JACCARD or n / min(len(a), len(b)) >= LEXICAL_OVERLAP):
            out.append((i, j, None))
    return out


def components(n: int, edges: Sequence[tuple[int, int, float | None]]) -> list[list[int]]:
    """Connected components of size two or more, each sorted, largest first."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, _score in edges:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    for x in range(n):
        groups[root(x)].append(x)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g[0]))
