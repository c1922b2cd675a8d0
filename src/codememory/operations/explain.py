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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from codememory.core.bounded_input import text_arguments
from codememory.core.dates import now_iso
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


def explain_last(store: Store, *, last: int = DEFAULT_LAST, session_id: str | None = None) -> dict[str, Any]:
    """The newest `last` injections of `session_id` (default: the session of the newest injection), each
    memory with its current text and state (see the module docstring for the shape). An empty ledger gives
    no injections; a session with none in the ledger is NotFound."""
    if not 1 <= last <= MAX_LAST:
        raise InvalidInput(f"--last must be between 1 and {MAX_LAST}")
    tables = InjectionTables(store.db)
    if session_id is None:
        latest = tables.latest()
        if latest is None:
            return {"session_id": None, "total": 0, "shown": 0, "injections": []}
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
    return {
        "session_id": session_id,
        "total": tables.count(session_id, any_session=False),
        "shown": len(injections),
        "injections": injections,
    }


def _injection(row: Injection, current: Mapping[str, Any], now: str) -> dict[str, Any]:
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
            {
                "id": item.id,
                "state": state,
                "category": None if mem is None else mem.category,
                "text": None if mem is None else mem.text,
                "why": item.why,
                "tokens": item.tokens,
            }
        )
    return {
        "id": row.id,
        "at": row.at,
        "source": row.source,
        "session_id": row.session_id,
        "kind": row.kind,
        "query": row.query.splitlines(),
        "degraded": row.degraded,
        "tokens": row.tokens,
        "memories": memories,
    }


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


def render_text(data: Mapping[str, Any]) -> str:
    """The `codememory explain` text output of an `explain_last` result."""
    if not data["injections"]:
        return (
            "No injections recorded yet in this project: the daemon records one each time it hands memories "
            "to an agent (a /retrieve answer, a cold-start block)."
        )
    session = one_line(data["session_id"], 200) or "(no session id)"  # the ledger is in memory.db: untrusted
    lines = [f"Session {session}: the last {data['shown']} of {data['total']} injections, oldest first", ""]
    for inj in data["injections"]:
        flags = ", degraded" if inj["degraded"] else ""
        count = len(inj["memories"])
        lines.append(
            f"{one_line(inj['at'], 40)}  {one_line(inj['kind'], 40)} ({one_line(inj['source'], 100)}{flags}): {count} "
            f"{'memory' if count == 1 else 'memories'}, {inj['tokens']} tokens"
        )
        if inj["query"]:
            lines.append(f"  query: {_short('; '.join(inj['query']), 160)}")
        for mem in inj["memories"]:
            state = "" if mem["state"] == "live" else f" [{mem['state']}]"
            lines.append(
                f"  {one_line(mem['id'], 40)}  {mem['tokens']:>4} tok{state}  {_short(mem['text'] or '(forgotten)')}"
            )
            lines.append(f"      why: {one_line(why_text(mem['why']), 300)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
