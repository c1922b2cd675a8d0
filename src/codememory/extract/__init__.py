"""Extraction: a session's turns -> durable memories, with a model (any OpenAI-compatible endpoint, or the
user's own `opencode`) or without one (rules). See `extractor` for the pipeline."""

from ..capture.model import Todo
from .budget import Budget, spend_summary
from .extractor import ExtractionReport, Extractor, Prompts, SpanReport, extract_session
from .heuristic import Candidate, heuristic_candidates
from .llm import Completion, LLMError, OpenAICompatible, OpenCodeCLI, Provider, provider_from_config
from .transcript import describe_tool, render_transcript, split_windows

__all__ = [
    "Budget",
    "Candidate",
    "Completion",
    "ExtractionReport",
    "Extractor",
    "LLMError",
    "OpenAICompatible",
    "OpenCodeCLI",
    "Prompts",
    "Provider",
    "SpanReport",
    "Todo",
    "describe_tool",
    "extract_session",
    "heuristic_candidates",
    "provider_from_config",
    "render_transcript",
    "spend_summary",
    "split_windows",
]
