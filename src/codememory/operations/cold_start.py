"""Cold start: the memories put in front of an agent when a session starts, before it has said what it works on.

Nothing is known yet about the step at hand, so no memory can show that it is relevant to it: what is shown is
only the project's standing instructions, the preferences and conventions marked essential (importance at least
STANDING_IMPORTANCE), which apply whatever the task. Everything else waits for a step it is relevant to (the
prompt hook's block, the OpenCode HUD), and a project with no standing instruction gets no memory at the start.

Two variants, one per way of showing them:
- `session_start_context` (the Claude Code, Codex and Cursor hooks at SessionStart): the standing memories as
  rendered `<project_memory>` lines within START_TOKENS (a line costs its own length / 4), then the goal of the
  tool's last session and a hint to use the MCP tools. A hook's output stays in the assistant's transcript, which
  is why it is a short, finished text block.
- `recent` (the daemon's /memory/recent; the OpenCode plugin renders the block itself): the standing memories
  within the budget the caller gives (a memory costs `memory_tokens` of its text, as /retrieve counts), returned
  as data with the number of live memories and the last session's hand-off lines.
Both walk their candidates in order and take each one that still fits the budget (`_fit`), and both record what
they hand over in the injection ledger (kinds "hook_start" and "cold_start").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from codememory.core.model import Memory
from codememory.core.result import Result
from codememory.text.tokens import estimate_tokens, memory_tokens

if TYPE_CHECKING:
    from codememory.operations.explain import Recorder
    from codememory.operations.hook_injected import Injected
    from codememory.service.project_store import Store

START_TOKENS = 600  # the hooks' session-start block
START_MEMORIES = 3  # at most, of the standing memories
STANDING_CATEGORIES = ("preference", "convention")
STANDING_IMPORTANCE = 0.9
_HINT = (
    "Use the codememory MCP tools (`memory_search`, `memory_store`, `checkpoint`) for more;"
    " cite ids when you rely on one."
)
T = TypeVar("T")


def is_standing(memory: Memory) -> bool:
    """Whether a memory is a standing instruction: a preference or convention marked essential. The one place that
    decides it. Only a memory written here or accepted by the user on review can be essential: an unreviewed
    pulled, committed or imported one's importance is a claim (core/provenance.py), so it never stands in front of
    every session."""
    vouched = memory.provenance.trusted or memory.provenance.review == "accepted"
    return memory.category in STANDING_CATEGORIES and vouched and memory.importance >= STANDING_IMPORTANCE


def standing(store: Store, limit: int) -> list[Memory]:
    """The project's standing instructions, most important first; none waiting for the user's review."""
    found = store.list(
        sort="importance", order="desc", limit=limit, category=list(STANDING_CATEGORIES), injectable=True
    )
    return [m for m in found if is_standing(m)]


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
    from codememory.text.context_render import context_block, memory_line

    def fresh(key: str, line: str | None) -> bool:
        return line is not None and (injected is None or injected.fresh(key, line))

    from codememory.operations.stale import notes_by_id

    memories = standing(store, START_MEMORIES)
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
    last = _last_session(store, current_session)
    last = last if fresh(START_LAST, last) else ""
    if not lines and not last:
        return ""
    # "No memories yet." only when there are none, not when the context already holds them all
    body = ["Standing instructions:", *lines] if lines else [] if store.count() else ["No memories yet."]
    hint = [_HINT] if fresh(START_HINT, _HINT) else []
    why = {"retriever": "cold_start", "by": "standing"}
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


HANDOFF_ITEMS = 3  # of each list (done, still to do, decided) of the last session
HANDOFF_ITEM_CHARS = 200
HANDOFF_FILES = 6


def _last_session(store: Store, current_session: str | None) -> str:
    """The hand-off from the project's last session, whichever assistant had it: its goal, and what its checkpoints
    and the hooks recorded (work done, still to do, decisions, files touched), a few of each, one line each. So a
    user who switches tools mid-feature (a daily limit, say) starts the next one where the last one stopped.
    '' when no other session has a goal (a session with no goal yet says nothing worth repeating)."""
    from codememory.text.context_render import FIELD_CHARS, one_line

    recent = [s for s in store.list_sessions(limit=5) if s.session_id != current_session and s.goal]
    if not recent:
        return ""
    last = recent[0]
    goal, date = one_line(last.goal, FIELD_CHARS), one_line(last.date, 40)
    if not goal:
        return ""
    lines = [f"Last {one_line(last.tool, 40)} session: {goal} ({date})"]
    record = store.sessions.record(last.session_id)

    def items(label: str, values: list[str]) -> None:
        shown = [v for v in (one_line(x, HANDOFF_ITEM_CHARS) for x in values[-HANDOFF_ITEMS:]) if v]
        if shown:
            more = len(values) - len(shown)
            lines.append(f"  {label}: " + "; ".join(shown) + (f" (+{more} more)" if more > 0 else ""))

    items("Done", record.completed or record.summary)
    items("Still to do", record.pending)
    items("Decided", record.decisions)
    files = [p for p, _change in record.files]
    if files:
        shown = ", ".join(one_line(p, 120) for p in files[:HANDOFF_FILES])
        more = len(files) - HANDOFF_FILES
        lines.append(f"  Files touched: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return "\n".join(lines)


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
    """`{memories, tokens, total, last_session}`: the daemon's /memory/recent."""

    memories: list[ColdStartMemory]
    tokens: int  # estimated, within the budget asked for
    total: int  # every live memory of the project
    # the hand-off from the project's last session (`_last_session`), its lines already rendered one line each;
    # the plugin shows them under the memories
    last_session: list[str] = field(default_factory=list)


def recent(store: Store, *, limit: int = 8, token_budget: int = 400, recorder: Recorder) -> ColdStart:
    """The standing memories (preferences and conventions marked essential), most important first; a non-empty
    answer is recorded as a "cold_start" injection."""
    total = store.count()
    candidates = {mem.id: (mem, "standing") for mem in standing(store, limit)}
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
    handoff = [line.strip() for line in _last_session(store, None).splitlines()]
    return ColdStart(memories, spent, total, handoff)
