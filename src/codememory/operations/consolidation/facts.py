"""What a memory asserts, reduced to what the never-merge rules compare: its content words, the values it states
(numbers and versions, paths), its polarity (a negation or an "avoid"), the entities it names and in what order.

Two memories that differ in a value or in polarity are never squashed ("port 8080" / "port 8081", "use X" /
"don't use X"): they are the same subject with another value (a supersession) or a reversal (a conflict)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.model import Memory
from codememory.text.query import STOPWORDS

_NUMBER_RE = lazy_pattern(r"(?<![A-Za-z_])v?\d+(?:[.,:]\d+)*")
_PATH_RE = lazy_pattern(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|ts|tsx|js|jsx|json|toml|ya?ml|md|txt|sql|rs|go|java|rb|sh|cfg|ini|lock|env)\b"
)
_WORD_RE = lazy_pattern(r"[a-z][a-z0-9_]*")
# The pieces of "don't", "isn't", ... are words of their own after tokenising on \w.
NEGATIONS = frozenset(
    "not no never nor without avoid stop cannot don doesn didn isn aren wasn weren won shouldn mustn".split()
)
# Words that make the order of the things named matter: "use httpx instead of requests" is the reverse of
# "use requests instead of httpx", with the same words.
CONTRAST = frozenset("instead rather over than vs versus replace replaces replaced unlike prefer prefers".split())
FILLERS = frozenset("should please just also really then now here so we our always must will can".split())


@dataclass(frozen=True)
class Fact:
    pk: int
    memory: Memory
    words: frozenset[str]  # content words, values and negations left out
    ordered: tuple[str, ...]  # the same in text order
    sequence: tuple[str, ...]  # every word but stop words, values and negations included, in order (containment)
    numbers: tuple[str, ...]  # sorted
    paths: frozenset[str]
    negations: int  # "not", "never", "don't", ...: a reversal adds or drops one
    contrast: bool  # names one thing against another ("X instead of Y"): its negation is not its polarity
    entities: frozenset[str]
    entity_order: tuple[str, ...]  # entities by first mention
    lower: str = ""  # the text, lower-cased (does it mention a name?)

    @property
    def values(self) -> tuple[tuple[str, ...], frozenset[str]]:
        return self.numbers, self.paths

    @property
    def negated(self) -> bool:
        return self.negations % 2 == 1

    @property
    def signature(self) -> tuple[tuple[str, ...], frozenset[str], int]:
        """Memories with different signatures are never squashed."""
        return self.numbers, self.paths, self.negations


def _entity_order(text: str, names: frozenset[str]) -> tuple[str, ...]:
    lower = text.lower()
    found = [(lower.find(n.lower()), n) for n in names]
    return tuple(n for pos, n in sorted(found) if pos >= 0)


def fact_of(pk: int, memory: Memory, entities: list[tuple[str, str]]) -> Fact:
    text = memory.text
    paths = frozenset(p.rstrip(".").lower() for p in _PATH_RE.findall(text))
    masked = _PATH_RE.sub(" ", text)
    numbers = tuple(sorted(n.lstrip("v").rstrip(".,:") for n in _NUMBER_RE.findall(masked)))
    tokens = _WORD_RE.findall(_NUMBER_RE.sub(" ", masked).lower())
    ordered = tuple(t for t in tokens if t not in STOPWORDS and t not in FILLERS and t not in NEGATIONS)
    names = frozenset(name for name, _type in entities)
    return Fact(
        pk=pk,
        memory=memory,
        words=frozenset(ordered),
        ordered=ordered,
        sequence=tuple(t for t in re.findall(r"\w+", text.lower()) if t not in STOPWORDS or t in NEGATIONS),
        numbers=numbers,
        paths=paths,
        negations=sum(t in NEGATIONS for t in tokens),
        contrast=any(t in CONTRAST for t in tokens),
        entities=names,
        entity_order=_entity_order(text, names),
        lower=text.lower(),
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


# ----------------------------------------------------------------------------------- names and polarity
_FLIP_WINDOW = 1  # content words after a negation that it reverses ("not rotated", "cannot speak")


def mentions(fact: Fact, name: str) -> bool:
    """Whether the memory names `name`: as one of its entities, or in its text under any spelling the
    vocabulary knows (the extractor leaves out ambiguous words in some contexts: "requests" the library)."""
    key = name.lower()
    if key in {e.lower() for e in fact.entities}:
        return True
    return any(re.search(rf"(?<![\w/.-]){re.escape(s)}(?![\w/-])", fact.lower) for s in _spellings(key))


def _spellings(canonical: str) -> set[str]:
    return {canonical, *_alias_index().get(canonical, ())}


_ALIASES: dict[str, set[str]] = {}


def _alias_index() -> dict[str, set[str]]:
    if not _ALIASES:
        from codememory.text.entity_vocabulary import vocabulary

        for surface, term in vocabulary().aliases.items():
            _ALIASES.setdefault(term.canonical.lower(), set()).add(surface)
    return _ALIASES


def unnamed(a: Fact, b: Fact) -> list[str]:
    """The names one of the two memories holds and the other never mentions: its entities, and any word of it
    the vocabulary knows as a technology (unless the word is also plain English: "parcel", "black"), which the
    extractor may have left inside a longer token ("vite-tsconfig-paths")."""
    return sorted(
        {n for n in a.entities | _tech_words(a) if not mentions(b, n)}
        | {n for n in b.entities | _tech_words(b) if not mentions(a, n)}
    )


def _tech_words(fact: Fact) -> set[str]:
    from codememory.text.entity_vocabulary import entity_words, vocabulary

    known, ambiguous = vocabulary().aliases, entity_words().ambiguous
    return {w for w in fact.words if w in known and w not in ambiguous}


def flipping_negations(a: Fact, b: Fact) -> int:
    """How many of `a`'s negations reverse something `b` says: a negation whose next content words `b` also
    holds ("do not run migrations" against "run migrations"), as opposed to one inside a part `b` words
    differently ("requests cannot speak HTTP/2" against "because we need HTTP/2")."""
    other = set(b.sequence)
    seq = a.sequence
    count = 0
    for i, word in enumerate(seq):
        if word not in NEGATIONS:
            continue
        after = [w for w in seq[i + 1 :] if w not in NEGATIONS][:_FLIP_WINDOW]
        count += any(w in other for w in after)
    return count


def same_polarity(a: Fact, b: Fact) -> bool:
    """Both say it the same way round: as many negations, or (with the same values) the extra ones reverse
    nothing the other says."""
    if a.negations == b.negations:
        return True
    if a.values != b.values:  # "not 5 seconds" against "7 seconds": which way round is unclear, so not the same
        return False
    more, fewer = (a, b) if a.negations > b.negations else (b, a)
    return flipping_negations(more, fewer) <= fewer.negations


_NEGATED_SPAN = 3  # words after a negation that it attaches to ("not from .env files")


def negated_names(fact: Fact) -> frozenset[str]:
    """The entities a negation points at ("Vault, not .env" -> {".env"}): who is on which side of it."""
    tokens = re.findall(r"[\w./-]+", fact.lower)
    out: set[str] = set()
    for i, token in enumerate(tokens):
        if token in NEGATIONS:
            span = " " + " ".join(tokens[i + 1 : i + 1 + _NEGATED_SPAN]) + " "
            out.update(n for n in fact.entities if f" {n.lower()} " in span or f" {n.lower()}." in span)
    return frozenset(out)
