"""The `Store`'s session methods: coding sessions (checkpoints, their markdown files, search) as the library,
the CLI, MCP and the daemon use them, each a typed result over `Sessions`."""

from __future__ import annotations

import builtins
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.core.bounded_input import text_arguments

# The session modules (and the assistants' specs they read) load when a session method runs: most commands, a
# search among them, never touch sessions.
if TYPE_CHECKING:
    from codememory.sessions.results import (
        CheckpointResult,
        RebuildReport,
        SessionDetail,
        SessionFile,
        SessionSearch,
        SessionSummary,
    )
    from codememory.sessions.service import Sessions
    from codememory.store.database import Database


class SessionAccess:
    db: Database
    root: Path

    @functools.cached_property
    def sessions(self) -> Sessions:
        """The project's coding sessions, set up on first use."""
        from codememory.sessions.service import Sessions
        from codememory.store.sessions import SessionTables

        return Sessions(SessionTables(self.db), self.root)

    @text_arguments
    def checkpoint(self, *, tool: str, **fields: Any) -> CheckpointResult:
        """Save a session checkpoint and re-render its markdown file (see `Sessions.checkpoint`)."""
        from codememory.sessions.results import CheckpointResult

        return CheckpointResult(**self.sessions.checkpoint(tool=tool, **fields))

    @text_arguments
    def search_sessions(self, query: str, *, limit: int = 5, tool: str | None = None) -> SessionSearch:
        """Up to 5 sessions matching a natural-language query."""
        from codememory.sessions.results import SessionSearch

        return SessionSearch.from_dict(self.sessions.search(query, limit=limit, tool=tool))

    @text_arguments
    def list_sessions(
        self, *, limit: int = 10, tool: str | None = None, status: str | None = None
    ) -> builtins.list[SessionSummary]:
        """Recent sessions, newest first."""
        from codememory.sessions.results import SessionSummary

        return [SessionSummary(**s) for s in self.sessions.recent(limit=limit, tool=tool, status=status)]

    @text_arguments
    def session_files(self, session_id: str) -> builtins.list[SessionFile]:
        """Files touched in a session, created first, then modified, deleted."""
        from codememory.sessions.results import SessionFile

        return [SessionFile(**f) for f in self.sessions.files(session_id)]

    @text_arguments
    def show_session(self, session_id: str) -> SessionDetail:
        """A session's metadata, files and markdown text."""
        from codememory.sessions.results import SessionDetail

        return SessionDetail.from_dict(self.sessions.show(session_id))

    def rebuild_sessions(self) -> RebuildReport:
        """Recreate the session rows from the markdown files (the files that could not be read are reported)."""
        from codememory.sessions.results import RebuildReport

        return RebuildReport.from_dict(self.sessions.rebuild())
