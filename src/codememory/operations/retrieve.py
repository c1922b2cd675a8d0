"""Proactive retrieval: the few memories worth having in mind for an agent's current step, within a token budget
(`codememory retrieve`, MCP memory_retrieve, the daemon's /retrieve that the OpenCode plugin calls on every LLM
call), and the block the Claude Code / Codex hooks inject with each prompt. What is handed to an agent's context
is recorded in the injection ledger (codememory.operations.explain) when a `Recorder` is given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from codememory.core.result import OMIT_NONE
from codememory.remote.org_results import RemoteStatus
from codememory.retrieval.proactive import DEFAULT_MAX_MEMORIES, DEFAULT_MAX_NEW, RetrievedMemory, RetrieveResult

if TYPE_CHECKING:
    from codememory.operations.explain import Recorder
    from codememory.operations.hook_injected import Injected
    from codememory.retrieval.step import Step
    from codememory.service.project_store import Store

PROMPT_TOKENS = 800  # context injected per prompt by the hooks
PROMPT_CHARS = 2000  # of the prompt, as the query
PROMPT_MEMORIES = 3  # per prompt: the few that clear the injection bar


@dataclass
class OrgRetrieveResult(RetrieveResult):
    """A retrieval that also asked the organisation's memory (`remote`): its memories carry `origin`
    "remote:<project>" after this project's own, and `remote` says how the query went."""

    remote: RemoteStatus | None = field(default=None, metadata=OMIT_NONE)


def _with_remote(store: Store, result: RetrieveResult, query: str, max_new: int, budget: int) -> OrgRetrieveResult:
    """`result` with up to `max_new` of the organisation's memories for `query` added within the token budget
    (the remote being down leaves `result` as it was, with the reason)."""
    from codememory.remote.org_search import search_remote
    from codememory.text.instructions import is_instruction_like
    from codememory.text.tokens import memory_tokens

    hits, status = search_remote(store, query, limit=max_new)
    memories, tokens = list(result.memories), result.tokens
    for hit in hits:
        if is_instruction_like(hit.text):
            continue  # another project's instructions are never put in front of an agent unasked
        cost = memory_tokens(hit.text)
        if tokens + cost > budget:
            break
        why = {"retriever": "remote", "project": hit.project, "rank": hit.rank, "score": round(hit.score, 6)}
        memories.append(
            RetrievedMemory(hit.id, hit.text, hit.importance, hit.category, why, hit.origin, hit.provenance.label())
        )
        tokens += cost
    status.hits = len(memories) - len(result.memories)
    return OrgRetrieveResult(memories, tokens, result.degraded, result.degraded_reason, remote=status)


def retrieve(
    store: Store,
    query_expansion: Sequence[str],
    *,
    entities: Sequence[str] = (),
    pinned: Sequence[str] = (),
    max_memories: int = DEFAULT_MAX_MEMORIES,
    max_new: int = DEFAULT_MAX_NEW,
    token_budget: int = 1500,
    exclude: Sequence[str] = (),
    recorder: Recorder | None = None,
    remote: bool = False,
    step: Step | None = None,
    request_phrases: int = 1,
    request_carried: bool = False,
) -> RetrieveResult:
    """The memories for the step (see codememory.retrieval.proactive), none of `exclude` (ids the agent's context
    already carries); with `recorder`, an answer with memories goes to the ledger as a "hud" injection. With
    `remote`, the organisation's memory is asked too, with the request (the first phrase; none when no phrase is the
    request) as the query."""
    result = store.retrieve(
        query_expansion,
        entities=entities,
        pinned=pinned,
        max_memories=max_memories,
        max_new=max_new,
        token_budget=token_budget,
        exclude=exclude,
        session_id=recorder.session_id if recorder is not None else None,
        step=step,
        request_phrases=request_phrases,
        request_carried=request_carried,
    )
    request = next((q for q in query_expansion if q.strip()), "") if request_phrases else ""
    if remote and request:
        result = _with_remote(store, result, request, max_new, token_budget)
    if recorder is not None:
        shown = [m.to_dict() for m in result.memories]
        recorder.record(
            store,
            kind="hud",
            memories=shown,
            query=query_expansion,
            degraded=result.degraded,
            degraded_reason=result.degraded_reason,
            # the rest: the agent's own tool calls; counted as retrieval counts them, among the non-blank phrases
            asked=[q for q in query_expansion if q.strip()][: max(0, request_phrases)],
        )
    return result


def prompt_context(store: Store, prompt: str, recorder: Recorder, injected: Injected | None = None) -> str:
    """The `<project_memory>` block a hook injects with a prompt ('' when nothing is relevant): the prompt itself
    is the query. What it shows is recorded as a "hook_prompt" injection. With `injected` (what the assistant
    session's context already holds, codememory.operations.hook_injected), a memory already there with the same
    text is left out and what is shown is added to it: '' when nothing relevant is new."""
    from codememory.text.context_render import context_block, memory_line
    from codememory.text.privacy import scrub

    prompt = scrub(prompt)  # the query may reach an embedding model
    if not prompt.strip():
        return ""
    query = prompt[:PROMPT_CHARS]
    result = store.retrieve(
        [query],
        max_memories=PROMPT_MEMORIES,
        max_new=PROMPT_MEMORIES,
        token_budget=PROMPT_TOKENS,
        session_id=recorder.session_id,
    )
    shown, lines = [], []
    for mem in result.memories:
        note = mem.why.get("stale")
        stale = note if isinstance(note, str) else None
        line = memory_line(mem.id, mem.category, mem.text, stale=stale, origin=mem.provenance)
        if line is not None and (injected is None or injected.fresh(mem.id, line)):
            shown.append(mem.to_dict())
            lines.append(line)
    if not lines:
        return ""
    block = context_block(lines)
    recorder.record(
        store,
        kind="hook_prompt",
        memories=shown,
        query=[query],
        degraded=result.degraded,
        degraded_reason=result.degraded_reason,
        block=block,
    )
    if injected is not None:
        for mem_dict, line in zip(shown, lines, strict=True):
            injected.add(mem_dict["id"], line)
    return block
