"""The JSON endpoints the web viewer needs beyond the agents' ones (`/memory/transcript`, `/sessions/list` and
`/sessions/search` serve it as they are): `POST /viewer/overview`, `/viewer/search`, `/viewer/list`, `/viewer/memory`
(one memory, no access counted), `/viewer/memory/edit|archive|forget|link`, `/viewer/session-detail`,
`/viewer/injections`, `/viewer/report` (what memory cost and what agents used), `/viewer/runs` (consolidation and
staleness runs), `/viewer/review` and `/viewer/review/answer` (memories from elsewhere that read like
instructions, accepted or rejected).

Each is a thin adapter over an operation (codememory.operations) and names its project like every other endpoint
(`project_root`, checked against the registry). Security is the server's middleware: the bearer token, or the
viewer's session cookie with its CSRF token on every request (`web.security`).

"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Security
from fastapi.security import HTTPBearer
from pydantic import ConfigDict, Field

from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.core.model import LINK_TYPES, MAX_TEXT
from codememory.daemon.recall_api import MemoryId, ProjectRoot
from codememory.daemon.sessions_api import SessionId
from codememory.daemon.state import DaemonState
from codememory.web.request_body import RequestBody

if TYPE_CHECKING:
    from codememory.service.project_store import Store

Tags = Annotated[list[Annotated[str, Field(max_length=100)]] | None, Field(max_length=20)]
ShortText = Annotated[str | None, Field(max_length=200)]
RECENT = 8


class ProjectBody(RequestBody):
    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot


class FilterBody(ProjectBody):
    """The CLI's filters (`codememory search` / `list`): tags (all of them), any_tags, category, dates
    (`after`/`before`: ISO, or "7d", "yesterday", …), entered_by, include_archived."""

    tags: Tags = None
    any_tags: Tags = None
    category: ShortText = None
    after: ShortText = None
    before: ShortText = None
    entered_by: ShortText = None
    include_archived: bool = False
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0

    def filters(self) -> dict[str, Any]:
        return {
            "tags": self.tags,
            "any_tags": self.any_tags,
            "category": self.category or None,
            "after": self.after or None,
            "before": self.before or None,
            "entered_by": self.entered_by or None,
            "include_archived": self.include_archived,
        }


class SearchBody(FilterBody):
    query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX_CHARS)]
    mode: Literal["hybrid", "lexical", "semantic"] = "hybrid"
    all: bool = False  # also the results held back as unlikely to be relevant, marked (`search --all`)


class ListBody(FilterBody):
    sort: Literal["created", "updated", "importance", "accessed"] = "created"
    order: Literal["asc", "desc"] = "desc"


class EditBody(ProjectBody):
    id: MemoryId
    text: Annotated[str | None, Field(min_length=1, max_length=MAX_TEXT)] = None
    category: Annotated[str | None, Field(max_length=40)] = None
    tags: Tags = None
    importance: Annotated[float | None, Field(ge=0, le=1)] = None


class MemoryBody(ProjectBody):
    id: MemoryId


class IdsBody(ProjectBody):
    ids: Annotated[list[MemoryId], Field(min_length=1, max_length=100)]


class ArchiveBody(IdsBody):
    undo: bool = False


class LinkBody(ProjectBody):
    from_id: MemoryId
    to_id: MemoryId
    type: Literal[LINK_TYPES] = "contextualizes"  # type: ignore[valid-type]


class ReviewBody(ProjectBody):
    state: Literal["pending", "accepted", "rejected"] = "pending"
    limit: Annotated[int, Field(ge=1, le=500)] = 100


class ReviewAnswerBody(IdsBody):
    accept: bool


class SessionDetailBody(ProjectBody):
    session_id: SessionId


class ReportBody(ProjectBody):
    since: ShortText = None  # as `codememory report --since`: "7d", "yesterday", an ISO date
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class InjectionsBody(ProjectBody):
    session_id: Annotated[str | None, Field(max_length=200)] = None
    last: Annotated[int, Field(ge=1, le=200)] = 20


def _safe_link(url: str) -> bool:
    lowered = url.strip().lower()
    if lowered.startswith("#login"):  # the login redirect's fragment: nothing a session file has to link to
        return False
    return lowered.startswith(("http://", "https://", "mailto:", "#"))


def render_markdown(text: str) -> str:
    """A session's markdown as HTML that carries no markup of its own: raw HTML in the text is escaped
    (`html: False`), and links keep only http, https and mailto (markdown-it's own check already refuses
    javascript:, vbscript:, file: and data:)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.disable("image")  # the page loads nothing from elsewhere (and the CSP would refuse it)
    return str(md.render(text))


