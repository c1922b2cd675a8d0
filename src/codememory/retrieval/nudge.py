"""The small nudges every ranking applies after its evidence: importance and recency reorder near-equals only, and a
memory a staleness check marked loses ground."""

from __future__ import annotations

import math
from datetime import datetime

from codememory.core.dates import from_iso

IMPORTANCE_WEIGHT = 0.10
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0


def nudges(importance: float, created_at: str, now: datetime) -> tuple[float, float]:
    """(importance nudge, recency nudge): ±0.05 around importance 0.5, and up to +0.05 halving every 30 days."""
    try:
        age_days = max(0.0, (now - from_iso(created_at)).total_seconds() / 86400)
    except ValueError:
        age_days = 365.0
    recency = math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
    return IMPORTANCE_WEIGHT * (importance - 0.5), RECENCY_WEIGHT * recency


def demote(score: float, stale: bool, factor: float) -> float:
    """A stale memory's score made worse by `factor` ([staleness] demote): a positive score times the factor, a
    negative one times 2 - factor, so a stale memory always loses ground."""
    if not stale or factor >= 1.0:
        return score
    return score * factor if score >= 0 else score * (2.0 - factor)
