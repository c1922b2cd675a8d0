"""Search every project in the global registry (`codememory search --global`, MCP `search_sessions` with
scope "global"): the same search runs in each registered project's store and the hits are merged.

Merging memories. Raw scores are not comparable between stores: BM25 depends on each store's corpus
(FTS5 clamps a negative IDF to 1e-6, so a term found in a store of one memory scores ~0.000001), the
hybrid scores are z-scores over each store's own candidates, and one store may rank by meaning while
another has no embedding model. So the merge uses ranks, not scores:
1. every project's own order is kept (it is the best judgement of relevance inside that project);
2. the fills of a keyword search, which a store appends only after its exact matches (match "partial":
   some of the words; then "fuzzy": typo-tolerant), come after every project's main hits, partial
   before fuzzy, as they do in one store;
3. otherwise hits interleave by their rank in their project (1st of each project, then 2nd, ...),
   projects in registry order on ties.
Each result keeps its project's own `score` and gains `project`, `project_name` and `project_rank`.

Merging sessions. Session relevance is a weighted share of the query's terms found (constant weights),
so those scores are comparable across projects and sessions merge by score, then date.

A registered project that is gone, has no store, or whose store or config is broken is reported in
`projects[].error` and skipped; a mistake in the query or filters is the caller's and raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from codememory.core import registry
from codememory.core.bounded_input import check_query
from codememory.core.dates import now_iso
from codememory.core.result import FLATTEN, SKIP, Result, json_key
from codememory.errors import CodememoryError, InvalidInput
from codememory.retrieval.search import DEFAULT_THRESHOLD, Hit, SearchResult, check_search_args
from codememory.service.project_store import Store
from codememory.sessions.filters import SessionQuery, extract_filters
from codememory.sessions.results import SessionHit
from codememory.sessions.service import MAX_RESULTS


@dataclass
class ProjectOutcome(Result):
    """What one registered project contributed (or why it could not)."""

    root: str
    name: str
    hits: int = 0  # results from this project in the returned page
    error: str | None = None
    mode: str | None = None  # what ranked this project's hits ("hybrid", "lexical", "semantic")
    degraded_reason: str | None = None


@dataclass
class GlobalHit(Result):
    """A project's hit, with its project and its rank there."""

    hit: Hit = field(metadata=FLATTEN)
    project: str  # the project's root
    project_name: str
    project_rank: int  # 1-based position in its project's own results
    outcome: ProjectOutcome = field(metadata=SKIP)


@dataclass
class GlobalResult(Result):
    """`search --global --json`."""

    COMPUTED: ClassVar[dict[str, Any]] = {"global": bool, "count": int}

    query: str
    hits: list[GlobalHit] = field(metadata=json_key("results"))
    projects: list[ProjectOutcome]
    has_more: bool
    registry: str = ""  # the registry file read

    def to_dict(self) -> dict[str, Any]:
        return {
            "global": True,
            "query": self.query,
            "count": len(self.hits),
            "has_more": self.has_more,
            "registry": self.registry,
            "projects": [p.to_dict() for p in self.projects],
            "results": [h.to_dict() for h in self.hits],
        }


def registered_projects(path: Path | None = None) -> list[ProjectOutcome]:
    """One outcome per registered root, in registry order (a root listed twice counts once)."""
    seen: dict[str, ProjectOutcome] = {}
    for entry in registry.load(path):
        root = entry["root"]
        if root not in seen:
            seen[root] = ProjectOutcome(root, str(entry.get("name") or Path(root).name))
    return list(seen.values())


def _open(outcome: ProjectOutcome) -> Store | None:
    """The project's store, or None with `outcome.error` set: at this point every failure (a missing
    folder or store, a corrupt database, an invalid config.toml) belongs to that project."""
    try:
        return Store.open(outcome.root)
    except Exception as exc:
        outcome.error = _describe(exc)
        return None


