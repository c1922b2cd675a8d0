"""Extraction: a session's turns -> durable memories, with a model (any OpenAI-compatible endpoint, or the
user's own agent CLI: `opencode run`, `claude -p`, `codex exec`) or without one (rules). See `extractor` for the
pipeline.

The names below load on first use: `codememory stats` needs only the spend ledger (`extract.budget`), not
the extractor and its output schema (pydantic), which cost a noticeable part of a CLI start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codememory.capture.turns import Todo
    from codememory.extract.budget import spend_summary
    from codememory.extract.cli_opencode import OpenCodeCLI
    from codememory.extract.extractor import Extractor, extract_session
    from codememory.extract.heuristic import heuristic_candidates
    from codememory.extract.llm import OpenAICompatible, provider_from_config

_MODULE_OF = {
    "Extractor": ".extractor",
    "OpenAICompatible": ".llm",
    "OpenCodeCLI": ".cli_opencode",
    "Todo": "..capture.turns",
    "extract_session": ".extractor",
    "heuristic_candidates": ".heuristic",
    "provider_from_config": ".llm",
    "spend_summary": ".budget",
}
__all__ = [
    "Extractor",
    "OpenAICompatible",
    "OpenCodeCLI",
    "Todo",
    "extract_session",
    "heuristic_candidates",
    "provider_from_config",
    "spend_summary",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
