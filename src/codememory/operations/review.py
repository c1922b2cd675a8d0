"""`codememory review` (and the viewer's Review page): the memories that did not start on this machine and read like
instructions to an agent (core/provenance.py, text/instructions.py) wait here for the user. Accepting one lets it
into the blocks put in an agent's context unasked (session start, per step) like any plain memory; rejecting one
keeps it out of every agent's context and of search and listings (it stays in the store, and in the team's files:
the answer is this clone's). A memory written here has nothing to review."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from codememory.core.model import ID_RE, Memory
from codememory.core.provenance import REVIEW_STATES
from codememory.core.result import Result
from codememory.errors import InvalidInput
from codememory.text.instructions import instruction_reason

if TYPE_CHECKING:
    from codememory.service.project_store import Store

MAX_LISTED = 500


@dataclass
class ReviewItem(Result):
    """One memory under review: where it came from (`origin`, `by`, `arrived_at`; `provenance` in a few words),
    the user's answer so far (`review`), and what in its text reads like instructions (`reason`)."""

    id: str
    text: str
    category: str
    importance: float  # as the source claims it: never ranked on (the memory is not from here)
    created_at: str  # as the source claims it
    origin: str
    by: str | None
    arrived_at: str | None
    provenance: str
    review: str
    reason: str | None

    @classmethod
    def of(cls, mem: Memory) -> ReviewItem:
        p = mem.provenance
        return cls(
            mem.id,
            mem.text,
            mem.category,
            mem.importance,
            mem.created_at,
            p.origin,
            p.by,
            p.at,
            p.label(),
            p.review or "",
            instruction_reason(mem.text),
        )


@dataclass
class ReviewList(Result):
    """`review list --json`: `{state, count, memories, counts}`; counts: {pending, accepted, rejected}."""

    COMPUTED: ClassVar[dict[str, Any]] = {"count": int}

    state: str
    memories: list[ReviewItem]
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "count": len(self.memories),
            "memories": [m.to_dict() for m in self.memories],
            "counts": dict(self.counts),
        }


@dataclass
class ReviewAnswer(Result):
    """`review accept|reject --json`: the ids answered, those written here (nothing to review), those unknown."""

    answer: str  # "accepted" or "rejected"
    done: list[str]
    written_here: list[str]
    unknown: list[str]


def review_list(store: Store, *, state: str = "pending", limit: int = 100) -> ReviewList:
    """The memories in review `state` (pending by default), newest arrivals first."""
    if state not in REVIEW_STATES:
        raise InvalidInput(f"unknown review state {state!r}; choose from: {', '.join(REVIEW_STATES)}")
    if not 1 <= limit <= MAX_LISTED:
        raise InvalidInput(f"limit must be between 1 and {MAX_LISTED}")
    found = store.list(sort="updated", order="desc", limit=limit, review=state, include_archived=True)
    return ReviewList(state, [ReviewItem.of(m) for m in found], store.db.review_counts())


def review_answer(store: Store, ids: Sequence[str], *, accept: bool) -> ReviewAnswer:
    """Accept or reject these memories (any memory not written here may be answered, waiting or not)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        raise InvalidInput("give at least one memory id")
    bad = [i for i in wanted if not ID_RE.match(i)]
    if bad:
        raise InvalidInput(f"not a memory id (expected mem_ and 8 hex digits): {', '.join(bad)}")
    answer = "accepted" if accept else "rejected"
    existing = store.db.existing_ids(wanted)
    done = store.db.set_review([i for i in wanted if i in existing], answer)
    return ReviewAnswer(
        answer,
        done,
        [i for i in wanted if i in existing and i not in done],
        [i for i in wanted if i not in existing],
    )
