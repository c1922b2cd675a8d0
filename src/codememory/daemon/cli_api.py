"""`POST /cli/search` and `POST /cli/store`: the CLI's `search` and `store`, run by the daemon for a `codememory`
process on this machine (codememory.cli.daemon_handoff).

A CLI process that does the work itself pays for its imports, for opening the store and for loading the embedding
model on every call; the daemon has all three ready. The answers are exactly the commands' `--json` output (the
same operations, `operations.search.search` and `operations.store_memory.store_memory`), so the CLI prints or
renders them as it would its own. Security is the server's middleware (Host, Origin, bearer token, body size), and
a project must be registered (`state.project_root`), as for every endpoint that names one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Security
from fastapi.security import HTTPBearer
from pydantic import ConfigDict, Field

from codememory.core.bounded_input import QUERY_MAX_CHARS
from codememory.core.model import ID_RE, MAX_TEXT
from codememory.daemon.state import DaemonState
from codememory.operations.search import search
from codememory.operations.store_memory import store_memory
from codememory.retrieval.search import DEFAULT_THRESHOLD
from codememory.web.request_body import RequestBody

ProjectRoot = Annotated[str, Field(max_length=4096, description="The project's root folder (as the CLI found it).")]
Option = Annotated[str | None, Field(max_length=1000)]


class CliSearchBody(RequestBody):
    """`codememory search`'s arguments and options (one project; --global and --remote stay in the CLI)."""

    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX_CHARS)]
    limit: Annotated[int, Field(ge=1, le=10_000)] = 10
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    fuzzy: bool | None = None
    threshold: Annotated[float, Field(ge=0, le=1)] = DEFAULT_THRESHOLD
    mode: Literal["hybrid", "lexical", "semantic"] = "hybrid"
    show_held_back: bool = False  # `--all`: also what the relevance decision held back, marked
    tags: Option = None
    any_tags: Option = None
    after: Option = None
    before: Option = None
    entered_by: Option = None
    category: Option = None
    include_expired: bool = False
    include_archived: bool = False
    include_superseded: bool = False
    entity: Option = None


class CliStoreBody(RequestBody):
    """`codememory store`'s text and options."""

    model_config = ConfigDict(extra="forbid")
    project_root: ProjectRoot
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
    category: Option = None
    tags: Option = None
    importance: Annotated[float | None, Field(ge=0, le=1)] = None
    expires: Option = None
    entered_by: Option = None
    source: Option = None
    supersedes: Annotated[list[Annotated[str, Field(pattern=ID_RE.pattern)]], Field(max_length=100)] = Field(
        default_factory=list
    )
    personal: bool | None = None


def create_router(state: DaemonState) -> APIRouter:
    bearer = HTTPBearer(auto_error=False, description="The per-install token (the middleware enforces it).")
    router = APIRouter(prefix="/cli", tags=["cli"], dependencies=[Security(bearer)])

    @router.post("/search")
    def cli_search(body: CliSearchBody) -> dict[str, Any]:
        """`codememory search --json` for one project: `{query, count, has_more, fuzzy_used, literal, mode,
        degraded, degraded_reason, held_back, results}`."""
        options = body.model_dump(exclude={"project_root", "query"})
        with state.stores.use(state.project_root(body.project_root)) as store:
            store.follow()  # memory files a `git pull` brought, as the CLI's own open would apply them
            with store.semantic.waiting_for_disk():  # a command: the whole answer, as the CLI's own search gives
                return search(store, body.query, **options).to_dict()

    @router.post("/store")
    def cli_store(body: CliStoreBody) -> dict[str, Any]:
        """`codememory store --json`: `{created, duplicate_of, duplicate_reason, embedded, links, memory}`."""
        options = body.model_dump(exclude={"project_root", "text"})
        with state.stores.use(state.project_root(body.project_root)) as store:
            store.follow()
            return store_memory(store, body.text, **options).to_dict()

    return router
