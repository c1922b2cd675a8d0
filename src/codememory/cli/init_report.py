"""The typed result of `codememory init --json` (imported when init runs: the installer's code loads only then)."""

from __future__ import annotations

from dataclasses import dataclass, field

from codememory.core.result import OMIT_NONE, Result
from codememory.install.plan import Step
from codememory.operations.extraction_setup import ExtractionSetup


@dataclass
class InitReport(Result):
    """What init set up, step by step; `created` (the store was new) is left out with --uninstall."""

    project: str
    store: str
    created: bool | None = field(default=None, metadata=OMIT_NONE)
    assistants: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what will stop the assistants from running codememory
    # the extraction model path, when init set it (--extract-with, or the answer to its question)
    extraction: ExtractionSetup | None = field(default=None, metadata=OMIT_NONE)
    # the project's past assistant sessions on this machine not imported yet (`codememory import-history`)
    past_sessions: int | None = field(default=None, metadata=OMIT_NONE)
