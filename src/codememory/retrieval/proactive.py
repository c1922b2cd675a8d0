"""Proactive retrieval: the few memories worth putting in front of an agent for its current step.

Called by the daemon's /retrieve (and so by the OpenCode plugin on every LLM call) and by
`codememory retrieve`. Input: phrases describing the task (query expansion), entity names, and the ids
surfaced on the previous call (pinned). Output: a short, token-budgeted list, each with why it was chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.result import Result
from codememory.embedding.relevance import FALLBACK, PINNED_SLACK
from codememory.errors import InvalidInput
from codememory.retrieval.search import rank_phrases
from codememory.retrieval.why import add_matches, ranked_why
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.tokens import memory_tokens

if TYPE_CHECKING:
    from codememory.embedding.semantic import Semantic

MAX_PHRASES = 8
PER_PHRASE = 10
ENTITY_WEIGHT = 0.5


@dataclass
class RetrieveRequest:
    query_expansion: list[str]
    entities: list[str] = field(default_factory=list)
    pinned_memory_ids: list[str] = field(default_factory=list)
    max_memories: int = 8
    max_new: int = 5
    token_budget: int = 1500

    def validate(self) -> None:
        if not isinstance(self.query_expansion, list) or not all(isinstance(q, str) for q in self.query_expansion):
            raise InvalidInput("query_expansion must be a list of strings")
        if not any(q.strip() for q in self.query_expansion) and not self.entities:
            raise InvalidInput("give at least one query_expansion phrase or entity")
        for name in ("max_memories", "max_new", "token_budget"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInput(f"{name} must be a positive integer")


@dataclass
class RetrievedMemory(Result):
    id: str
    text: str
    importance: float
    category: str
    why: dict[str, Any]  # how it was found: bm25, cosine, words, entities, pinned, … (codememory.retrieval.why)


@dataclass
class RetrieveResult(Result):
    """`{memories, tokens, degraded, degraded_reason}`: what `codememory retrieve --json`, the MCP tool
    memory_retrieve and the daemon's /retrieve return."""

    memories: list[RetrievedMemory]
    tokens: int  # estimated tokens of the memories' text, within the budget
    degraded: bool  # part of retrieval failed (e.g. no embedding model): see degraded_reason
    degraded_reason: str | None


@dataclass
class _Candidate:
    pk: int
    score: float = 0.0
    why: dict[str, Any] = field(default_factory=dict)


def retrieve(
    db: Database, semantic: Semantic | None, req: RetrieveRequest, entity_names: list[str]
) -> tuple[RetrieveResult, list[int]]:
    """The memories chosen for the request, and their row keys (the caller counts an access for them)."""
    req.validate()
    filters = Filters()
    found: dict[int, _Candidate] = {}
    degraded_reason: str | None = None
    phrases = [q.strip() for q in req.query_expansion if q.strip()][:MAX_PHRASES]
    floor = FALLBACK  # a memory found by meaning alone must be this close to be offered (relevance.py)
    if phrases:
        ranking = rank_phrases(db, phrases, filters, want=PER_PHRASE * len(phrases), semantic=semantic)
        degraded_reason = ranking.reason
        floor = ranking.floor if ranking.floor is not None else FALLBACK
        for position, (fused, pk, match, explain) in enumerate(ranking.order[: 4 * req.max_memories]):
            cosine = explain.get("cosine")
            if match in ("semantic", "context") and (cosine is None or cosine < floor):
                continue  # found by meaning alone, and not close enough to be worth the agent's attention
            cand = found.setdefault(pk, _Candidate(pk))
            cand.score = 1.0 - position / (4 * req.max_memories)  # rank-based: fused scores are z-scores
            cand.why.update(ranked_why(ranking.mode, match, cand.score, fused, explain))
    if entity_names:
        hub = db.memories_with_entities(entity_names, filters, 4 * req.max_memories)
        names_of = db.entities_of([pk for pk, _ in hub])
        for pk, count in hub:
            cand = found.setdefault(pk, _Candidate(pk, why={"retriever": "entity"}))
            cand.score += ENTITY_WEIGHT * count / len(entity_names)
            cand.why["entities"] = [n for n, _ in names_of.get(pk, []) if n in entity_names]

    pinned_pks = dict(db.get_pk_map(req.pinned_memory_ids)) if req.pinned_memory_ids else {}
    kept: list[_Candidate] = []
    for mid in req.pinned_memory_ids:
        pinned_pk = pinned_pks.get(mid)
        if pinned_pk is None or not db.live_pks([pinned_pk], filters):
            continue
        pinned = found.pop(pinned_pk, None)
        if pinned is None and semantic is not None and phrases:
            pinned = _still_close(db, semantic, pinned_pk, phrases, floor - PINNED_SLACK)
        if pinned is not None:
            pinned.why["pinned"] = True
            kept.append(pinned)

    fresh = sorted(found.values(), key=lambda c: -c.score)
    chosen: list[_Candidate] = []
    budget = req.token_budget
    rows = db.get_by_pks([c.pk for c in kept] + [c.pk for c in fresh])
    new_count = 0
    for cand in sorted(kept, key=lambda c: -c.score) + fresh:
        if len(chosen) >= req.max_memories:
            break
        is_new = not cand.why.get("pinned")
        if is_new and new_count >= req.max_new:
            continue
        mem = rows.get(cand.pk)
        if mem is None:
            continue
        cost = memory_tokens(mem.text)
        if cost > budget:
            continue
        budget -= cost
        new_count += is_new
        chosen.append(cand)
    add_matches(db, [(c.pk, c.why) for c in chosen], phrases, entity_names)
    out = []
    for cand in chosen:
        mem = rows[cand.pk]
        out.append(RetrievedMemory(mem.id, mem.text, mem.importance, mem.category, cand.why))
    result = RetrieveResult(out, req.token_budget - budget, degraded_reason is not None, degraded_reason)
    return result, [c.pk for c in chosen]


def _still_close(db: Database, semantic: Semantic, pk: int, phrases: list[str], floor: float) -> _Candidate | None:
    model = semantic.model
    if model is None:
        return None
    blob = db.vectors_for(model, [pk]).get(pk)
    if blob is None:
        return None
    from codememory.embedding.vectors import from_blob

    vector = from_blob(blob)
    best = 0.0
    for phrase in phrases:
        qvec = semantic.embed_query(phrase)
        if qvec is not None:
            best = max(best, float(vector @ qvec))
    if best < floor:
        return None
    return _Candidate(pk, score=best, why={"retriever": "pinned", "cosine": round(best, 4)})
