"""What two close memories are to each other, decided without a model: the same fact said twice (squash), the
same subject with an updated value (the newer supersedes the older), a reversal (conflicts), or two facts that
merely share words (left alone).

Squashing is the only decision that hides a text, so it needs one of three strong signs: one memory's words
(values and negations included) are a run of the other's, so keeping the longer text loses nothing; the same
content words in any order, with the same values and polarity (in the same order around a contrast: "httpx
instead of requests" is not "requests instead of httpx"); or a plain paraphrase: the same meaning by the model's
vectors (a cosine over its squash threshold), the same category, every number, version and path the same, every
name one mentions mentioned by the other, the same polarity (a negation may sit in a part worded differently:
"requests cannot speak HTTP/2" against "because we need HTTP/2", never in front of what both say), and a name or
a good share of words in common. Texts that differ where one names another thing, or in a value or polarity, are
never squashed: they get a link or nothing, and a pair left alone says why (`Decision` of kind APART)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codememory.operations.consolidation.facts import (
    CONTRAST,
    FILLERS,
    NEGATIONS,
    Fact,
    jaccard,
    negated_names,
    same_polarity,
    unnamed,
)

SQUASH = "squash"
SUPERSEDES = "supersedes"
CONFLICTS = "conflicts"
APART = "apart"  # left alone: the reason says why

MIN_CONTAINED_WORDS = 3  # a shorter memory "contained" in another must say at least this much
NEAR_WORD_SHARE = 0.4  # words in common (Jaccard) a near-identical meaning also needs
SAME_SUBJECT = 0.75  # words in common (values aside) for "the same subject with another value"
REVERSAL = 0.6  # words in common (negations aside) for "the same statement, negated"
SLOT_WORDS = 3  # a slot of the same sentence filled differently ("gzipped" / "minified, before gzip")
# Words a rewording swaps in place without naming another thing: connectives, modals, quantifiers.
REWORDINGS = (
    CONTRAST
    | FILLERS
    | frozenset("because since therefore thus hence has have need needs required each every all any".split())
)


@dataclass(frozen=True)
class Decision:
    kind: str  # SQUASH, SUPERSEDES (from `a` to `b`: a is newer), CONFLICTS, APART
    a: Fact
    b: Fact
    reason: str


def _show(values: tuple[tuple[str, ...], frozenset[str]]) -> str:
    numbers, paths = values
    return ", ".join([*numbers, *sorted(paths)]) or "none"


def _reversed_roles(a: Fact, b: Fact) -> bool:
    """Both name the same things against each other, in another order ("X instead of Y" / "Y instead of X",
    "from X, not from Y" / "from Y, not from X")."""
    negated_a, negated_b = negated_names(a), negated_names(b)
    if negated_a and negated_b and not negated_a & negated_b and len(a.entities & b.entities) >= 2:
        return True
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


def _name_swapped(a: Fact, b: Fact, slots: bool = True) -> tuple[str, str] | None:
    """Where the texts differ because one names another thing, as (a's words, b's words): a small replacement
    involving a known technology or an identifier-like word ("ingress-nginx" / "ingress-envoy", "Redis 7" /
    "Redis 8"), or the same sentence with other words in its slots ("the orders table" / "the refunds table",
    "the staging database is reset" / "the production database is backed up"): two facts, however close their
    meaning and their words. Connectives and contrast words swapped in place ("since" for "because", "rather
    than" for "instead of") are a rewording, not another thing. `slots` False looks at names only (what a
    model may still be asked about)."""
    from difflib import SequenceMatcher

    from codememory.text.entity_vocabulary import entity_words, vocabulary

    # A word that is also plain English ("go", "make", "black") names a technology only when it is an entity.
    known = (set(vocabulary().aliases) - entity_words().ambiguous) | {e.lower() for e in a.entities | b.entities}
    ops = SequenceMatcher(a=a.ordered, b=b.ordered, autojunk=False).get_opcodes()
    changed_slots: list[tuple[str, str]] = []
    template = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag == "equal") * 2 >= max(len(a.ordered), 1)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if tag != "replace" or i2 - i1 > SLOT_WORDS or j2 - j1 > SLOT_WORDS:
            template = False
            continue
        mine, theirs = set(a.ordered[i1:i2]), set(b.ordered[j1:j2])
        # A name in only one of the texts (not merely moved elsewhere in the other) replaced in place.
        swapped = (mine - set(b.ordered)) | (theirs - set(a.ordered))
        small = i2 - i1 <= 2 and j2 - j1 <= 2
        if small and any(t in known or "_" in t or any(ch.isdigit() for ch in t) for t in swapped):
            return " ".join(a.ordered[i1:i2]), " ".join(b.ordered[j1:j2])
        if mine - REWORDINGS and theirs - REWORDINGS:
            changed_slots.append((" ".join(a.ordered[i1:i2]), " ".join(b.ordered[j1:j2])))
    if template and changed_slots and slots:
        return "; ".join(x for x, _y in changed_slots), "; ".join(y for _x, y in changed_slots)
    return None


def _value_difference(a: Fact, b: Fact) -> str:
    """ "differ in a number: 5432 vs 5433" (or in a version, in a path)."""
    if a.paths != b.paths:
        kind, only_a, only_b = "path", sorted(a.paths - b.paths), sorted(b.paths - a.paths)
    else:
        only_a = [n for n in a.numbers if n not in b.numbers]
        only_b = [n for n in b.numbers if n not in a.numbers]
        kind = "version" if any("." in n for n in only_a + only_b) else "number"
    return f"differ in a {kind}: {', '.join(only_a[:4]) or 'none'} vs {', '.join(only_b[:4]) or 'none'}"


_DIRECTION = frozenset(
    "from to into onto off over instead rather than replaced replaces switched moved migrated".split()
)


def _other_direction(a: Fact, b: Fact) -> bool:
    """Both name two or more things in another order around a word of direction ("moved from SendGrid to
    Resend" / "moved from Resend to SendGrid"): which is the old and which the new is not the same. A plain
    paraphrase may reorder names, but not around these words without a model to read it. Only for one sentence
    each, worded alike. Names are the entities and the capitalised words (a service the vocabulary does not
    know)."""
    if jaccard(a.words, b.words) < REVERSAL:  # reworded freely: a paraphrase may reorder its names
        return False
    if any(re.search(r"[.!?;]\s+\S", f.memory.text.strip()) for f in (a, b)):
        return False  # several sentences: their order may change, and the names' with it
    if not any(w in _DIRECTION for w in re.findall(r"[a-z]+", a.lower + " " + b.lower)):
        return False
    order_a, order_b = _names_in_order(a), _names_in_order(b)
    common_a = [n for n in order_a if n in order_b]
    return len(common_a) >= 2 and common_a != [n for n in order_b if n in order_a]


def _names_in_order(fact: Fact) -> list[str]:
    text = fact.memory.text
    found = [(m.start(), m.group(0).lower()) for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]+", text)]
    found += [(fact.lower.find(e.lower()), e.lower()) for e in fact.entities]
    return list(dict.fromkeys(name for pos, name in sorted(found) if pos >= 0))


def _apart(a: Fact, b: Fact, reason: str) -> Decision:
    return Decision(APART, a, b, reason)


def decide(a: Fact, b: Fact, cosine: float | None, near: float) -> Decision:
    """The rules' decision for a pair of live memories (`cosine`: their similarity, None without vectors; `near`:
    the squash threshold of the model that made the vectors); APART, with the reason, when nothing is done."""
    if _contained(a, b) or _contained(b, a):
        return Decision(SQUASH, a, b, "one memory's content is contained in the other's")
    if not same_polarity(a, b):
        share = jaccard(a.words, b.words)
        if share >= REVERSAL and a.values == b.values and not (a.contrast or b.contrast):
            return _conflict(a, b, f"one says the opposite of the other ({share:.2f} of the words in common)")
        return _apart(a, b, "opposite polarity: one negates what the other says")
    if _reversed_roles(a, b):
        return _conflict(a, b, "the same things named in reverse roles")
    if a.values != b.values:
        share = jaccard(a.words, b.words)
        if share < SAME_SUBJECT or _name_swapped(a, b):
            return _apart(a, b, _value_difference(a, b))
        newer, older = (a, b) if a.memory.created_at > b.memory.created_at else (b, a)
        change = f"{_show(older.values)} -> {_show(newer.values)}"
        if newer.memory.created_at == older.memory.created_at:
            return _conflict(a, b, f"the same subject with different values ({change})")
        return Decision(SUPERSEDES, newer, older, f"the same subject with an updated value ({change})")
    if swap := _name_swapped(a, b):
        return _apart(a, b, f"name different things: {swap[0]} vs {swap[1]}")
    if a.negations == b.negations and sorted(a.ordered) == sorted(b.ordered) and a.entities == b.entities:
        if _other_direction(a, b):
            return _conflict(a, b, "the same things named in reverse roles")
        return Decision(SQUASH, a, b, "the same content words")
    return _paraphrase(a, b, cosine, near)


def _paraphrase(a: Fact, b: Fact, cosine: float | None, near: float) -> Decision:
    """A plain paraphrase (the same values, polarity and roles are checked before): the same meaning by the
    vectors, the same category, the same names, and a name or a good share of the words in common."""
    if cosine is None:
        return _apart(a, b, "worded differently, and no vectors to compare their meaning")
    if cosine < near:
        return _apart(a, b, f"cosine {cosine:.2f} under the squash threshold {near:.2f}")
    if a.memory.category != b.memory.category:
        return _apart(a, b, f"different categories: {a.memory.category} vs {b.memory.category}")
    missing = unnamed(a, b)
    if missing:
        return _apart(a, b, f"only one of them names {', '.join(missing[:3])}")
    if _other_direction(a, b):
        return _apart(a, b, "the same names in another order around a direction (from/to, over, instead of)")
    share = jaccard(a.words, b.words)
    if not (a.entities & b.entities) and share < NEAR_WORD_SHARE:
        return _apart(a, b, f"no name in common and {share:.0%} of the words")
    return Decision(SQUASH, a, b, f"plain paraphrases: cosine at least {near:.2f}, the same values, names and polarity")


def _conflict(a: Fact, b: Fact, reason: str) -> Decision:
    newer, older = (a, b) if a.memory.created_at >= b.memory.created_at else (b, a)
    return Decision(CONFLICTS, newer, older, reason)


def compatible(a: Fact, b: Fact, strict: bool = True) -> bool:
    """Whether two memories may end up in one squash at all (every pair of a squash must be): the same values
    and polarity, not reversed roles nor another thing named, and either one's entities among the other's with a
    good share of words in common, or (a paraphrase) every name of each mentioned by the other. Without this, a
    restatement contained in two different memories would chain them into one squash. `strict` False lets the
    same sentence with other words in its slots through (a model judges those; the rules never squash them)."""
    if _contained(a, b) or _contained(b, a):
        return True
    swapped = _name_swapped(a, b, slots=strict)
    if a.values != b.values or not same_polarity(a, b) or _reversed_roles(a, b) or swapped:
        return False
    alike = (
        a.negations == b.negations
        and (a.entities <= b.entities or b.entities <= a.entities)
        and jaccard(a.words, b.words) >= NEAR_WORD_SHARE
    )
    if alike:
        return True
    named = bool(a.entities & b.entities) or jaccard(a.words, b.words) >= NEAR_WORD_SHARE
    return named and a.memory.category == b.memory.category and not unnamed(a, b)


def keeper(group: list[Fact]) -> Fact:
    """The member whose text a rules squash keeps: the one that says most (its words cover the others' best),
    then the most important, then the newest."""
    every = frozenset().union(*(f.words for f in group))

    def rank(f: Fact) -> tuple[int, int, float, str]:
        return (len(f.words & every), len(f.words), f.memory.importance, f.memory.created_at)

    return max(group, key=rank)
