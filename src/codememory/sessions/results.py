"""The typed results of the session operations (`Store.checkpoint`, `search_sessions`, `list_sessions`,
`session_files`, `show_session`, `rebuild_sessions`), built from the mappings `Sessions` returns; their JSON form is
what the CLI's `sessions` commands print and the MCP session tools return (codememory.core.result)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from codememory.core.result import FLATTEN, Result
from codememory.sessions.filters import SessionQuery


@dataclass
class CheckpointResult(Result):
    """`{session_id, markdown_path, status, created, files_touched}`: MCP checkpoint."""

    session_id: str
    markdown_path: str | None  # absolute path of its markdown file (None: a link there, never handed out)
    status: str
    created: bool  # a new session was started
    files_touched: int


@dataclass
class SessionSummary(Result):
    session_id: str
    goal: str | None
    date: str  # the day it started, YYYY-MM-DD
    started_at: str
    updated_at: str
    tool: str
    status: str
    markdown_path: str | None  # None: the file there is a link, or resolves outside .codememory/sessions/


@dataclass
class SessionFile(Result):
    path: str  # relative to the project root
    change_type: str  # created, modified or deleted


@dataclass
class SessionDetail(Result):
    """A session's summary, the files it touched and its markdown text (`sessions show --json`)."""

    summary: SessionSummary = field(metadata=FLATTEN)
    files: list[SessionFile]
    markdown: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionDetail:
        summary = {f.name: data[f.name] for f in dataclasses.fields(SessionSummary)}
        return cls(SessionSummary(**summary), [SessionFile(**f) for f in data["files"]], data["markdown"])


@dataclass
class SessionHit(Result):
    """One session found by a session search, with why it matched."""

    rank: int
    score: float | None  # the share of the query found, weighted; None when only filters matched
    session_id: str
    goal: str | None
    date: str
    tool: str
    status: str
    top_files: list[str]
    markdown_path: str | None  # None: the file there is a link, or resolves outside .codememory/sessions/
    why: str


@dataclass
class SessionSearch(Result):
    """`{results, query}`: `sessions search --json`, MCP search_sessions (scope project)."""

    results: list[SessionHit]
    query: SessionQuery

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionSearch:
        return cls([SessionHit(**r) for r in data["results"]], SessionQuery(**data["query"]))


@dataclass
class RebuildError(Result):
    file: str
    error: str


@dataclass
class RebuildReport(Result):
    """`{sessions, errors}`: how many sessions were rebuilt from their markdown files, and the files skipped."""

    sessions: int
    errors: list[RebuildError]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RebuildReport:
        return cls(data["sessions"], [RebuildError(**e) for e in data["errors"]])
