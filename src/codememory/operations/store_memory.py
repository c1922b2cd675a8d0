"""Storing memories: one given by an agent or a person (`codememory store`, MCP memory_store, the daemon's
/memory/store) and the `*Remember*: ...` notes found in a text (`codememory remember-scan`, the hooks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result
from codememory.service.results import AddResult

if TYPE_CHECKING:
    from codememory.service.project_store import DateLike, Store


def store_memory(
    store: Store,
    text: str,
    *,
    category: str | None = None,
    importance: float | str | None = None,
    tags: str | Sequence[str] | None = None,
    expires: DateLike = None,
    entered_by: str | None = None,
    source: str | None = None,
    supersedes: Sequence[str] | None = None,
    personal: bool | None = None,
    by_agent: bool = False,
) -> AddResult:
    """Store one memory; a (near-)identical live memory is returned instead (see `Store.add`). `personal`: kept
    out of the team's shared text form (None: the [share] settings decide). `by_agent`: an agent stored it through
    a tool (MCP memory_store, the plugin's), `entered_by` being its client name: its provenance says so whatever
    the name (core/provenance.py); otherwise who wrote it is read from entered_by and source."""
    provenance = None
    if by_agent:
        from codememory.core.provenance import Provenance, agent_by
        from codememory.text.memory_fields import clean_name

        provenance = Provenance(by=agent_by(clean_name(entered_by)))  # a name holding a secret is not kept here either
    return store.add(
        text,
        category=category,
        importance=importance,
        tags=tags,
        expires=expires,
        entered_by=entered_by,
        source=source,
        supersedes=supersedes,
        personal=personal,
        provenance=provenance,
    )


@dataclass
class RememberScan(Result):
    """`{found, stored, results, warnings}`: `remember-scan --json`."""

    found: int  # notes taken from the text
    stored: int  # of them, the ones not stored before
    results: list[AddResult]
    warnings: list[str]  # what was cut or skipped, one line each


def remember_scan(
    store: Store,
    text: str,
    *,
    entered_by: str | None = None,
    source: str | None = None,
    warnings: Sequence[str] = (),
    on_warning: Callable[[str], None] | None = None,
) -> RememberScan:
    """Store every `*Remember*: ...` note in `text` (see `Store.remember_scan`). `warnings` are the caller's own,
    about reading the text (they come first); each new warning also goes to `on_warning` as it happens."""
    said = list(warnings)

    def warn(message: str) -> None:
        said.append(message)
        if on_warning is not None:
            on_warning(message)

    results = store.remember_scan(text, entered_by=entered_by, source=source, on_warning=warn)
    return RememberScan(len(results), sum(r.created for r in results), results, said)
