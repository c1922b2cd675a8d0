"""The extraction model's answer, validated with a strict schema.

Accepted shapes: `{"memories": [...], "already_known": [...]}` (what the prompt asks for, and what JSON
mode allows) or a bare array of memories, optionally inside a ```json fence or surrounded by prose. Every
item must be exactly {text, category, importance, entities?, turn?, supersedes?, said_by?}: no other keys, a known
category, importance in 0..1, text of at most MAX_MEMORY_CHARS. `supersedes` and `already_known` hold ids of
the stored memories the prompt showed (the extractor checks them against that list).
One bad item makes the whole answer invalid (the caller asks once for a repair, quoting the reason).
Reasons name positions and rules, never the answer's text."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from codememory.core.lazy_pattern import lazy_pattern
from codememory.errors import InvalidOutput

MAX_MEMORY_CHARS = 500  # the prompt asks for one sentence of at most 300
MAX_MEMORIES = 50

# Who said it (core.provenance.SPEAKERS): the user, the assistant with the user's acceptance, a tool's output or a file
# ("observed"), or the assistant alone.
SaidBy = Literal["user", "assistant_accepted", "observed", "assistant"]
Category = Literal["decision", "rejected_alternative", "convention", "preference", "gotcha", "fact", "todo", "note"]


# What a model may call a speaker instead (the names a tool's output or a file goes by), read as the store's own.
SPEAKER_SYNONYMS = {"tool": "observed", "tool_output": "observed", "file": "observed", "accepted": "assistant_accepted"}


class ExtractedMemory(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    @field_validator("said_by", mode="before")
    @classmethod
    def _speaker(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower()
            return SPEAKER_SYNONYMS.get(value, value)
        return value

    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MEMORY_CHARS)]
    category: Category
    importance: Annotated[float, Field(ge=0.0, le=1.0)]
    entities: Annotated[list[Annotated[str, StringConstraints(max_length=200)]], Field(max_length=30)] = []
    turn: int | None = None
    # ids of stored memories this one replaces (the session changed what they say)
    supersedes: Annotated[list[Annotated[str, StringConstraints(max_length=40)]], Field(max_length=5)] = []
    said_by: SaidBy | None = None  # optional: a team's own prompt files may not ask for it


_Ids = Annotated[list[Annotated[str, StringConstraints(max_length=40)]], Field(max_length=MAX_MEMORIES)]


class ExtractionOutput(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    memories: Annotated[list[ExtractedMemory], Field(max_length=MAX_MEMORIES)]
    already_known: _Ids = []  # ids of stored memories the session restated (nothing new to store)


def answer_schema() -> dict[str, Any]:
    """The answer's JSON schema, sent as the request's response format (servers that support it constrain
    the model to it; the answer is validated here either way)."""
    return ExtractionOutput.model_json_schema()


_FENCE_RE = lazy_pattern(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def _good(value: Any) -> bool:
    if isinstance(value, dict):
        return "memories" in value
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _find_answer(text: str) -> Any:
    """The JSON answer in the text: in a fence or from the first `{` or `[` that starts one; a value of
    the expected shape wins over any other JSON (e.g. "[1]" in prose). None when there is no JSON."""
    decoder = json.JSONDecoder()
    fallback: Any = None
    chunks = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    for chunk in chunks:
        for start, ch in enumerate(chunk):
            if ch not in "[{":
                continue
            try:
                value, _end = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            if _good(value):
                return value
            if fallback is None:
                fallback = value
    return fallback


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "answer"


def _reason(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    parts = [f"{_location(tuple(e['loc']))}: {e['msg']}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more problems)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


def parse_output(text: str) -> list[ExtractedMemory]:
    """The memories in a model's answer, or InvalidOutput with a reason."""
    return parse_answer(text).memories


def parse_answer(text: str) -> ExtractionOutput:
    """A model's whole answer (memories and already-known ids), or InvalidOutput with a reason."""
    if not text or not text.strip():
        raise InvalidOutput("the answer is empty")
    value = _find_answer(text)
    if value is None:
        raise InvalidOutput('the answer holds no JSON object or array; expected {"memories": [...]}')
    if isinstance(value, list):
        value = {"memories": value}
    elif isinstance(value, dict) and "memories" not in value:
        if "text" in value:  # a single memory
            value = {"memories": [value]}
        else:
            keys = ", ".join(sorted(str(k) for k in value)[:5])
            raise InvalidOutput(f'expected {{"memories": [...]}}, got an object with keys: {keys}')
    elif not isinstance(value, dict):
        raise InvalidOutput('expected {"memories": [...]}')
    try:
        return ExtractionOutput.model_validate(value)
    except ValidationError as exc:
        raise InvalidOutput(_reason(exc)) from None