def _describe(exc: Exception) -> str:
    if isinstance(exc, CodememoryError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _opened(projects: list[ProjectOutcome]) -> Iterator[tuple[int, ProjectOutcome, Store]]:
    """(registry index, outcome, open store) of each project that opens, one at a time: each store
    is closed before the next opens (hundreds of open stores would run out of file descriptors)."""
    for index, outcome in enumerate(projects):
        store = _open(outcome)
        if store is not None:
            with store:
                yield index, outcome, store


_LEXICAL_FILLS = {"partial": 1, "fuzzy": 2}  # merge tier of a keyword search's fills (exact: 0)


def _ranked(result: SearchResult, outcome: ProjectOutcome) -> list[tuple[tuple[int, int], GlobalHit]]:
    """(merge key, hit) for one project's hits: (tier, rank within the tier), non-decreasing along
    the project's own order, so sorting by it never reorders a project's hits."""
    out = []
    tier, in_tier = 0, 0
    for position, hit in enumerate(result.hits, start=1):
        fill = _LEXICAL_FILLS.get(hit.match, 0) if result.mode == "lexical" else 0
        if fill > tier:
            tier, in_tier = fill, 0
        in_tier += 1
        out.append(((tier, in_tier), GlobalHit(hit, outcome.root, outcome.name, position, outcome)))
    return out


def _search_one(store: Store, outcome: ProjectOutcome, query: str, want: int, **kwargs: Any) -> SearchResult | None:
    try:
        result = store.search(query, limit=want, offset=0, touch=False, **kwargs)
    except InvalidInput:
        raise  # the query or a filter is wrong, the same in every project
    except Exception as exc:
        outcome.error = _describe(exc)
        return None
    outcome.mode, outcome.degraded_reason = result.mode, result.degraded_reason
    return result


def _touch(page: list[GlobalHit]) -> None:
    """Count an access for the hits shown, as a project search does (not for those merged away)."""
    now = now_iso()
    for root in dict.fromkeys(g.project for g in page):
        shown = [g.hit for g in page if g.project == root]
        try:
            with Store.open(root) as store:
                store.db.touch([pk for _id, pk in store.db.get_pk_map([h.memory.id for h in shown])], now)
        except CodememoryError:
            continue  # e.g. another user's read-only store: access stats are not worth failing for
        for hit in shown:
            hit.memory.access_count += 1
            hit.memory.last_accessed_at = now


def search_all(
    query: str,
    *,
    limit: int = 10,
    offset: int = 0,
    fuzzy: bool | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    mode: str = "hybrid",
    touch: bool = True,
    registry_path: Path | None = None,
    **filter_args: Any,
) -> GlobalResult:
    """Run `Store.search` in every registered project and merge the hits (see the module docstring).
    `filter_args` are Store.search's filters (tags, category, after, entity, ...)."""
    check_search_args(query, limit, offset, mode, threshold)
    projects = registered_projects(registry_path)
    want = limit + offset
    candidates: list[tuple[tuple[int, int, int], GlobalHit]] = []
    more = False
    for index, outcome, store in _opened(projects):
        result = _search_one(store, outcome, query, want, fuzzy=fuzzy, threshold=threshold, mode=mode, **filter_args)
        if result is not None:
            more = more or result.has_more
            candidates += [((tier, rank, index), hit) for (tier, rank), hit in _ranked(result, outcome)]
    candidates.sort(key=lambda c: c[0])
    page = [hit for _key, hit in candidates[offset : offset + limit]]
    if touch:
        _touch(page)
    for hit in page:
        hit.outcome.hits += 1
    return GlobalResult(
        query=query,
        hits=page,
        projects=projects,
        has_more=more or len(candidates) > want,
        registry=str(registry_path or registry.registry_path()),
    )


# ---------------------------------------------------------------------------- sessions
@dataclass
class ProjectSessions(Result):
    """What one registered project contributed to a session search (or why it could not)."""

    root: str
    name: str
    hits: int
    error: str | None


@dataclass
class GlobalSessionHit(SessionHit):
    project: str  # the project's root
    project_name: str


@dataclass
class GlobalSessionSearch(Result):
    """`{scope: "global", results, query, projects}`: MCP search_sessions with scope "global"."""

    scope: str
    results: list[GlobalSessionHit]
    query: SessionQuery
    projects: list[ProjectSessions]


def _session_key(item: tuple[SessionHit, int]) -> tuple[float, tuple[int, ...], int, int]:
    hit, index = item
    score = hit.score
    return (-score if score is not None else 0.0, tuple(-ord(c) for c in hit.date), hit.rank, index)


def search_sessions_all(
    query: str, *, limit: int = MAX_RESULTS, tool: str | None = None, registry_path: Path | None = None
) -> GlobalSessionSearch:
    """`Store.search_sessions` in every registered project, merged by relevance, then newest date; each result
    names its project."""
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    check_query(query)
    projects = registered_projects(registry_path)
    found: list[tuple[SessionHit, int, ProjectOutcome]] = []
    parsed: SessionQuery | None = None
    for index, outcome, store in _opened(projects):
        try:
            answer = store.search_sessions(query, limit=limit, tool=tool)
        except InvalidInput:
            raise
        except Exception as exc:
            outcome.error = _describe(exc)
            continue
        parsed = parsed or answer.query
        found += [(hit, index, outcome) for hit in answer.results]
    found.sort(key=lambda item: _session_key((item[0], item[1])))
    results = []
    for rank, (hit, _index, outcome) in enumerate(found[: min(limit, MAX_RESULTS)], start=1):
        outcome.hits += 1
        fields = {**vars(hit), "rank": rank}
        results.append(GlobalSessionHit(**fields, project=outcome.root, project_name=outcome.name))
    return GlobalSessionSearch(
        "global",
        results,
        parsed if parsed is not None else extract_filters(query, [], None),
        [ProjectSessions(p.root, p.name, p.hits, p.error) for p in projects],
    )
