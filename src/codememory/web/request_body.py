"""The base of every daemon request body: its strings are made valid text before validation.

A JSON body may carry `"\\ud800"`, a lone surrogate (JavaScript strings can hold one, and json.dumps writes
one that way). Pydantic refuses such a `str` field, but lets it through inside `dict[str, Any]`, where it
would reach SQLite; the CLI, hooks, MCP server and Python API replace it with U+FFFD (see
codememory.core.bounded_input), and so does the daemon, for every field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator

from codememory.core.bounded_input import valid_deep


class RequestBody(BaseModel):
    @model_validator(mode="before")
    @classmethod
    def _valid_text(cls, data: Any) -> Any:
        return valid_deep(data)
