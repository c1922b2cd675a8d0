"""The injection ledger: what proactive retrieval put in front of a model, why, and at what token cost
(`codememory explain`; the daemon records, see `record_injection`).

The daemon appends one row each time it hands memories to an agent: a `POST /retrieve` answer with at least
one memory (kind "hud") and a cold-start block from `POST /memory/recent` (kind "cold_start"). A row keeps
the scrubbed query expansion and, per memory, its id, why it was chosen (the retriever's own `why`: retriever,
match, score, cosine, entities, pinned; for a cold start: importance or recency) and its estimated tokens.
The memories' text is not copied into the ledger: `explain` shows their current text from the store, and
says when a memory has since been archived, superseded, has expired or was forgotten.

`explain_last` result (the `--json` output; keys are stable):

    {session_id, total, shown, injections: [{id, at, source, session_id, kind, query: [phrase, ...],
     degraded, tokens, memories: [{id, state, category, text, why, tokens}]}]}

`state` is "live", "archived", "superseded", "expired" or "forgotten" (then `category` and `text` are null);
`injections` is oldest first; `total` counts the session's injections still in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codememory.core.bounded_input import text_arguments
from codememory.core.dates import now_iso
from codememory.core.result import Result
from codememory.errors import InvalidInput, NotFound
from codememory.retrieval.proactive import MAX_PHRASES
from codememory.store.injections import InjectedMemory, Injection, InjectionTables
from codememory.text.context_render import one_line
from codememory.text.tokens import memory_tokens

if TYPE_CHECKING:
    from codememory.service.project_store import Store

DEFAULT_LAST = 5
MAX_LAST = 1000
_SHOWN_CHARS = 100  # of a memory's text in the text output


@dataclass
class InjectedNow(Result):
    """A memory of an injection, as the store has it now."""

    id: str
    state: str  # live, archived, superseded, expired or forgotten
    category: str | None  # None once forgotten
    text: str | None
    why: dict[str, Any]  # why it was chosen then
    tokens: int


@dataclass
class InjectionView(Result):
    id: int
    at: str
    source: str
    session_id: str | None
    kind: str  # hud, cold_start, hook_start or hook_prompt
    query: list[str]
    degraded: bool
    tokens: int
    memories: list[InjectedNow]


@dataclass
class Explained(Result):
    """`{session_id, total, shown, injections}`: `explain --json` (see the module docstring)."""

    session_id: str | None
    total: int  # the session's injections still in the ledger
    shown: int
    injections: list[InjectionView]  # oldest first


@text_arguments  # the phrases and texts come from hooks, the daemon and agents: no lone surrogate reaches SQLite
def record_injection(
    store: Store,
    *,
    kind: str,
    memories: Sequence[Mapping[str, Any]],
    query: Sequence[str] = (),
    source: str = "opencode",
    session_id: str | None = None,
    degraded: bool = False,
    keep: int | None = None,
) -> int | None:
    """Append what was injected (each memory a mapping with id, text and why) to the store's ledger. Each
    memory costs `memory_tokens(text)`, as retrieval's budget counts it; `query` keeps the
    phrases retrieval used (the first MAX_PHRASES). Nothing is recorded for an empty list (returns None);
    else returns the row id."""
    items = [
        InjectedMemory(str(m["id"]), dict(m.get("why") or {}), memory_tokens(str(m.get("text") or "")))
        for m in memories
    ]
    if not items:
        return None
    tables = InjectionTables(store.db) if keep is None else InjectionTables(store.db, keep=keep)
    return tables.record(
        at=now_iso(),
        source=source,
        session_id=session_id,
        kind=kind,
        query="\n".join([q.strip() for q in query if q.strip()][:MAX_PHRASES]),
        memories=items,
        degraded=degraded,
    )


@dataclass(frozen=True)
class Recorder:
    """Who is handed memories (the calling tool and its session) and what to do when recording fails: the ledger
    never costs the caller its answer (the daemon notes the failure on /health, a hook in hooks.log)."""

    source: str
    session_id: str | None
    on_error: Callable[[Exception], None]

    def record(
        self,
        store: Store,
        *,
        kind: str,
        memories: Sequence[Mapping[str, Any]],
        query: Sequence[str] = (),
        degraded: bool = False,
    ) -> None:
        try:
            record_injection(
                store,
                kind=kind,
                memories=memories,
                query=query,
                source=self.source,
                session_id=self.session_id,
                degraded=degraded,
            )
        except Exception as exc:
            self.on_error(exc)


def explain_last(store: Store, *, last: int = DEFAULT_LAST, session_id: str | None = None) -> Explained:
    """The newest `last` injections of `session_id` (default: the session of the newest injection), each
    memory with its current text and state (see the module docstring for the shape). An empty ledger gives
    no injections; a session with none in the ledger is NotFound."""
    if not 1 <= last <= MAX_LAST:
        raise InvalidInput(f"--last must be between 1 and {MAX_LAST}")
    tables = InjectionTables(store.db)
    if session_id is None:
        latest = tables.latest()
        if latest is None:
            return Explained(None, 0, 0, [])
        session_id = latest.session_id
    rows = tables.last(session_id, last)
    if not rows:
        known = [s for s, _n, _at in tables.sessions(5) if s is not None]
        hint = f" (recent sessions: {', '.join(known)})" if known else " (the ledger is empty)"
        raise NotFound(f"no injections recorded for session {session_id}{hint}")
    ids = list(dict.fromkeys(m.id for row in rows for m in row.memories))
    current = {mem.id: mem for _pk, mem in store.db.get_by_ids(ids)}
    now = now_iso()
    injections = [_injection(row, current, now) for row in rows]
    return Explained(session_id, tables.count(session_id, any_session=False), len(injections), injections)


def _injection(row: Injection, current: Mapping[str, Any], now: str) -> InjectionView:
    memories = []
    for item in row.memories:
        mem = current.get(item.id)
        if mem is None:
            state = "forgotten"
        elif mem.archived:
            state = "archived"
        elif mem.superseded_by:
            state = "superseded"
        elif mem.expires_at is not None and mem.expires_at <= now:
            state = "expired"
        else:
            state = "live"
        memories.append(
            InjectedNow(
                item.id,
                state,
                None if mem is None else mem.category,
                None if mem is None else mem.text,
                item.why,
                item.tokens,
            )
        )
    return InjectionView(
        row.id,
        row.at,
        row.source,
        row.session_id,
        row.kind,
        row.query.splitlines(),
        row.degraded,
        row.tokens,
        memories,
    )


# ------------------------------------------------------------------------------------------ text form
def why_text(why: Mapping[str, Any]) -> str:
    """One line from a ledger `why`: "retriever hybrid, match lexical, score 0.95, cosine 0.81, entities
    httpx, pinned" (whatever keys it holds, in its order)."""
    parts = []
    for key, value in why.items():
        if value is True:
            parts.append(str(key))
        elif value is False or value is None or value == []:
            continue
        elif isinstance(value, list | tuple):
            parts.append(f"{key} {', '.join(map(str, value))}")
        else:
            parts.append(f"{key} {value}")
    return ", ".join(parts) or "-"