def _with_link_texts(store: Store, detail: dict[str, Any]) -> dict[str, Any]:
    """The memory page names what each link points to by its text (`links[].text`; null once forgotten): a bare id
    tells a person nothing."""
    linked = dict(store.db.get_pk_map([link["id"] for link in detail["links"]]))
    texts = {m.id: m.text for m in store.db.get_by_pks(list(linked.values())).values()}
    detail["links"] = [{**link, "text": texts.get(link["id"])} for link in detail["links"]]
    return detail


def create_router(state: DaemonState) -> APIRouter:
    bearer = HTTPBearer(auto_error=False, description="The per-install token, or the viewer's session cookie.")
    router = APIRouter(prefix="/viewer", tags=["viewer"], dependencies=[Security(bearer)])

    @router.post("/overview")
    def overview(body: ProjectBody) -> dict[str, Any]:
        """The project at a glance: `{project_root, stats}` (`codememory stats --json`: counts by category,
        embedding coverage, extraction spend against the budgets), `health` (GET /health: the daemon, its
        dependencies, capture lag, the latest error), and the recent activity: `recent_memories` (`list`),
        `recent_sessions` (`sessions list`) and `recent_injections` ([{session_id, injections, at}])."""
        from codememory.operations.listing import list_memories
        from codememory.operations.sessions import list_sessions
        from codememory.operations.stats import stats
        from codememory.store.injections import InjectionTables

        root = state.project_root(body.project_root)
        with state.stores.use(root) as store:
            ledger = InjectionTables(store.db).sessions(RECENT)
            data = {
                "project_root": str(root),
                "stats": stats(store, tags=True, agents=True).to_dict(),
                "recent_memories": list_memories(store, limit=RECENT).to_dict(),
                "recent_sessions": list_sessions(store, limit=RECENT).to_dict(),
                "recent_injections": [{"session_id": s, "injections": n, "at": at} for s, n, at in ledger],
            }
        data["health"] = state.health_report()
        return data

    @router.post("/search")
    def search(body: SearchBody) -> dict[str, Any]:
        """`codememory search --json` over HTTP: the query syntax (words, "phrases", -exclusions, OR, prefix*),
        the CLI's filters, one page (`limit`, `offset`), each hit with its score and `explain`; `held_back` counts
        what the relevance decision left out, and `all` lists it after the others, marked (`search --all`)."""
        from codememory.operations.search import search as run

        with state.stores.use(state.project_root(body.project_root)) as store:
            found = run(
                store,
                body.query,
                limit=body.limit,
                offset=body.offset,
                mode=body.mode,
                show_held_back=body.all,
                **body.filters(),
            )
        return found.to_dict()

    @router.post("/list")
    def listing(body: ListBody) -> dict[str, Any]:
        """`codememory list --json`: `{count, total, memories}`, one page in the chosen order."""
        from codememory.operations.listing import list_memories

        with state.stores.use(state.project_root(body.project_root)) as store:
            return list_memories(
                store, sort=body.sort, order=body.order, limit=body.limit, offset=body.offset, **body.filters()
            ).to_dict()

    @router.post("/memory")
    def memory(body: MemoryBody) -> dict[str, Any]:
        """One memory as /memory/get gives it (its fields, links and entities), without counting an access: a
        person looking is not an agent using it (access counts feed ranking)."""
        from codememory.operations.get import detail

        with state.stores.use(state.project_root(body.project_root)) as store:
            return _with_link_texts(store, detail(store, store.get(body.id, touch=False)).to_dict())

    @router.post("/memory/edit")
    def edit(body: EditBody) -> dict[str, Any]:
        """Change a memory's text, category, tags or importance (fields left out stay): the memory afterwards,
        as /memory/get shows one (its fields, links and entities)."""
        from codememory.operations.edit import edit_memory

        with state.stores.use(state.project_root(body.project_root)) as store:
            return edit_memory(
                store, body.id, text=body.text, category=body.category, importance=body.importance, tags=body.tags
            ).to_dict()

    @router.post("/memory/archive")
    def archive(body: ArchiveBody) -> dict[str, Any]:
        """`codememory archive [--undo]`: `{archived, unknown}` (or `{unarchived, unknown}`)."""
        from codememory.operations.forget import archive as run

        with state.stores.use(state.project_root(body.project_root)) as store:
            return run(store, body.ids, undo=body.undo).to_dict()

    @router.post("/memory/forget")
    def forget(body: IdsBody) -> dict[str, Any]:
        """`codememory forget`: delete for good (also from the search indexes): `{forgotten, unknown}`."""
        from codememory.operations.forget import forget as run

        with state.stores.use(state.project_root(body.project_root)) as store:
            return run(store, body.ids).to_dict()

    @router.post("/memory/link")
    def link(body: LinkBody) -> dict[str, Any]:
        """`codememory link`: `from_id` corroborates, conflicts with, supersedes, refines or contextualizes
        `to_id` ("supersedes" also retires `to_id`): `{from_id, to_id, type}`."""
        from codememory.operations.link import link as run

        with state.stores.use(state.project_root(body.project_root)) as store:
            run(store, body.from_id, body.to_id, body.type)
        return {"from_id": body.from_id, "to_id": body.to_id, "type": body.type}

    @router.post("/review")
    def review(body: ReviewBody) -> dict[str, Any]:
        """`codememory review list --json`: the memories from elsewhere that read like instructions, in one review
        state (`pending` by default): `{state, count, counts, memories: [{id, text, category, importance,
        created_at, origin, by, arrived_at, provenance, review, reason}]}`."""
        from codememory.operations.review import review_list

        with state.stores.use(state.project_root(body.project_root)) as store:
            return review_list(store, state=body.state, limit=body.limit).to_dict()

    @router.post("/review/answer")
    def review_answer(body: ReviewAnswerBody) -> dict[str, Any]:
        """`codememory review accept|reject --json`: `{answer, done, written_here, unknown}`."""
        from codememory.operations.review import review_answer as run

        with state.stores.use(state.project_root(body.project_root)) as store:
            return run(store, body.ids, accept=body.accept).to_dict()

    @router.post("/session-detail")
    def session_detail(body: SessionDetailBody) -> dict[str, Any]:
        """`codememory sessions show --json` (summary, files, markdown) plus `html`: the markdown rendered with
        raw HTML escaped and only http, https and mailto links."""
        from codememory.operations.sessions import show_session

        with state.stores.use(state.project_root(body.project_root)) as store:
            data = show_session(store, body.session_id).to_dict()
        data["html"] = render_markdown(data["markdown"])
        return data

    @router.post("/injections")
    def injections(body: InjectionsBody) -> dict[str, Any]:
        """The injection ledger `codememory explain` reads: `{sessions: [{session_id, injections, at}],
        explained}` where `explained` is `explain --json` for `session_id` (default: the newest session):
        per call what was injected, why (score parts), and its token cost."""
        from codememory.operations.explain import explain_last
        from codememory.store.injections import InjectionTables

        with state.stores.use(state.project_root(body.project_root)) as store:
            sessions = [
                {"session_id": s, "injections": n, "at": at} for s, n, at in InjectionTables(store.db).sessions(50)
            ]
            explained = explain_last(store, last=body.last, session_id=body.session_id).to_dict()
        return {"sessions": sessions, "explained": explained}

    @router.post("/report")
    def report(body: ReportBody) -> dict[str, Any]:
        """`codememory report --json`: tokens spent on memory per day and per session, the memories shown and used,
        the most useful, the never used, the contradicted and the stale ones still shown (`since`: the window)."""
        from codememory.operations.report import since_stamp, usage_report

        with state.stores.use(state.project_root(body.project_root)) as store:
            return usage_report(store, since=since_stamp(body.since), limit=body.limit).to_dict()

    @router.post("/runs")
    def runs(body: ProjectBody) -> dict[str, Any]:
        """The project's hygiene runs, newest first: `{runs: [{kind, id, started_at, finished_at, status, trigger,
        counts}]}` — consolidation runs (what each squashed, superseded, linked, decayed) and staleness checks
        (how many memories checked, marked and cleared)."""
        from codememory.operations.hygiene_runs import hygiene_runs

        with state.stores.use(state.project_root(body.project_root)) as store:
            return hygiene_runs(store).to_dict()

    return router
