"""The coding assistants codememory works with, one spec each (codememory.assistants.spec): the single place that
says what an assistant is. `codememory init` (install/), the hooks (hooks/, operations/hook_events), capture and the
CLI's `--assistants` read it.

Adding an assistant: a module here that builds its `Assistant`, its line in REGISTRY, and, when it keeps transcripts
worth capturing, a reader in codememory.capture (docs/assistants.md)."""

from __future__ import annotations

from codememory.assistants import claude_code, codex, copilot, cursor, gemini, opencode
from codememory.assistants.spec import Assistant

REGISTRY: tuple[Assistant, ...] = (
    claude_code.ASSISTANT,
    codex.ASSISTANT,
    cursor.ASSISTANT,
    opencode.ASSISTANT,
    gemini.ASSISTANT,
    copilot.ASSISTANT,
)
KEYS: tuple[str, ...] = tuple(a.key for a in REGISTRY)
_BY_NAME: dict[str, Assistant] = {name: a for a in REGISTRY for name in a.names}


def find(name: str) -> Assistant | None:
    """The assistant a key or alias names (case-insensitive), or None."""
    return _BY_NAME.get(name.strip().lower())


def recorded(source: str) -> Assistant | None:
    """The assistant whose records carry `source` (sessions' tool, memories' entered_by, captured turns' source)."""
    return next((a for a in REGISTRY if source in (a.recorded_as, a.key)), None)
