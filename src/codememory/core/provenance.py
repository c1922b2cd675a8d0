"""Where a memory came from (its provenance), and what that origin earns it.

Every memory records one origin, set by the code path that brought it into the store, never read from the memory's
own fields (a pulled file, an imported line or a committed row can claim any `entered_by`, importance or date):

- `local`: written on this machine. `by` says how: `user` (a person at the CLI, the viewer or the Python API),
  `agent:<assistant>` (an agent through a tool: MCP `memory_store`, the OpenCode plugin), `session:<speaker>`
  (extracted from a captured session; the speaker is who said it: `user`, `assistant_accepted` (proposed by the
  assistant and accepted by the user), `observed` (what a tool's output showed) or `assistant`), or
  `consolidation` (merged here from other memories).
- `git`: applied from the shared text form (`.codememory/memories/`) that git brought; `by` is the author of the last
  commit that touched the file, as `git log` tells it (nothing the file says), or None when git does not know.
- `committed`: found in a `memory.db` that arrived with the repository (a clone or pull), not written here.
- `import`: read by `codememory import`; `by` is the file's name.
- `remote`: the organisation's memory (Milvus), never stored here; `by` is the project it belongs to.

Only `local` memories are trusted: the others are ranked on their content alone (importance taken as neutral, a
creation date no later than their arrival here, and a remote row's claims never enter fusion), and an untrusted one
whose text reads like instructions (text/instructions.py) waits for the user's review (`review`: "pending") before
it may enter a session-start or per-step block. The user's answer is "accepted" or "rejected".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.result import Result

ORIGINS = ("local", "git", "committed", "import", "remote")
STORED_ORIGINS = ("local", "git", "committed", "import")  # a remote row is never stored
TRUSTED_ORIGIN = "local"
REVIEW_STATES = ("pending", "accepted", "rejected")
NEUTRAL_IMPORTANCE = 0.5  # what an untrusted memory's importance counts as wherever importance ranks
# Who stated what a memory says, recorded in its `source` after the session position ("opencode session:ses_abc
# turn:3 said_by:user"): the user; the assistant, with the user's acceptance (the user's next turn agreed or carried
# on); what a tool's outcome showed (a failure and the lesson drawn from it, a fact about the data or environment);
# or the assistant alone (its own todo list).
SPEAKERS = ("user", "assistant_accepted", "observed", "assistant")
BY_CHARS = 120

# Who said an extracted memory, as extraction records it in the memory's source ("... said_by:user").
_SAID_BY_RE = lazy_pattern(r"\bsaid_by:(?P<who>[a-z_]+)\b")
# An assistant or MCP client name as a label may show it; anything else is "an agent".
_AGENT_RE = lazy_pattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
# What is shown of a git author: an address, or failing that a plain name.
_EMAIL_RE = lazy_pattern(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}")
_NAME_RE = lazy_pattern(r"[^\W\d_][\w .'-]{0,59}", re.UNICODE)
_FILE_RE = lazy_pattern(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,79}")
_PROJECT_RE = lazy_pattern(r"[A-Za-z0-9_.@+-]{1,80}")

_SPOKEN = {
    "user": "said by the user",
    "assistant_accepted": "proposed by the assistant, accepted by the user",
    "observed": "seen in a session's tool output",
    "assistant": "the assistant's own note",
}
_EXTRACTORS = ("codememory-extract", "auto-extract")  # entered_by of extraction and `*Remember*` scans
_CONSOLIDATION = "consolidation"  # entered_by of what a consolidation squash writes


def said_by(source: str | None) -> str | None:
    """The speaker a memory's source records (extraction writes `said_by:<speaker>`), or None."""
    m = _SAID_BY_RE.search(source or "")
    return m.group("who") if m and m.group("who") in SPEAKERS else None


def source_said_by(source: str, who: str) -> str:
    """`source` naming its speaker (`who`: one of SPEAKERS)."""
    if who not in SPEAKERS:
        raise ValueError(f"unknown speaker {who!r}")
    return f"{_SAID_BY_RE.sub('', source).rstrip()} said_by:{who}"


def git_author(email: str | None, name: str | None = None) -> str | None:
    """A commit author as a provenance may show it: the address when it looks like one, else a plain name, else None
    (author fields are whatever the committer typed)."""
    email = (email or "").strip()
    if _EMAIL_RE.fullmatch(email) and len(email) <= BY_CHARS:
        return email
    name = " ".join((name or "").split())
    return name if _NAME_RE.fullmatch(name) else None


def agent_by(assistant: str | None) -> str:
    """`by` of a memory an agent stored through a tool (`assistant`: its name, e.g. the MCP client's)."""
    name = (assistant or "").strip()
    return f"agent:{name}" if _AGENT_RE.fullmatch(name) else "agent"


