"""A memory proposed by an extractor (the rules or a model), before the store's dedup."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from codememory.text.privacy import scrub


@dataclass(frozen=True)
class Statement:
    """What one prose sentence states (`rules.classify`), before it becomes a candidate with its context."""

    text: str
    category: str  # decision | rejected_alternative | convention | preference | fact
    rule: str  # decision | rejected | convention | preference | fact
    has_reason: bool = False


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by an extractor, before the store's dedup."""

    text: str
    category: str
    importance: float
    seq: int  # the turn it came from
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    rule: str = ""  # which rule produced it: remember, decision, rejected, convention, preference, gotcha, ...
    said_by: str = ""  # who stated it (core.provenance.SPEAKERS): the memory's source records it; "" unknown


USER, ACCEPTED, OBSERVED, ASSISTANT = "user", "assistant_accepted", "observed", "assistant"


def spoken(candidate: Candidate, who: str) -> Candidate:
    """The candidate with its speaker set."""
    return candidate if candidate.said_by == who else replace(candidate, said_by=who)


def entity_names(text: str) -> tuple[str, ...]:
    """The entities a candidate carries: the first eight the extractor finds in its text."""
    from codememory.text.entities import extract_entities

    return tuple(e.name for e in extract_entities(text, limit=8))


@lru_cache(maxsize=256)
def scrubbed(text: str) -> str:
    """`scrub(text)`, once per message: the rules read each user and assistant text several times (statements,
    exchanges, reported bugs); a pure function of the text."""
    return scrub(text)
