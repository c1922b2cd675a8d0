"""Every error a caller of codememory can see (a CLI user, an MCP client, an HTTP client of the daemon, a
Python API user), in one tree under `CodememoryError`. Anything else that escapes is a bug.

The tree is also the one mapping from an error to what each entry point shows, read from the class (the
nearest class that sets it wins, as `except` clauses would):

- the CLI prints `codememory: error: <message>` on one line and exits with `exit_code`;
- the daemon answers `{"error": "<message>"}` with `http_status`;
- the MCP server returns the message as a tool error (`isError`), and the session goes on.

The message is `str(error)`, which may quote what the caller gave: entry points scrub it before showing it
(`text.privacy.scrub_message`). The store turns every sqlite3 error into one of these (store/failures.py),
so no caller ever catches sqlite3.Error.

Exceptions that never leave the module raising them (control flow) are private there, named with a
leading underscore; tests/test_errors.py keeps every public one here.
"""

from __future__ import annotations


class CodememoryError(Exception):
    """Base for every error that is the caller's to fix (bad input, missing store, ...) or to wait out."""

    exit_code = 1
    http_status = 400


def exit_code(error: CodememoryError) -> int:
    """The CLI's exit status for `error`."""
    return type(error).exit_code


def http_status(error: CodememoryError) -> int:
    """The daemon's HTTP status for `error`."""
    return type(error).http_status


# ------------------------------------------------------------------------------- the caller's input
class InvalidInput(CodememoryError):
    """An argument, option or request field the operation cannot take."""

    exit_code = 2


class NotFound(CodememoryError):
    """What the caller named (a memory, a session, a turn) does not exist."""

    http_status = 404


# ---------------------------------------------------------------------------------- the project store
class StoreNotFound(CodememoryError):
    """The project has no store (`codememory init` makes one)."""

    http_status = 404


class StoreUnusable(CodememoryError):
    """Corrupt, unreadable, or written by a newer codememory."""

    http_status = 503


class UnexpectedSchema(StoreUnusable):
    """The store holds schema objects (triggers, views, tables, indexes) codememory did not create."""


class StoreBusy(StoreUnusable):
    """Another process held the store's lock past the busy timeout; trying again later works."""


class UnsafePath(StoreUnusable, OSError):
    """A link (or something other than a file or folder) where codememory keeps its files. An OSError too,
    so the callers that already treat an unreadable cache or log as absent skip it the same way."""


class StoreFailed(CodememoryError):
    """SQLite refused a statement for a reason that is not about the file (the store cannot tell which of
    its rules it broke): a bug, never the caller's input. The message keeps SQLite's own words."""

    http_status = 503

    def __init__(self, detail: str) -> None:
        super().__init__(f"the store could not be used: {detail}")
        self.detail = detail


class AlreadyExists(StoreFailed):
    """A row with the same unique key is already stored; `constraint` names it ("memories.id")."""

    def __init__(self, detail: str, constraint: str) -> None:
        super().__init__(detail)
        self.constraint = constraint


# ------------------------------------------------------------------- this machine's codememory setup
class RegistryError(CodememoryError):
    """The user's registry of projects cannot be read or written."""

    http_status = 503


class TrustError(CodememoryError):
    """The user's record of trusted project settings cannot be read."""


class SetupError(CodememoryError):
    """A file init would change is malformed: nothing was written."""


# ------------------------------------------------------------------------------------------ the daemon
class DaemonError(CodememoryError):
    """The daemon cannot be started, stopped, installed or bound to its port."""


class LocalServerError(CodememoryError):
    """A local server (the daemon, `mcp --http`) cannot start: its port is taken, or its token file cannot be
    written."""


class DaemonUnavailable(CodememoryError):
    """The daemon is not running, not reachable, or not answering in time."""


class DaemonRequestError(CodememoryError):
    """The daemon answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"daemon answered {status}: {message}")
        self.status = status
        self.message = message


class ProjectNotAllowed(CodememoryError):
    """The request names a project that is not in the user's registry."""

    http_status = 403


class McpHttpError(CodememoryError):
    """`codememory mcp --http` cannot bind its port or start."""


# ------------------------------------------------------------------------------------------ the remote
class RemoteUnavailable(CodememoryError):
    """The organisation's Milvus (`[remote]`) is not configured, cannot be reached, or refused a request; a
    search degrades to local results with this as the reason, `publish` stops (its cursor keeps what was sent)."""

    http_status = 502


# ------------------------------------------------------------------------------------------ pipelines
class EmbedderError(CodememoryError, RuntimeError):
    """The embedder could not load or answer; callers degrade to lexical search."""


class LLMError(CodememoryError):
    """A model call failed: unreachable server, HTTP error, timeout, or an answer that is not a completion."""


class PromptFileError(InvalidInput):
    """An extraction prompt file (`[llm] prompts_dir`, or the packaged ones) is missing, empty or lacks a
    placeholder the extractor fills: a setting to fix (exit 2, as an invalid settings file); no model is asked
    anything until then."""


class InvalidOutput(CodememoryError, ValueError):
    """A model's extraction answer cannot be used; `reason` is safe to log and to send back to the model."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OpenCodeDBError(CodememoryError):
    """OpenCode's database could not be read: `state` is "missing", "unreadable" or "unknown_schema"."""

    def __init__(self, state: str, path: str | None, reason: str) -> None:
        super().__init__(f"OpenCode database {state}: {reason}")
        self.state = state
        self.path = path
        self.reason = reason


class TranscriptError(CodememoryError):
    """A transcript that cannot be read (missing, unreadable, not a transcript we know)."""


class PassFailed(CodememoryError):
    """A capture or extraction pass of the daemon reported an error (shown in /health's last_error)."""


class HookError(CodememoryError):
    """A usage error of the hook command itself (unknown assistant or event); logged, never raised to the
    assistant (a hook always exits 0)."""


class GitError(CodememoryError):
    """git is missing or failed, or the project is not in a git repository with a commit (the staleness check
    needs one)."""
