"""A cluster's squash-or-separate decision by the configured model (`[llm]`), as the codemira seed's consolidation
asks: the prompt files `extract/prompts/consolidation_{system,user}.txt`, a strict schema for the answer, and the
token budgets of `[llm]` (one run is one budget "session"; the daily budget is shared with extraction).

The model only ever sees clusters the rules allow to merge (the same values and polarity); its squash is checked
again: the text it writes must keep every number and path the memories state, or the cluster stays separate."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from codememory.core.config import LLMConfig
from codememory.core.model import Memory
from codememory.errors import LLMError
from codememory.extract.budget import Budget
from codememory.extract.llm import Provider
from codememory.extract.prompt_templates import PROMPTS_DIR, fill, read_prompt
from codememory.operations.consolidation.facts import Fact, fact_of
from codememory.store.database import Database
from codememory.store.extraction import ExtractionTables
from codememory.text.privacy import scrub
from codememory.text.tokens import estimate_tokens

MAX_TOKENS = 400  # the answer: one sentence and a reason
MAX_CLUSTER = 8  # memories per question: a cluster is asked about in groups of at most this many
PURPOSE = "consolidate"
PROMPT_NAMES = ("consolidation_system.txt", "consolidation_user.txt")

Category = Literal["decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note"]


class _Squash(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    decision: Literal["squash"]
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
    category: Category
    reason: Annotated[str, StringConstraints(max_length=500)] = ""


class _Separate(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    decision: Literal["separate"]
    reason: Annotated[str, StringConstraints(max_length=500)] = ""


@dataclass(frozen=True)
class Verdict:
    squash: bool
    text: str | None
    category: str | None
    reason: str


@functools.cache
def prompts() -> tuple[str, str]:
    """The two prompt files, read once; a missing or empty one, or a user prompt without its placeholders,
    raises PromptFileError (fail fast)."""
    system, user = PROMPT_NAMES
    return (
        read_prompt(PROMPTS_DIR / system, kind="consolidation"),
        read_prompt(PROMPTS_DIR / user, ("{memories}",), kind="consolidation"),
    )


def _answer(text: str) -> dict[str, object] | None:
    """The first JSON object in the answer (a fence or prose around it is tolerated)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def parse(text: str) -> Verdict:
    """The model's decision, or LLMError naming what was wrong with the answer (never quoting it)."""
    value = _answer(text or "")
    if value is None:
        raise LLMError('the consolidation answer holds no JSON object; expected {"decision": ...}')
    try:
        if value.get("decision") == "squash":
            squash = _Squash.model_validate(value)
            return Verdict(True, squash.text, squash.category, squash.reason)
        separate = _Separate.model_validate(value)
        return Verdict(False, None, None, separate.reason)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise LLMError(f"the consolidation answer is invalid: {where}: {first['msg']}") from None


def keeps_values(text: str, members: Sequence[Fact]) -> bool:
    """A squash's text states every number and path its members state (they share them: same signature)."""
    written = fact_of(0, Memory(id=members[0].memory.id, text=text), [])
    return set(members[0].numbers) <= set(written.numbers) and members[0].paths <= written.paths


class ClusterJudge:
    """Asks the model about clusters, one call each, until the budget or an error stops it (`stopped` says why:
    the remaining clusters are then decided by the rules)."""

    def __init__(self, provider: Provider, db: Database, cfg: LLMConfig, run_key: str, project: str) -> None:
        self.provider = provider
        self.budget = Budget(
            ExtractionTables(db), run_key, cfg.session_token_budget, cfg.daily_token_budget, provider.name
        )
        self.project = project
        self.calls = 0
        self.stopped: str | None = None
        self.system, self.user_template = prompts()

    @property
    def method(self) -> str:
        return f"model:{self.provider.name}/{self.provider.model}"

    def judge(self, members: Sequence[Fact]) -> Verdict | None:
        if self.stopped is not None:
            return None
        listing = "\n".join(
            f'<memory n="{i}" category="{f.memory.category}" created="{f.memory.created_at[:10]}">'
            f"{scrub(f.memory.text).replace('</memory>', '')}</memory>"
            for i, f in enumerate(sorted(members, key=lambda f: f.memory.created_at), start=1)
        )
        user = fill(self.user_template, project=self.project, count=str(len(members)), memories=listing)
        estimate = estimate_tokens(self.system) + estimate_tokens(user) + self.provider.overhead_tokens
        refusal = self.budget.refusal(estimate, MAX_TOKENS)
        if refusal:
            self.stopped = refusal
            return None
        try:
            completion = self.provider.complete(
                self.system, user, purpose=PURPOSE, max_tokens=MAX_TOKENS, json_output=True
            )
        except LLMError as exc:
            self.stopped = f"the model failed: {exc}"
            return None
        self.calls += 1
        self.budget.record(completion, PURPOSE)
        try:
            verdict = parse(completion.text)
        except LLMError as exc:
            return Verdict(False, None, None, f"kept separate: {exc}")
        if verdict.squash and verdict.text is not None and not keeps_values(verdict.text, members):
            return Verdict(False, None, None, "kept separate: the model's text dropped a number or path")
        return verdict
