"""What a memory asserts, reduced to what the never-merge rules compare: its content words, the values it states
(numbers and versions, paths), its polarity (a negation or an "avoid"), the entities it names and in what order.

Two memories that differ in a value or in polarity are never squashed ("port 8080" / "port 8081", "use X" /
"don't use X"): they are the same subject with another value (a supersession) or a reversal (a conflict)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from codememory.core.model import Memory
from codememory.text.query import STOPWORDS

_NUMBER_RE = re.compile(r"(?<![A-Za-z_])v?\d+(?:[.,:]\d+)*")
_PATH_RE = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|ts|tsx|js|jsx|json|toml|ya?ml|md|txt|sql|rs|go|java|rb|sh|cfg|ini|lock|env)\b"
)
_WORD_RE = re.compile(r"[a-z][a-z0-9_]*")
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
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
