"""What two close memories are to each other, decided without a model: the same fact said twice (squash), the
same subject with an updated value (the newer supersedes the older), a reversal (conflicts), or two facts that
merely share words (left alone).

Squashing is the only decision that hides a text, so it needs one of three strong signs: one memory's words
(values and negations included) are a run of the other's, so keeping the longer text loses nothing; the same
content words in any order, with the same values and polarity (in the same order around a contrast: "httpx
instead of requests" is not "requests instead of httpx"); or the same category, entities, values and polarity
with a near-identical meaning (a cosine over the near-identical threshold) and a good share of words in common.
Texts that differ where one names another thing, or in a value or polarity, are never squashed: they get a link
or nothing."""

from __future__ import annotations

from dataclasses import dataclass

from codememory.operations.consolidation.facts import NEGATIONS, Fact, jaccard

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
    """`small` says a part of what `big` says, in the same words, values and negations, in the same order (a set
    of words is not enough: "Redis in front of Postgres ... Redis" holds every word of a copy that put "valkey"
    in front of Postgres). Keeping `big`'s text then loses nothing, whatever else `big` says."""
    if len(small.words) < MIN_CONTAINED_WORDS or not small.entities <= big.entities:
        return False
    if len(small.sequence) >= len(big.sequence):
        return False
    run, text = f" {' '.join(small.sequence)} ", f" {' '.join(big.sequence)} "
    at = text.find(run)
    # "Do not run make check" holds "run make check", negated: a negation just before the run reverses it.
    return at >= 0 and text[:at].split()[-1:] not in ([n] for n in NEGATIONS)


def _name_swapped(a: Fact, b: Fact) -> bool:
    """The texts differ where one names another thing ("ingress-nginx" / "ingress-envoy", "Redis 7" / "Redis
    8"): a small replacement involving a known technology or an identifier-like word. Two facts, however close
    their meaning and their words."""
    from difflib import SequenceMatcher

    from codememory.text.entity_vocabulary import vocabulary

    known = vocabulary().aliases
    ops = SequenceMatcher(a=a.ordered, b=b.ordered, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag != "replace" or i2 - i1 > 2 or j2 - j1 > 2:
            continue
        changed = set(a.ordered[i1:i2]) ^ set(b.ordered[j1:j2])
        if any(t in known or "_" in t or any(ch.isdigit() for ch in t) for t in changed):
            return True
    return False


def decide(a: Fact, b: Fact, cosine: float | None, near: float) -> Decision | None:
    """The rules' decision for a pair of live memories (`cosine`: their similarity, None without vectors; `near`:
    the near-identical threshold for the model that made the vectors)."""
    if _contained(a, b) or _contained(b, a):
        return Decision(SQUASH, a, b, "one memory's content is contained in the other's")
    if a.negations != b.negations:
        share = jaccard(a.words, b.words)
        if share >= REVERSAL and a.values == b.values and not (a.contrast or b.contrast):
            return _conflict(a, b, f"one says the opposite of the other ({share:.2f} of the words in common)")
        return None
    if _reversed_roles(a, b):
        return _conflict(a, b, "the same things named in reverse roles")
    if a.values != b.values:
        share = jaccard(a.words, b.words)
        if share < SAME_SUBJECT or _name_swapped(a, b):
            return None  # two facts that share words
        newer, older = (a, b) if a.memory.created_at > b.memory.created_at else (b, a)
        change = f"{_show(older.values)} -> {_show(newer.values)}"
        if newer.memory.created_at == older.memory.created_at:
            return _conflict(a, b, f"the same subject with different values ({change})")
        return Decision(SUPERSEDES, newer, older, f"the same subject with an updated value ({change})")
    reason = None
    if sorted(a.ordered) == sorted(b.ordered) and a.entities == b.entities:
        reason = "the same content words"
    elif (
        cosine is not None
        and cosine >= near
        and a.memory.category == b.memory.category
        and a.entities == b.entities
        and jaccard(a.words, b.words) >= NEAR_WORD_SHARE
    ):
        reason = f"near-identical meaning (cosine {cosine:.3f}), same category and entities"
    if reason is None or _name_swapped(a, b):
        return None
    return Decision(SQUASH, a, b, reason)


def _conflict(a: Fact, b: Fact, reason: str) -> Decision:
    newer, older = (a, b) if a.memory.created_at >= b.memory.created_at else (b, a)
    return Decision(CONFLICTS, newer, older, reason)


def compatible(a: Fact, b: Fact) -> bool:
    """Whether two memories may end up in one squash at all (every pair of a squash must be): the same values
    and polarity, one's entities among the other's, not reversed roles, and a good share of words in common.
    Without this, a restatement contained in two different memories would chain them into one squash."""
    if _contained(a, b) or _contained(b, a):
        return True
    return (
        a.signature == b.signature
        and (a.entities <= b.entities or b.entities <= a.entities)
        and not _reversed_roles(a, b)
        and jaccard(a.words, b.words) >= NEAR_WORD_SHARE
        and not _name_swapped(a, b)
    )


def keeper(group: list[Fact]) -> Fact:
    """The member whose text a rules squash keeps: the one that says most (its words cover the others' best),
    then the most important, then the newest."""
    every = frozenset().union(*(f.words for f in group))

    def rank(f: Fact) -> tuple[int, int, float, str]:
        return (len(f.words & every), len(f.words), f.memory.importance, f.memory.created_at)

    return max(group, key=rank)
