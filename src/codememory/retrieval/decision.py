"""The relevance decision: which of a ranking's candidates are shown, on absolute evidence.

Ranking orders; this decides. Two questions, each against a bar calibrated per embedding model on labelled
project-sized stores (retrieval/evidence.py; the figures and the curve in benchmarks/README.md):

1. **Is the query answered at all?** Only when its best candidate is likely relevant (`likelihood` at least
   `Bars.answer`), and more so when the query's distinctive words are in no memory at all (`Bars.unknown` raises
   the bar by that share of the query's word weight: a question about "kafka" in a store that never mentions it is
   rarely answered by whatever memory is closest in meaning). A question about something the memory does not hold
   gets nothing, however close its nearest memories happen to be.
2. **What else is worth showing?** For an answered query, every candidate whose own likelihood clears the lower
   `Bars.keep` and is at least `Bars.ratio` of the best one's: a second memory about the same thing stays, one that
   is merely the next closest does not. A candidate whose likelihood against the background alone
   (`background_likelihood`: without how far it stands out from the store's other memories) reaches `Bars.strong`
   stays too: in a conversation log many turns answer one question and none stands out from the others.

Entries that carry no likelihood (the strict keyword matches of explicit query syntax: `"a phrase"`, OR, NOT,
prefix*) are what the user's syntax asked for and always stay. The ranking's order is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

Entry = tuple[float, int, str, dict[str, Any]]  # (score, pk, match, explain): retrieval.lexical.Ranked's rows


@dataclass(frozen=True)
class Bars:
    answer: float  # the best candidate's likelihood must reach this for anything to be shown
    keep: float  # each shown candidate's own likelihood must reach this ...
    ratio: float = 0.0  # ... and this share of the best candidate's
    unknown: float = 0.0  # log-odds added to the answer bar per unit of the query's word weight no memory holds
    strong: float = 2.0  # ... or its likelihood against the background alone (no standout) must reach this (>1: never)

    def lenient(self, slack: float) -> Bars:
        """The bars lowered by `slack` (a memory an agent was already shown keeps its place a little longer)."""
        return Bars(
            max(0.0, self.answer - slack), max(0.0, self.keep - slack), self.ratio, self.unknown, self.strong - slack
        )

    def answered(self, best: float, unknown_share: float) -> bool:
        """Whether a query whose best candidate has likelihood `best` is answered, `unknown_share` of its word weight
        being in no memory."""
        if best < self.answer:
            return False
        if not self.unknown or unknown_share <= 0 or best >= 1.0:
            return True
        bar = _logit(self.answer) + self.unknown * unknown_share
        return _logit(best) >= bar


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def best_likelihood(order: list[Entry]) -> float | None:
    values = [p for _, _, _, explain in order if (p := explain.get("likelihood")) is not None]
    return max(values) if values else None


def decide(order: list[Entry], bars: Bars, unknown_share: float = 0.0) -> tuple[list[Entry], list[Entry]]:
    """(kept, held back), each in ranking order; `unknown_share`: how much of the query's word weight no memory
    holds (0..1)."""
    best = best_likelihood(order) or 0.0
    answered = bars.answered(best, unknown_share)
    kept: list[Entry] = []
    held: list[Entry] = []
    for entry in order:
        p = entry[3].get("likelihood")
        plain = entry[3].get("background_likelihood")
        strong = plain is not None and plain >= bars.strong
        ok = p is None or (answered and ((p >= bars.keep and p >= bars.ratio * best) or strong))
        (kept if ok else held).append(entry)
    return kept, held


def nothing_found(held_back: int, how_to_see: str = "") -> str:
    """What a search that returns nothing says (the CLI on stderr, MCP and the daemon in `note`): that nothing was
    likely relevant, and how many candidates were compared (`how_to_see`: where to see them anyway). Worded as
    memories compared, not "held back": with a model every memory is a candidate, and "12 held back" for "who is the
    CEO?" read as if twelve had nearly matched."""
    if not held_back:
        return "Nothing relevant found."
    memories = "memory" if held_back == 1 else "memories"
    see = f" ({how_to_see})" if how_to_see else ""
    return f"Nothing relevant found: none of the {held_back} {memories} compared was close enough{see}."