def session_by(source: str | None) -> str:
    """`by` of a memory extracted from a session, with its speaker when the source records one."""
    who = said_by(source)
    return f"session:{who}" if who else "session"


def import_by(file_name: str | None) -> str | None:
    name = (file_name or "").strip()
    return name if _FILE_RE.fullmatch(name) else None


def local_by_from_fields(entered_by: str | None, source: str | None) -> str:
    """For a memory written here before provenance was recorded: how it was most likely written, read from its own
    entered_by and source (these rows were all written on this machine, so their fields are ours)."""
    agent = (entered_by or "").strip()
    if said_by(source) or agent.startswith(_EXTRACTORS) or (source or "").startswith("hook:"):
        return session_by(source)
    if agent == _CONSOLIDATION:
        return "consolidation"
    if agent.lower() in _KNOWN_AGENTS:
        return agent_by(agent)
    return "user"


# entered_by values the agents' entry points write (MCP client names, the plugin, the hooks' tools).
_KNOWN_AGENTS = frozenset(
    {
        "mcp",
        "opencode",
        "claude",
        "claude-code",
        "codex",
        "codex-mcp-client",
        "cursor",
        "gemini",
        "gemini-cli",
        "gemini-cli-mcp-client",
        "copilot",
        "copilot-cli",
        "github-copilot-developer",
    }
)


@dataclass(frozen=True)
class Provenance(Result):
    """A memory's origin (one of ORIGINS), who or what within it (`by`), when it arrived here (`at`, for what was not
    written here) and the user's review of it (None: none needed). JSON: those, `trusted` and `label`."""

    COMPUTED: ClassVar[dict[str, Any]] = {"trusted": bool, "label": str}

    origin: str = TRUSTED_ORIGIN
    by: str | None = None
    at: str | None = None
    review: str | None = None

    @property
    def trusted(self) -> bool:
        """Written on this machine: its importance and dates are ours to rank on."""
        return self.origin == TRUSTED_ORIGIN

    @property
    def held_back(self) -> bool:
        """Kept out of the blocks put in an agent's context unasked (session start, per-step): waiting for the
        user's review, or rejected."""
        return self.review in ("pending", "rejected")

    def label(self) -> str:
        """A few words an agent reads before the memory: 'from git, by alice@example.com'."""
        return _label(self.origin, self.by) + ("; not reviewed" if self.review == "pending" else "")

    def ranked_importance(self, importance: float) -> float:
        return importance if self.trusted else NEUTRAL_IMPORTANCE

    def to_dict(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "by": self.by,
            "at": self.at,
            "review": self.review,
            "trusted": self.trusted,
            "label": self.label(),
        }


def remote_provenance(project: str) -> Provenance:
    return Provenance("remote", project if _PROJECT_RE.fullmatch(project or "") else None)


def _label(origin: str, by: str | None) -> str:
    if origin == "local":
        kind, _, detail = (by or "").partition(":")
        if kind == "agent":
            return f"stored by {detail}" if detail else "stored by an agent"
        if kind == "session":
            return _SPOKEN.get(detail, "from a past session")
        if kind == "consolidation":
            return "merged here from other memories"
        return "by the user" if kind == "user" else "written here"
    if origin == "git":
        return f"from git, by {by}" if by else "from git"
    if origin == "committed":
        return "from a committed memory.db"
    if origin == "import":
        return f"imported from {by}" if by else "imported"
    if origin == "remote":
        return f"from the organisation, project {by}" if by else "from the organisation's memory"
    return "of unknown origin"


def provenance_from_dict(data: object) -> Provenance:
    """A provenance from its JSON form (`to_dict`), as a daemon's answer carries it; anything malformed reads as an
    untrusted one."""
    if not isinstance(data, dict):
        return Provenance("committed")
    if data.get("origin") == "remote":
        return remote_provenance(str(data.get("by") or ""))
    return stored_provenance(data.get("origin"), data.get("by"), data.get("at"), data.get("review"))


def stored_provenance(origin: object, by: object, at: object, review: object) -> Provenance:
    """A provenance read back from a store row (whose values may be anything: a hostile file): an unknown origin is
    treated as a committed one (untrusted), bad values of the rest are dropped."""
    kind = origin if isinstance(origin, str) and origin in STORED_ORIGINS else "committed"
    who = by if isinstance(by, str) and 0 < len(by) <= BY_CHARS and by.isprintable() else None
    when = at if isinstance(at, str) and 0 < len(at) <= 40 and at.isprintable() else None
    state = review if isinstance(review, str) and review in REVIEW_STATES else None
    return Provenance(kind, who, when, state)
