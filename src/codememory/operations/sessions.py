"""Reading the coding sessions saved by checkpoints: list, search, a session's files, its markdown, and rebuilding
the rows from the markdown files (`codememory sessions ...`, MCP list_sessions / search_sessions /
get_session_files). Saving one is codememory.operations.checkpoint; searching every project is global_search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result
from codememory.sessions.results import RebuildReport, SessionDetail, SessionFile, SessionSearch, SessionSummary
from codememory.sessions.service import MAX_RESULTS

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class SessionList(Result):
    """`{sessions}`, newest first: `sessions list --json`, MCP list_sessions."""

    sessions: list[SessionSummary]


@dataclass
class SessionFiles(Result):
    """`{session_id, files}`, created first, then modified, then deleted: MCP get_session_files,
    `sessions show --files --json`."""

    session_id: str
    files: list[SessionFile]


def list_sessions(store: Store, *, limit: int = 10, tool: str | None = None, status: str | None = None) -> SessionList:
    return SessionList(store.list_sessions(limit=limit, tool=tool, status=status))


def search_sessions(store: Store, query: str, *, limit: int = MAX_RESULTS, tool: str | None = None) -> SessionSearch:
    """Sessions ranked by weighted keywords; dates, a tool and paths in the query filter them."""
    return store.search_sessions(query, limit=limit, tool=tool)


def session_files(store: Store, session_id: str) -> SessionFiles:
    return SessionFiles(session_id, store.session_files(session_id))


def show_session(store: Store, session_id: str) -> SessionDetail:
    return store.show_session(session_id)


def rebuild_sessions(store: Store) -> RebuildReport:
    return store.rebuild_sessions()
