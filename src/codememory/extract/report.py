"""What one extraction run did, span by span (`codememory capture --json` shows it as is, in each project's
sessions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from codememory.core.result import Result


@dataclass
class SpanReport(Result):
    """One span of turns given to the rules or the model in one go."""

    first_seq: int
    last_seq: int
    method: str  # "heuristic" or "llm"
    status: str
    created: int = 0
    duplicates: int = 0
    dropped: int = 0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExtractionReport(Result):
    """What one `extract_session` run did. `status`: nothing_new | ok | empty | over_budget | failed
    (the most telling span status: failed, then over_budget, then ok, then empty)."""

    COMPUTED: ClassVar[dict[str, Any]] = {"created": int, "duplicates": int}

    source: str
    session_id: str
    status: str = "nothing_new"
    first_seq: int | None = None
    last_seq: int | None = None
    spans: list[SpanReport] = field(default_factory=list)
    created_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    dropped: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def created(self) -> int:
        return len(self.created_ids)

    @property
    def duplicates(self) -> int:
        return len(self.duplicate_ids)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "session_id": self.session_id,
            "status": self.status,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "created": self.created,
            "duplicates": self.duplicates,
            "dropped": self.dropped,
            "created_ids": list(self.created_ids),
            "duplicate_ids": list(self.duplicate_ids),
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "spans": [s.to_dict() for s in self.spans],
            "errors": list(self.errors),
        }


def overall_status(spans: Sequence[SpanReport]) -> str:
    statuses = {s.status for s in spans}
    return next((s for s in ("failed", "over_budget", "ok", "empty") if s in statuses), "nothing_new")
