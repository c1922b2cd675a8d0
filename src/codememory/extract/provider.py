"""What extraction needs of a model, whoever provides it (codememory.extract.llm builds one from `[llm]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from codememory.text.privacy import scrub

_ERROR_SNIPPET = 300


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str


class Provider(Protocol):
    """What extraction needs of a model. `name` and `model` label the spend records; `overhead_tokens` is what the
    provider adds to each request beyond the prompt it is given (an agent CLI's own preamble), which the budget's
    check before a call counts."""

    name: str
    model: str
    overhead_tokens: int

    def complete(
        self,
        system: str,
        user: str,
        *,
        purpose: str,
        max_tokens: int,
        json_output: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> Completion: ...


def error_snippet(text: str) -> str:
    """A model's or a CLI's words for an error message: scrubbed, on one line, cut short."""
    return " ".join(scrub(text).split())[:_ERROR_SNIPPET]