def _short(text: str, width: int = _SHOWN_CHARS) -> str:
    line = one_line(text)  # an agent may read this (`codememory explain --last`): no line breaks, no tags
    return line if len(line) <= width else line[: width - 1] + "…"


def render_text(data: Explained) -> str:
    """The `codememory explain` text output of an `explain_last` result."""
    if not data.injections:
        return (
            "No injections recorded yet in this project: the daemon records one each time it hands memories "
            "to an agent (a /retrieve answer, a cold-start block)."
        )
    session = one_line(data.session_id, 200) or "(no session id)"  # the ledger is in memory.db: untrusted
    lines = [f"Session {session}: the last {data.shown} of {data.total} injections, oldest first", ""]
    for inj in data.injections:
        flags = ", degraded" if inj.degraded else ""
        count = len(inj.memories)
        lines.append(
            f"{one_line(inj.at, 40)}  {one_line(inj.kind, 40)} ({one_line(inj.source, 100)}{flags}): {count} "
            f"{'memory' if count == 1 else 'memories'}, {inj.tokens} tokens"
        )
        if inj.query:
            lines.append(f"  query: {_short('; '.join(inj.query), 160)}")
        for mem in inj.memories:
            state = "" if mem.state == "live" else f" [{mem.state}]"
            lines.append(f"  {one_line(mem.id, 40)}  {mem.tokens:>4} tok{state}  {_short(mem.text or '(forgotten)')}")
            lines.append(f"      why: {one_line(why_text(mem.why), 300)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
