"""What two close memories are to each other, decided without a model: the same fact said twice (squash), the
same subject with an updated value (the newer supersedes the older), a reversal (conflicts), or two facts that
merely share words (left alone).

Squashing is the only decision that hides a text, so it needs one of three strong signs, and never crosses a
difference of value or polarity: one memory's content words are all in the other's; the same content words in
any order (in the same order around a contrast: "httpx instead of requests" is not "requests instead of
httpx"); or the same category and entities with a near-identical meaning (a cosine over the near-identical
threshold) and a good share of words in common. Everything else either gets a link or nothing."""

from __future__ import annotations

from dataclasses import dataclass

from codememory.operations.consolidation.facts import Fact, jaccard

SQUASH = "squash"
SUPERSEDES = "supersedes"
CONFLICTS = "conflicts"

MIN_CONTAINED_WORDS = 3  # a shorter memory "contained" in another must say at least this much
NEAR_WORD_SHARE = 0.4  # words in common (Jaccard) a near-identical meaning also needs
SAME_SUBJECT = 0.75  # words in common (values aside) for "the same subject with another value"
REVERSAL = 0.6  # words in common (negations aside) for "the same statement, negated"


@dataclass(frozen=True)
class Decision:
    kind: str  # SQUASH, SUPERSEDES (from `a` to `b`: a is newer), CONFLICTS
    a: Fact
    b: Fact
    reason: str


def _show(values: tuple[tuple[str, ...], frozenset[str]]) -> str:
    numbers, paths = values
    return ", ".join([*numbers, *sorted(paths)]) or "none"


def _reversed_roles(a: Fact, b: Fact) -> bool:
    """Both name the same things against each other, in another order ("X instead of Y" / "Y instead of X")."""
    if not (a.contrast and b.contrast):
        return False
    common = [e for e in a.entity_order if e in b.entities]
    return len(common) >= 2 and common != [e for e in b.entity_order if e in a.entities]


def _contained(small: Fact, big: Fact) -> bool:
    return (
        len(small.words) >= MIN_CONTAINED_WORDS
        and small.words <= big.words
        and small.entities <= big.entities
        and len(small.words) < len(big.words)
    )


def decide(a: Fact, b: Fact, cosine: float | None, near: float) -> Decision | None:
    """The rules' decision for a pair of live memories (`cosine`: their similarity, None without vectors; `near`:
    the near-identical threshold for the model that made the vectors)."""
    if a.negated != b.negated and not (a.contrast or b.contrast):
        share = jaccard(a.words, b.words)
        if share >= REVERSAL and a.values == b.values:
            return _conflict(a, b, f"one says the opposite of the other ({share:.2f} of the words in common)")
        return None
    if a.negated != b.negated:
        return None
    if _reversed_roles(a, b):
        return _conflict(a, b, "the same things named in reverse roles")
    if a.values != b.values:
        share = jaccard(a.words, b.words)
        if share < SAME_SUBJECT:
            return None  # two facts that share words
        newer, older = (a, b) if a.memory.created_at > b.memory.created_at else (b, a)
        change = f"{_show(older.values)} -> {_show(newer.values)}"
        if newer.memory.created_at == older.memory.created_at:
            return _conflict(a, b, f"the same subject with different values ({change})")
        return Decision(SUPERSEDES, newer, older, f"the same subject with an updated value ({change})")
    if a.words == b.words and a.entities == b.entities:
        return Decision(SQUASH, a, b, "the same content words")
    if _contained(a, b) or _contained(b, a):
        return Decision(SQUASH, a, b, "one memory's content is contained in the other's")
    if (
        cosine is not None
        and cosine >= near
        and a.memory.category == b.memory.category
        and a.entities == b.entities
        and jaccard(a.words, b.words) >= NEAR_WORD_SHARE
    ):
        return Decision(SQUASH, a, b, f"near-identical meaning (cosine {cosine:.3f}), same category and entities")
    return None


def _conflict(a: Fact, b: Fact, reason: str) -> Decision:
    newer, older = (a, b) if a.memory.created_at >= b.memory.created_at else (b, a)
    return Decision(CONFLICTS, newer, older, reason)


def keeper(group: list[Fact]) -> Fact:
    """The member whose text a rules squash keeps: the one that says most (its words cover the others' best),
    then the most important, then the newest."""
    every = frozenset().union(*(f.words for f in group))

    def rank(f: Fact) -> tuple[int, int, float, str]:
        return (len(f.words & every), len(f.words), f.memory.importance, f.memory.created_at)

    return max(group, key=rank)
