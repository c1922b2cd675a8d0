"""Cold start: the memories put in front of an agent when a session starts, before it has said what it works on.

Two variants, one per way of showing them. Their rules differ, and each is kept as it was: folding them into one
would change what an assistant sees at the start of every session.
- `session_start_context` (the Claude Code, Codex and Cursor hooks at SessionStart): the most important memories as
  rendered `<project_memory>` lines within START_TOKENS (a line costs its own length / 4), then the goal of the
  tool's last session and a hint to use the MCP tools. A hook's output stays in the assistant's transcript, which
  is why it is a short, finished text block.
- `recent` (the daemon's /memory/recent; the OpenCode plugin renders the block itself): the most important and
  the newest memories alternately, without duplicates, within the budget the caller gives (a memory costs
  `memory_tokens` of its text, as /retrieve counts), returned as data with the number of live memories.
Both walk their candidates in order and take each one that still fits the budget (`_fit`), and both record what
they hand over in the injection ledger (kinds "hook_start" and "cold_start").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, TypeVar

from codememory.core.model import Memory
from codememory.core.result import Result
from codememory.text.tokens import estimate_tokens, memory_tokens

if TYPE_CHECKING:
    from codememory.operations.explain import Recorder
    from codememory.operations.hook_injected import Injected
    from codememory.service.project_store import Store

START_TOKENS = 600  # the hooks' session-start block
START_MEMORIES = 8  # candidates for it, by importance
_HINT = (
    "Use the codememory MCP tools (`memory_search`, `memory_store`, `checkpoint`) for more;"
    " cite ids when you rely on one."
)
T = TypeVar("T")


def _fit(candidates: Iterable[T], budget: int, cost: Callable[[T], int | None], limit: int) -> tuple[list[T], int]:
    """The candidates, in order, that fit what is left of `budget` (a cost of None: never shown), at most `limit`;
    and the budget spent."""
    chosen: list[T] = []
    left = budget
    for item in candidates:
        if len(chosen) >= limit:
            break
        price = cost(item)
        if price is None or price > left:
            continue
        left -= price
        chosen.append(item)
    return chosen, budget - left


# ------------------------------------------------------------------------------ the hooks' block
def session_start_context(
    store: Store, *, tool: str, current_session: str | None, recorder: Recorder, injected: Injected | None = None
) -> str:
    """The block a hook injects at session start ('' when there is nothing to say). `current_session` is the
    codememory session just opened for this conversation: it is not "the last session". With `injected` (what
    the assistant session's context already holds, codememory.operations.hook_injected), a line already there
    with the same text is left out, and what is shown is added to it; nothing new gives ''."""
    from codememory.operations.hook_injected import START_HINT, START_LAST
    from codememory.text.context_render import FIELD_CHARS, context_block, memory_line, one_line

    def fresh(key: str, line: str | None) -> bool:
        return line is not None and (injected is None or injected.fresh(key, line))

    from codememory.operations.stale import notes_by_id

    # by importance as ranking reads it (a memory not written here counts as neutral), none waiting for review
    memories = store.list(sort="importance", order="desc", limit=START_MEMORIES, injectable=True)
    notes = notes_by_id(store, [mem.id for mem in memories])
    rendered = [
        (mem, memory_line(mem.id, mem.category, mem.text, stale=notes.get(mem.id), origin=mem.provenance.label()))
        for mem in memories
    ]
    rendered = [(mem, line) for mem, line in rendered if fresh(mem.id, line)]
    shown, _spent = _fit(
        rendered, START_TOKENS, lambda r: None if r[1] is None else estimate_tokens(r[1] + "\n"), len(rendered)
    )
    lines = [line for _mem, line in shown if line is not None]
    # a session with no goal yet says nothing worth repeating
    recent = [s for s in store.list_sessions(limit=5, tool=tool) if s.session_id != current_session and s.goal]
    last = ""
    if recent:
        goal, date = one_line(recent[0].goal, FIELD_CHARS), one_line(recent[0].date, 40)
        last = f"Last {tool} session: {goal} ({date})" if goal else ""
    last = last if fresh(START_LAST, last) else ""
    if not lines and not last:
        return ""
    # "No memories yet." only when there are none, not when the context already holds them all
    body = ["Most important memories:", *lines] if lines else [] if memories else ["No memories yet."]
    hint = [_HINT] if fresh(START_HINT, _HINT) else []
    why = {"retriever": "cold_start", "by": "importance"}
    block = context_block([*body, *([last] if last else []), *hint])
    recorder.record(
        store,
        kind="hook_start",
        memories=[
            {
                "id": m.id,
                "category": m.category,
                "text": m.text,
                "provenance": m.provenance.label(),
                "why": {**why, "stale": notes[m.id]} if m.id in notes else why,
            }
            for m, _ in shown
        ],
        block=block,
    )
    if injected is not None:
        for key, line in [*((m.id, line) for m, line in shown), (START_LAST, last), *((START_HINT, h) for h in hint)]:
            if line:
                injected.add(key, line)
    return block


# ---------------------------------------------------------------------------- the plugin's data
@dataclass
class ColdStartMemory(Result):
    id: str
    text: str
    category: str
    importance: float
    created_at: str
    stale: str | None = None  # the staleness check's note ("may be stale: `src/x.py` deleted in abc1234")
    origin: str = "local"  # core/provenance.py: local, git, committed or import
    provenance: str = ""  # where it came from in a few words, shown before its text ("from git, by alice@…")


@dataclass
class ColdStart(Result):
    """`{memories, tokens, total}`: the daemon's /memory/recent."""

    memories: list[ColdStartMemory]
    tokens: int  # estimated, within the budget asked for
    total: int  # every live memory of the project


def recent(store: Store, *, limit: int = 8, token_budget: int = 400, recorder: Recorder) -> ColdStart:
    """The most important live memories and the newest, alternately (so both kinds make it into a small budget),
    without duplicates; a non-empty answer is recorded as a "cold_start" injection."""
    # importance and dates as ranking reads them (not a pulled memory's claims), none waiting for review
    important = store.list(sort="importance", order="desc", limit=limit, injectable=True)
    newest = store.list(sort="created", order="desc", limit=limit, injectable=True)
    total = store.count()
    candidates: dict[str, tuple[Memory, str]] = {}
    for pair in zip_longest(important, newest):
        for mem, reason in zip(pair, ("importance", "recency"), strict=True):
            if mem is not None:
                candidates.setdefault(mem.id, (mem, reason))
    from codememory.operations.stale import notes_by_id

    notes = notes_by_id(store, list(candidates))
    chosen, spent = _fit(
        candidates.values(), token_budget, lambda c: memory_tokens(c[0].text + (notes.get(c[0].id) or "")), limit
    )
    memories = [
        ColdStartMemory(
            m.id,
            m.text,
            m.category,
            m.importance,
            m.created_at,
            notes.get(m.id),
            m.provenance.origin,
            m.provenance.label(),
        )
        for m, _ in chosen
    ]
    whys: list[dict[str, Any]] = [
        {"retriever": "cold_start", "by": reason, "importance": m.ranked_importance}
        | ({"stale": notes[m.id]} if m.id in notes else {})
        for m, reason in chosen
    ]
    recorder.record(
        store,
        kind="cold_start",
        memories=[{**m.to_dict(), "why": why} for m, why in zip(memories, whys, strict=True)],
    )
    return ColdStart(memories, spent, total)
