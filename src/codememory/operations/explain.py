"""The injection ledger: what proactive retrieval put in front of a model, why, and at what token cost
(`codememory explain`; the daemon and the hooks record, see `record_injection`).

One row is appended each time memories are handed to an agent: a `POST /retrieve` answer with at least one
memory (kind "hud"), a cold-start block from `POST /memory/recent` ("cold_start"), and the Claude Code / Codex /
Cursor hooks' blocks at session start ("hook_start") and with a prompt ("hook_prompt"). A row keeps the scrubbed
query expansion, the degraded reason (why meaning-based search did not take part, e.g. no embedding model), the
tokens by part (the memories, and the framing around them when the caller knows it: a hook renders its block
here, the OpenCode plugin renders its own), and per memory its id, its tokens and why it was chosen: the
retriever's own `why` (codememory.retrieval.why: bm25, cosine, fused, words, entities, pinned, …; for a cold
start: importance or recency). The memories' text is not copied into the ledger: `explain` shows their current
text from the store, and says when a memory has since been archived, superseded, has expired or was forgotten.

`explain_last` result (the `--json` output; keys are stable):

    {session_id, total, shown, injections: [{id, at, source, session_id, kind, query: [phrase, ...],
     degraded, degraded_reason, tokens, tokens_by_part: {memories, framing}, memories: [{id, state, category,
     text, why, parts: {retriever, match, bm25, cosine, fused, words, entities, pinned, by, stale, usefulness},
     tokens, stale_now}]}]}

`state` is "live", "archived", "superseded", "expired" or "forgotten" (then `category` and `text` are null);
`stale_now` is the memory's "may be stale: ..." note now (codememory.operations.stale), and `parts.stale` the note
it was shown with;
`injections` is oldest first; `total` counts the session's injections still in the ledger. `tokens` is the
call's total, `tokens_by_part.memories + (tokens_by_part.framing or 0)`; framing is null when it was not
reported (the caller rendered the block) and in rows written before it was kept. `parts` is `why` read with
types (null or empty where a row, e.g. an older one, does not say); `why` is kept as recorded.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codememory.core.bounded_input import text_arguments
from codememory.core.dates import now_iso
from codememory.core.result import Result
from codememory.errors import InvalidInput, NotFound
from codememory.text.context_render import memory_line, one_line
from codememory.text.tokens import estimate_tokens, memory_tokens

if TYPE_CHECKING:
    from codememory.service.project_store import Store
    from codememory.store.injections import Injection

# The ledger's tables and retrieval are imported by the functions that use them: `codememory explain --help` (and
# `codememory --help`, which lists it) needs only the constants below.

DEFAULT_LAST = 5
MAX_LAST = 1000
_SHOWN_CHARS = 100  # of a memory's text in the text output
_LIST_ITEMS = 12  # words or entities read from one `why`
_LABEL_CHARS = 80  # a retriever, match or word read from one `why`
_NOTE_CHARS = 300  # a staleness note read from one `why`
KINDS = {"hud": "HUD", "cold_start": "cold start", "hook_start": "hook session start", "hook_prompt": "hook prompt"}


@dataclass
class ScoreParts(Result):
    """Why a memory was chosen, read from its recorded `why` with types (see codememory.retrieval.why): what a
    row does not say (an older row, a cold start) is null, empty or false."""

    retriever: str | None  # hybrid, lexical, entity, pinned or cold_start
    match: str | None  # exact, partial, semantic, context or fuzzy
    bm25: float | None  # the keyword index's raw relevance
    cosine: float | None  # meaning similarity (with an embedding model)
    fused: float | None  # the ranking's combined score
    words: list[str]  # the query's keywords the memory holds
    entities: list[str]  # the memory's entities the step named
    pinned: bool  # kept because the previous call showed it
    by: str | None  # a cold start's reason: importance or recency
    stale: str | None  # the "may be stale: ..." note it was shown with (its score was demoted)
    usefulness: float | None  # the factor what agents did with it moved its score by (retrieval/usefulness.py)


@dataclass
class InjectedNow(Result):
    """A memory of an injection, as the store has it now."""

    id: str
    state: str  # live, archived, superseded, expired or forgotten
    category: str | None  # None once forgotten
    text: str | None
    why: dict[str, Any]  # why it was chosen then, as recorded
    parts: ScoreParts  # the same, typed
    tokens: int
    stale_now: str | None  # the memory's staleness note now (`codememory stale`), None when not marked
    provenance: str | None = None  # where it came from, as its line says it (core/provenance.py); None once forgotten


@dataclass
class TokenParts(Result):
    """An injection's tokens by part; they add up to the injection's `tokens`."""

    memories: int  # the memories as shown (a bullet each)
    framing: int | None  # the block around them (tags, preamble, headings, hints); None: not reported


@dataclass
class InjectionView(Result):
    id: int
    at: str
    source: str
    session_id: str | None
    kind: str  # hud, cold_start, hook_start or hook_prompt
    query: list[str]
    degraded: bool
    degraded_reason: str | None  # why it was degraded (None: not degraded, or a row from before reasons were kept)
    tokens: int  # the call's total
    tokens_by_part: TokenParts
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
    degraded_reason: str | None = None,
    block: str | None = None,
    framing_tokens: int | None = None,
    keep: int | None = None,
) -> int | None:
    """Append what was injected (each memory a mapping with id, text, why and, for a rendered `block`, category)
    to the store's ledger; `query` keeps the phrases retrieval used (the first MAX_PHRASES). Nothing is recorded
    for an empty list (returns None); else returns the row id.

    Tokens: with `block` (the text injected, rendered here: a hook's), a memory costs its rendered line
    (codememory.text.context_render.memory_line) and the framing is the rest of the block; without, a memory
    costs `memory_tokens(text)`, as retrieval's budget counts it, and the framing is `framing_tokens` when
    the caller reports it."""
    from codememory.retrieval.proactive import MAX_PHRASES
    from codememory.store.injections import InjectedMemory, InjectionTables

    items = [InjectedMemory(str(m["id"]), dict(m.get("why") or {}), _cost(m, block is not None)) for m in memories]
    if not items:
        return None
    if block is not None:
        framing_tokens = max(0, estimate_tokens(block) - sum(m.tokens for m in items))
    tables = InjectionTables(store.db) if keep is None else InjectionTables(store.db, keep=keep)
    at = now_iso()
    phrases = "\n".join([q.strip() for q in query if q.strip()][:MAX_PHRASES])
    row = tables.record(
        at=at,
        source=source,
        session_id=session_id,
        kind=kind,
        query=phrases,
        memories=items,
        degraded=degraded or degraded_reason is not None,
        degraded_reason=degraded_reason,
        framing_tokens=framing_tokens,
    )
    if session_id:  # without a session nothing can be seen of what followed: no exposure (capture/usage.py)
        from codememory.capture.exposure_cues import exposure_cues
        from codememory.store.usage import Shown

        store.db.record_shown(
            at=at,
            source=source,
            session_id=session_id,
            kind=kind,
            memories=[Shown(m.id, m.tokens) for m in items],
            context=phrases,
            cues_of=functools.partial(exposure_cues, store.db),
        )
    return row


def _cost(memory: Mapping[str, Any], rendered: bool) -> int:
    text = str(memory.get("text") or "")
    if not rendered:
        return memory_tokens(text)
    note = (memory.get("why") or {}).get("stale")
    stale = note if isinstance(note, str) else None
    line = memory_line(memory.get("id"), memory.get("category"), text, stale=stale, origin=memory.get("provenance"))
    return 0 if line is None else estimate_tokens(line + "\n")  # as the hooks' blocks join their lines


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
        degraded_reason: str | None = None,
        block: str | None = None,
        framing_tokens: int | None = None,
    ) -> None:
        """See `record_injection`: `block` is the rendered text when the caller injects it as is (a hook), else
        `framing_tokens` what the caller adds around the memories, if it says."""
        try:
            record_injection(
                store,
                kind=kind,
                memories=memories,
                query=query,
                source=self.source,
                session_id=self.session_id,
                degraded=degraded,
                degraded_reason=degraded_reason,
                block=block,
                framing_tokens=framing_tokens,
            )
        except Exception as exc:
            self.on_error(exc)


def explain_last(store: Store, *, last: int = DEFAULT_LAST, session_id: str | None = None) -> Explained:
    """The newest `last` injections of `session_id` (default: the session of the newest injection), each
    memory with its current text and state (see the module docstring for the shape). An empty ledger gives
    no injections; a session with none in the ledger is NotFound."""
    if not 1 <= last <= MAX_LAST:
        raise InvalidInput(f"--last must be between 1 and {MAX_LAST}")
    from codememory.store.injections import InjectionTables

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
    from codememory.operations.stale import notes_by_id

    notes = notes_by_id(store, ids)
    injections = [_injection(row, current, now, notes) for row in rows]
    return Explained(session_id, tables.count(session_id, any_session=False), len(injections), injections)


def _injection(row: Injection, current: Mapping[str, Any], now: str, notes: Mapping[str, str]) -> InjectionView:
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
                score_parts(item.why),
                item.tokens,
                notes.get(item.id),
                None if mem is None else mem.provenance.label(),
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
        row.degraded_reason if row.degraded else None,
        row.tokens,
        TokenParts(sum(m.tokens for m in row.memories), row.framing_tokens),
        memories,
    )


# ------------------------------------------------------------------------------- reading a `why`
def _number(value: Any) -> float | None:
    """A finite number, or None (the ledger is untrusted: JSON may hold a string, a bool, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _label(value: Any) -> str | None:
    return value[:_LABEL_CHARS] if isinstance(value, str) and value else None


def _labels(value: Any) -> list[str]:
    items = value if isinstance(value, list) else []
    return [v[:_LABEL_CHARS] for v in items if isinstance(v, str) and v][:_LIST_ITEMS]


def score_parts(why: Mapping[str, Any]) -> ScoreParts:
    """The typed parts of a recorded `why` (anything of the wrong type counts as not said)."""
    return ScoreParts(
        retriever=_label(why.get("retriever")),
        match=_label(why.get("match")),
        bm25=_number(why.get("bm25")),
        cosine=_number(why.get("cosine")),
        fused=_number(why.get("fused")),
        words=_labels(why.get("words")),
        entities=_labels(why.get("entities")),
        pinned=why.get("pinned") is True,
        by=_label(why.get("by")),
        stale=why["stale"][:_NOTE_CHARS] if isinstance(why.get("stale"), str) and why["stale"] else None,
        usefulness=_number(use.get("factor")) if isinstance(use := why.get("usefulness"), dict) else None,
    )


# ------------------------------------------------------------------------------------------ text form
def parts_text(why: Mapping[str, Any]) -> str:
    """One line of a memory's reasons: "bm25 7.31 · cosine 0.82 · fused 1.92 · matched: retry, webhook ·
    entities: httpx · pinned · via hybrid (partial)", then any other key the `why` holds (codememory.retrieval.why;
    `score`, the memory's place in the ranking, is no measure of relevance and is left out)."""
    from codememory.retrieval.why import why_text

    return why_text(why, shown=True)


def tokens_text(inj: InjectionView) -> str:
    """ "61 tokens (memories 41 + framing 20)", or "(memories 41; framing not reported)"."""
    by = inj.tokens_by_part
    if by.framing is None:
        return f"{inj.tokens} tokens (memories {by.memories}; framing not reported)"
    return f"{inj.tokens} tokens (memories {by.memories} + framing {by.framing})"


def _short(text: str, width: int = _SHOWN_CHARS) -> str:
    line = one_line(text)  # an agent may read this (`codememory explain --last`): no line breaks, no tags
    return line if len(line) <= width else line[: width - 1] + "…"


def render_text(data: Explained) -> str:
    """The `codememory explain` text output of an `explain_last` result. Every recorded field goes through
    one_line: the ledger is in memory.db, which may be committed (untrusted)."""
    if not data.injections:
        return (
            "No injections recorded yet in this project: one is recorded each time memories are handed to an agent "
            "(a /retrieve answer, a cold-start block, a hook's block)."
        )
    session = one_line(data.session_id, 200) or "(no session id)"
    lines = [f"Session {session}: the last {data.shown} of {data.total} injections, oldest first", ""]
    for inj in data.injections:
        flags = ", degraded" if inj.degraded else ""
        count = len(inj.memories)
        kind = KINDS.get(inj.kind) or one_line(inj.kind, 40)
        lines.append(
            f"{one_line(inj.at, 40)}  {kind} ({one_line(inj.source, 100)}{flags}): {count} "
            f"{'memory' if count == 1 else 'memories'}, {tokens_text(inj)}"
        )
        if inj.degraded:
            lines.append(f"  degraded: {one_line(inj.degraded_reason, 300) or '(reason not recorded)'}")
        if inj.query:
            lines.append(f"  query: {_short('; '.join(inj.query), 160)}")
        for mem in inj.memories:
            state = "" if mem.state == "live" else f" [{mem.state}]"
            lines.append(f"  {one_line(mem.id, 40)}  {one_line(parts_text(mem.why), 400)}")
            lines.append(f"      {mem.tokens:>4} tok{state}  {_short(mem.text or '(forgotten)')}")
            if mem.stale_now:
                lines.append(f"      now {one_line(mem.stale_now, 300)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
