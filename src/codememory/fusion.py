"""How lexical and semantic evidence combine into one ranking (tuned on data: benchmarks/README.md)."""

from __future__ import annotations

from typing import Any

LEXICAL_WEIGHT = 0.5
SEMANTIC_WEIGHT = 0.5


def _minmax(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    span = hi - lo
    return {k: (v - lo) / span if span > 0 else 1.0 for k, v in values.items()}


def fuse(lexical: dict[int, float], cosine: dict[int, float]) -> dict[int, tuple[float, dict[str, Any]]]:
    """lexical: BM25 relevance (higher is better) of the lexical candidates; cosine: similarity of every
    candidate that has a vector. Returns each candidate's fused score with the parts that made it."""
    lex_n = _minmax(lexical)
    cos_n = _minmax(cosine)
    out: dict[int, tuple[float, dict[str, Any]]] = {}
    for pk in set(lexical) | set(cosine):
        lex, sem = lex_n.get(pk, 0.0), cos_n.get(pk, 0.0)
        score = LEXICAL_WEIGHT * lex + SEMANTIC_WEIGHT * sem
        out[pk] = (
            score,
            {
                "bm25": round(lexical[pk], 4) if pk in lexical else None,
                "cosine": round(cosine[pk], 4) if pk in cosine else None,
                "lexical_part": round(LEXICAL_WEIGHT * lex, 4),
                "semantic_part": round(SEMANTIC_WEIGHT * sem, 4),
            },
        )
    return out
