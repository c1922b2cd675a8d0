"""Search one project's memories: `codememory search` gets the whole result (`SearchResult`); the recall tools (MCP
memory_search, the daemon's /memory/search, which the OpenCode plugin calls) get the short shape `RecallSearch`.
Searching every registered project is codememory.operations.global_search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.result import OMIT_NONE, Result
from codememory.remote.org_results import RemoteHit, RemoteStatus
from codememory.retrieval.decision import nothing_found
from codememory.retrieval.search import DEFAULT_THRESHOLD, SearchResult
from codememory.retrieval.why import why_text

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class RecallHit(Result):
    id: str
    text: str
    category: str
    importance: float
    tags: list[str]
    created_at: str
    source: str | None
    match: str  # exact, partial, semantic, context or fuzzy; "remote" for the organisation's
    score: float
    why: str  # what scored, in one line
    # Where it came from (core/provenance.py): "local" (written here), "git", "committed", "import", or
    # "remote:<project>" (the organisation's Milvus); `provenance` says it in a few words ("from git, by alice@…").
    origin: str = "local"
    provenance: str = ""

    @classmethod
    def remote(cls, hit: RemoteHit) -> RecallHit:
        why = f"{hit.origin}, rank {hit.rank} in the organisation's memory (fused score {hit.score:.4f})"
        return cls(
            hit.id,
            hit.text,
            hit.category,
            hit.importance,
            hit.tags,
            hit.created_at,
            hit.source,
            "remote",
            round(hit.score, 6),
            why,
            hit.origin,
            hit.provenance.label(),
        )


@dataclass
class RecallSearch(Result):
    """`{results, degraded, degraded_reason, held_back}`, best first: MCP memory_search and the daemon's
    /memory/search; `held_back` counts the candidates the relevance decision left out, and when nothing is returned
    `note` says so in words. With the organisation's memory searched too (`scope="org"`, `search --remote`),
    `remote` says how it went."""

    results: list[RecallHit]
    degraded: bool  # meaning-based search was wanted but unavailable: the results come from keywords
    degraded_reason: str | None
    held_back: int = 0  # candidates left out as unlikely to be relevant (retrieval/decision.py)
    note: str | None = field(default=None, metadata=OMIT_NONE)  # "Nothing relevant found (N held back …)."
    remote: RemoteStatus | None = field(default=None, metadata=OMIT_NONE)

    @classmethod
    def of(cls, result: SearchResult) -> RecallSearch:
        hits = [
            RecallHit(
                hit.memory.id,
                hit.memory.text,
                hit.memory.category,
                hit.memory.importance,
                hit.memory.tags,
                hit.memory.created_at,
                hit.memory.source,
                hit.match,
                round(hit.score, 6),
                why_text(hit.explain),
                hit.memory.provenance.origin,
                hit.memory.provenance.label(),
            )
            for hit in result.hits
        ]
        note = None if hits else nothing_found(result.held_back)
        return cls(hits, result.degraded, result.degraded_reason, result.held_back, note)


def search(
    store: Store,
    query: str,
    *,
    limit: int = 10,
    offset: int = 0,
    fuzzy: bool | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    mode: str = "hybrid",
    show_held_back: bool = False,
    **filters: Any,
) -> SearchResult:
    """`codememory search`: one page of hits with the grep-like syntax (see `Store.search`); `filters` are the
    store's filters (tags, any_tags, after, before, entered_by, category, include_*, entity)."""
    return store.search(
        query,
        limit=limit,
        offset=offset,
        fuzzy=fuzzy,
        threshold=threshold,
        mode=mode,
        show_held_back=show_held_back,
        **filters,
    )


def recall_search(
    store: Store,
    query: str,
    *,
    limit: int = 5,
    mode: str = "hybrid",
    category: str | None = None,
    tags: Sequence[str] | None = None,
    entity: str | None = None,
    after: str | None = None,
    before: str | None = None,
    touch: bool = True,
) -> RecallSearch:
    """What an agent's memory_search returns (an access is counted for each hit, unless `touch` is False)."""
    result = store.search(
        query,
        limit=limit,
        mode=mode,
        touch=touch,
        category=category,
        tags=tags,
        entity=entity,
        after=after,
        before=before,
    )
    return RecallSearch.of(result)


def org_search(
    store: Store,
    query: str,
    *,
    limit: int = 5,
    mode: str = "hybrid",
    category: str | None = None,
    tags: Sequence[str] | None = None,
    entity: str | None = None,
    after: str | None = None,
    before: str | None = None,
    projects: Sequence[str] = (),
    touch: bool = True,
) -> RecallSearch:
    """This project's hits and the organisation's (`[remote]`), merged by rank, local first on a tie; each hit
    says where it came from (`origin`). The remote being down or unconfigured leaves the local hits, with the
    reason in `remote.error`. `projects` limits the remote to those projects (default: every other project)."""
    from codememory.remote.org_search import interleave, search_remote

    found = recall_search(
        store,
        query,
        limit=limit,
        mode=mode,
        touch=touch,
        category=category,
        tags=tags,
        entity=entity,
        after=after,
        before=before,
    )
    remote_hits, status = search_remote(store, query, limit=limit, category=category, tags=tags, projects=projects)
    merged = interleave(found.results, [RecallHit.remote(h) for h in remote_hits], limit)
    status.hits = sum(1 for h in merged if h.match == "remote")
    note = None if merged else found.note
    return RecallSearch(merged, found.degraded, found.degraded_reason, found.held_back, note, status)
