"""Proactive retrieval: the few memories worth putting in front of an agent for its current step.

Called by the daemon's /retrieve (and so by the OpenCode plugin on every LLM call) and by
`codememory retrieve`. Input: phrases describing the task (query expansion), the first one the request itself
(the user's words), entity names, the ids surfaced on the previous call (pinned) and the ids the caller's context
already carries (excluded). Output: a short, token-budgeted list, each with why it was chosen.

A memory's score for the step blends its rank for all the phrases together with its rank for the lead phrase
alone: the phrases after the first (the tool calls an agent made) widen the net, but what the user asked decides.
The request's parts (its sentences and clauses, text/clauses.py) count as phrases of it: a memory answering one
part of a request that asks for several things is judged on that part.
A pinned memory stays only while that score is at least `pinned_min_score` (`[context] pinned_min_score`): a
memory shown for an earlier step must still rank for this one, or it gives its place up. The score is last moved
by what agents did with the memory when it was shown before (retrieval/usefulness.py): shown often and never used,
it sinks (and so gives a pin up sooner); used, it rises. A sunk memory must also clear the injection bars with its
likelihood moved by that factor: feedback can take it out of what is shown, not only hand its slot to the next
candidate.
A memory only the entity retriever found (it names an entity the step names, and nothing else vouches for it) has
no likelihood to move: feedback does not take it out.
When the caller names the step's latest tool call (`step`, retrieval/step.py), the step decides as well: a memory
about what the call touches (its file, its folder, its command) is shown on that evidence, and after a routine call
(looking around, checking, running the tests) the call's own words find nothing: only the request's memories and the
ones about the call stay.
A turn's first call (no step yet) is decided on the request; its later calls follow it (`_follow_turn`): the
request's strong memories and what the step touches, at most LATER_MAX, never what only the tool calls' words
found; a turn whose request called for nothing gets only what its steps touch. In the labelled scenarios
(benchmarks/data/agent_view*) about three in four of the memories a later step needs were needed at an earlier
step of its turn already, and 57 of the 89 steps that need nothing are in turns that need nothing.
Many of those get a memory at their first call that shares only a code name with the request (a file, an
identifier: "which chi version is in go.mod?", "add #[must_use] to hash::normalize_path"), which the turn then
repeats: such a memory is not the request's (NAMES_ARE_NOT_ENOUGH, text/named.py), nor the step's when the step
opens the file the request named.
A caller that keeps the turn's first answer in the agent's context for the rest of the turn (`request_carried`: the
OpenCode plugin puts it beside the user's message at every call of the turn) has the request's memories already: a
later call then gets only what its own step brings that the turn does not carry (a memory about the file the call
touched or the command it ran), so a routine step inside a task gets nothing. The prompt hooks (Claude Code's
UserPromptSubmit and the like) are a turn's first call: their block stays in the assistant's transcript, as the
plugin's does for the turn.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.bounded_input import check_query
from codememory.core.config import ContextConfig
from codememory.core.lazy_pattern import lazy_pattern
from codememory.core.result import OMIT_NONE, Result
from codememory.errors import InvalidInput
from codememory.retrieval.decision import Bars, best_likelihood
from codememory.retrieval.lexical import matched_words
from codememory.retrieval.search import Ranking, prefetch_phrases, rank_phrases, relevance_bars, stale_notes
from codememory.retrieval.step import Step, touched_memories
from codememory.retrieval.usefulness import Factor, adjusted, factors
from codememory.retrieval.why import add_matches, ranked_why
from codememory.store.database import Database
from codememory.store.filters import Filters
from codememory.text.clauses import request_parts
from codememory.text.lookups import answered_by_looking
from codememory.text.named import held_names, only_names
from codememory.text.query import parse_query, words
from codememory.text.tokens import memory_tokens
from codememory.text.written import without_text_to_write

if TYPE_CHECKING:
    from codememory.embedding.semantic import Semantic
    from codememory.retrieval.second_opinion import Form

MAX_PHRASES = 8
PER_PHRASE = 10
ENTITY_WEIGHT = 0.5
# The lead phrase's own ranking weighs as much as the ranking of every phrase together (scores stay in [0, 1]
# before the entity bonus): a memory both rank first scores 1, one only the tool phrases find at most 0.5.
LEAD_WEIGHT = 1.0
# Slots of one answer: a step is usually served by one to three memories; more slots only fill up with noise.
DEFAULT_MAX_MEMORIES = 4
DEFAULT_MAX_NEW = 3
SPLIT_REQUEST = True  # the request's parts are asked for as well (off: the whole request only; for measuring)
# A candidate with no likelihood of its own (found only by the entity retriever: it names an entity the step names)
# leaves once its usefulness factor is under this: agents shown it kept ignoring it (0: off, as shipped). Measured
# with each agent-view set left out in benchmarks/bench_hud_feedback.py; see benchmarks/README.md.
ENTITY_ONLY_SINK_BAR = 0.0
PINNED_SLACK = 0.1  # a memory already shown stays while its likelihood is this much under the bars (less flicker)
# What a memory about the step's own call (its file, folder or command) adds to its score: above any memory found on
# the request's words alone (those score at most 1, and 1.5 with the entity bonus).
STEP_WEIGHT = 1.5
# A memory about the touched file joins on that alone only when it is the one memory naming the file: a file several
# memories name (a central module) is no sign that any of them is about this step.
MAX_NAMING = 1
JUDGE_STEP = True  # the step's tool call is judged (off: the phrases alone decide, as before; for measuring)
# A turn's later calls (the caller names a step) follow what its request called for (_follow_turn): off, the tool
# calls' words widen the net at every call, as before (for measuring).
FOLLOW_TURN = True
# Memories on a later call of a turn: the request's few that still rank, and what the step itself touches.
LATER_MAX = 3
# A later call shows the request's memories again when the request's words make them at least this likely. 0: every
# memory the request called for stays at its later calls (the HUD block is not kept in the conversation, and the
# labelled scenarios ask for the request's memories again at most later steps). At 0.5 (a memory that barely
# cleared the bars shown at the first call only) a convention the cold start had shown never reached a later call of
# a two-memory store: the plugin's phrases give the request's memories lower likelihoods than the bare request does.
LATER_REQUEST_LIKELIHOOD = 0.0
# In a turn whose request called for no memory, a memory about the file or command of one of its steps is shown only
# when the request's own words give it at least this likelihood. 0: on the step's evidence alone, as in any turn (a
# gotcha about a file is needed when the agent opens the file; 0.05 held back one labelled call more on two of the
# three scenarios and nothing on the third: not worth hiding a gotcha from an edit the request did not announce).
QUIET_STEP_LIKELIHOOD = 0.0
# A memory that shares nothing with the request but the code names it gives (a file, a path, an identifier:
# text/named.py) is not one the request calls for: "which chi version is in go.mod?" is answered by go.mod, not by
# the memory saying which Go version go.mod pins. Off: such a memory is judged on its likelihood alone (measuring).
NAMES_ARE_NOT_ENOUGH = True
# The text a request hands over to be written ("say 'chases overdue invoices' instead of 'chases late payments'",
# "add a line …: '…'", "fix the typo 'seperately'") is no evidence of what the request is about (text/written.py): its
# words found a late-payment memory for a README edit. Off: the request's words all count, as before (measuring).
TEXT_TO_WRITE_IS_NO_EVIDENCE = True
# A request the project's files answer by looking (a count, a listing, a value read from a file it names:
# text/lookups.py) calls for no memory: "How many staging models are there?" got the two memories about staging
# models, "Which Python version does pyproject.toml require?" the one saying uv edits pyproject.toml. Off: such a
# request is judged on its words like any other (measuring).
LOOKUPS_NEED_NO_MEMORY = True
# A to-do (work still to be done: category "todo") is not what a request's first call shows unasked: in the labelled
# scenarios one of eleven to-dos was ever needed, while "TODO: GeoPackage export …" was shown for a GeoJSON option and
# "TODO: move the poller to GBFS 3.0 …" for a new GBFS feed. A request that speaks of to-dos, the backlog or what is
# pending still gets them, and a later step that opens the file a to-do names still does (retrieval/step.py).
# Off: a to-do is judged like any memory (measuring).
NO_UNASKED_TODOS = True
# The second model's opinion (retrieval/second_opinion.py) of the request's own phrases (the request and its parts)
# moving each candidate's likelihood before the injection bars decide, as it does for search. None (shipped): no
# opinion. Measured on the nine agent-view scenarios, each left out (benchmarks/research/hud_why.py), its best forms
# traded recall for as much precision (left out 0.386 / 0.497 / 0.537 -> 0.402 / 0.474 / 0.541): the turn's first-
# call noise is memories both models find on the request's subject, for chores and looks. Kept for measuring.
REQUEST_OPINION: Form | None = None
_ASKS_FOR_TODOS_RE = lazy_pattern(
    r"\b(?:todos?|to-?dos?|to\s+do|backlog|pending|planned|left\s+to\s+do)\b", re.IGNORECASE
)


@dataclass
class RetrieveRequest:
    query_expansion: list[str]
    entities: list[str] = field(default_factory=list)
    pinned_memory_ids: list[str] = field(default_factory=list)
    max_memories: int = DEFAULT_MAX_MEMORIES
    max_new: int = DEFAULT_MAX_NEW
    token_budget: int = 1500
    exclude_memory_ids: list[str] = field(default_factory=list)  # already in the caller's context: never returned
    pinned_min_score: float = ContextConfig.pinned_min_score  # [context] pinned_min_score
    session_id: str | None = None  # the agent's session: its own showings not yet used are still in play
    step: Step | None = None  # the agent's latest tool call (retrieval/step.py); None: the request alone decides
    # how many leading phrases are the user's request (the rest: the tool calls'); 0: no request text at all, e.g.
    # a turn whose user text is empty, where the first phrase is a tool call's and finds nothing the request asked for
    request_phrases: int = 1
    # the turn's first answer (the request's memories) is already in the caller's context and stays there for the
    # turn: a later call (one with a step) gets only what its step brings
    request_carried: bool = False

    def validate(self) -> None:
        if not isinstance(self.query_expansion, list) or not all(isinstance(q, str) for q in self.query_expansion):
            raise InvalidInput("query_expansion must be a list of strings")
        if not any(q.strip() for q in self.query_expansion) and not self.entities:
            raise InvalidInput("give at least one query_expansion phrase or entity")
        for phrase in self.query_expansion:
            check_query(phrase, "query_expansion phrase")
        n = self.request_phrases
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidInput("request_phrases must be a non-negative integer")
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
    # core/provenance.py: "local", "git", "committed", "import", or "remote:<project>" for the organisation's memory
    # (retrieve with remote); `provenance` says it in a few words, as the blocks show it ("from git, by alice@…").
    origin: str = "local"
    provenance: str = ""


@dataclass
class RetrieveResult(Result):
    """`{memories, tokens, degraded, degraded_reason}`: what `codememory retrieve --json`, the MCP tool
    memory_retrieve and the daemon's /retrieve return."""

    memories: list[RetrievedMemory]
    tokens: int  # estimated tokens of the memories' text, within the budget
    degraded: bool  # part of retrieval failed (e.g. no embedding model): see degraded_reason
    degraded_reason: str | None
    # with an entity filter (CLI): imported memories whose entities are unread, so not matched by them
    entities_pending: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass
class _Candidate:
    pk: int
    score: float = 0.0
    why: dict[str, Any] = field(default_factory=dict)


def _positions(
    ranking: Ranking, window: int, bars: Bars, pinned: set[int], sunk: Mapping[int, float]
) -> dict[int, tuple[int, str, float, dict[str, Any]]]:
    """The first `window` entries of a ranking worth offering: pk -> (position, match, fused score, its parts). What
    the relevance decision kept at the injection bars (retrieval/decision.py; nothing when the step is not likely
    answered by any memory), and a pinned memory, already shown, while it stays within PINNED_SLACK of them (less
    flicker). A memory agents were shown and did not use (`sunk`: its usefulness factor, under 1) must clear the
    bars with its likelihood moved by that factor: the record can take a memory out of what is shown, never put in
    one that this step's evidence left out."""
    kept = {pk for _, pk, _, _ in ranking.order}
    lenient = bars.lenient(PINNED_SLACK)
    best = best_likelihood(ranking.ranked or ranking.order) or 0.0
    out: dict[int, tuple[int, str, float, dict[str, Any]]] = {}
    for fused, pk, match, explain in ranking.ranked or ranking.order:
        if len(out) >= window:
            break
        p = explain.get("likelihood")
        if pk not in kept and (pk not in pinned or p is None or p < lenient.keep or max(p, best) < lenient.answer):
            continue
        bar = lenient if pk in pinned else bars
        if pk in sunk and p is not None and p * sunk[pk] < max(bar.keep, bar.ratio * best):
            continue
        out[pk] = (len(out), match, fused, explain)
    return out


def _judge_step(
    db: Database,
    step: Step,
    found: dict[int, _Candidate],
    filters: Filters,
    asked_for: set[int],
    request: list[str] | None = None,
) -> None:
    """The step's own evidence (retrieval/step.py): a memory naming the file the call touched or prescribing its
    command joins (or rises among) the candidates; one naming the touched file's folder rises if the step's query
    found it. After a routine call, a candidate that only the tool calls' words found (not the request's, `asked_for`,
    nor what the call touches) leaves: `git status`, `go test` or `gofmt -l` are no question a memory answers.
    A file or folder the `request` itself named is no news at its step: a memory that shares only code names with
    the request (held back from it, NAMES_ARE_NOT_ENOUGH) does not join because the agent opened the file the user
    named ("which chi version is in go.mod?", then reading go.mod)."""
    touched = [pk for pk in touched_memories(db, step, filters) if pk not in found]
    rows = db.get_by_pks([*found, *touched])
    reasons = {pk: step.touches(rows[pk].text) for pk in [*found, *touched] if pk in rows}
    naming = Counter(r for r in reasons.values() if r is not None)
    named = held_names(" ".join(request)) if NAMES_ARE_NOT_ENOUGH and request else frozenset()
    told: set[int] = set()  # about the file the request named, and about nothing else the request says
    if named:
        told_of = [pk for pk, r in reasons.items() if r is not None and set(words(r.partition(" ")[2])) <= named]
        told = _about_names_only(db, request or [], told_of)
    for pk in [*found, *touched]:
        mem = rows.get(pk)
        reason = reasons.get(pk) if pk not in told else None
        if reason is not None and pk not in found and naming[reason] > MAX_NAMING:
            reason = None  # a file many memories name: being about it is no sign of being about this step
        if reason is None and mem is not None and pk in found and pk not in told:
            reason = step.in_folder(mem.text)
        if reason is not None:
            cand = found.setdefault(pk, _Candidate(pk, why={"retriever": "step"}))
            cand.score += STEP_WEIGHT
            cand.why["step"] = reason
            cand.why["score"] = round(cand.score, 4)
        elif step.routine and pk not in asked_for:
            found.pop(pk, None)


def _follow_turn(
    found: dict[int, _Candidate],
    asked_for: set[int],
    request_likelihood: Mapping[int, float],
    request_carried: bool = False,
) -> None:
    """A later call of a turn keeps what the turn's request called for (`asked_for`: what the request's own words
    found at the injection bars, as at the turn's first call) and what the step itself touches (a memory naming its
    file or prescribing its command, `_judge_step`; one naming its folder only if the request found it too); what
    only the tool calls' words or entity names found leaves. A request memory the request's words make less than
    LATER_REQUEST_LIKELIHOOD likely was shown at the first call and leaves too. In a turn whose request called for
    nothing a memory about its step's file needs QUIET_STEP_LIKELIHOOD from the request's words. Not applied after a
    call that failed: its error lines (among the tool phrases) are a question a memory may answer.
    `request_carried`: the turn's first answer is in the caller's context for the whole turn, so the request's
    memories are not shown again (what the first call left out, the turn has decided against); only a memory about
    the step's own file or command is the call's."""
    quiet = not asked_for
    for pk in list(found):
        if not request_carried and pk in asked_for and request_likelihood.get(pk, 0.0) >= LATER_REQUEST_LIKELIHOOD:
            continue
        reason = found[pk].why.get("step")
        if isinstance(reason, str) and reason.startswith("folder ") and (request_carried or pk not in asked_for):
            pass  # naming the step's folder only ranks what the turn's request found: no reason of its own to stay
        elif reason is not None and not (quiet and request_likelihood.get(pk, 0.0) < QUIET_STEP_LIKELIHOOD):
            continue
        found.pop(pk)


def _about_names_only(db: Database, request: list[str], pks: list[int]) -> set[int]:
    """The memories among `pks` whose words in common with the request are all words of the code names the request
    gives (text/named.py): about the thing the request names, not about what it asks of it."""
    named = held_names(" ".join(request))
    if not named or not pks:
        return set()
    matched = matched_words(db, parse_query(" ".join(w for phrase in request for w in words(phrase))), pks)
    return {pk for pk in pks if only_names(matched.get(pk, []), named)}


def retrieve(
    db: Database, semantic: Semantic | None, req: RetrieveRequest, entity_names: list[str]
) -> tuple[RetrieveResult, list[int]]:
    """The memories chosen for the request, and their row keys (the caller counts an access for them)."""
    req.validate()
    filters = Filters(injectable=True)  # nothing waiting for the user's review (core/provenance.py)
    found: dict[int, _Candidate] = {}
    asked_for: set[int] = set()  # what the request's own words found (no tool phrase needed)
    request_likelihood: dict[int, float] = {}  # each candidate's likelihood on the request's own words
    moved: dict[int, Factor] = {}
    ranked: set[int] = set()  # what the step's words kept at the bars: a likelihood the record moves (_positions)
    degraded_reason: str | None = None
    phrases = [q.strip() for q in req.query_expansion if q.strip()][:MAX_PHRASES]
    if TEXT_TO_WRITE_IS_NO_EVIDENCE:  # the request's quoted new text is what to write, not what it is about
        n = min(req.request_phrases, len(phrases))
        phrases = [*(without_text_to_write(p) for p in phrases[:n]), *phrases[n:]]
    pinned_pks = dict(db.get_pk_map(req.pinned_memory_ids)) if req.pinned_memory_ids else {}
    excluded = {pk for _, pk in db.get_pk_map(req.exclude_memory_ids)} if req.exclude_memory_ids else set()
    window = 4 * req.max_memories
    request_text: list[str] = []  # the request's own phrases (none: no user text)
    if phrases:
        # the request's own parts count as phrases of their own: a memory that answers one part of a several-part
        # request is found on that part's evidence, not diluted by the others' words (text/clauses.py)
        # only the request's phrases count as the request: a long request comes as several (its first sentences,
        # then the rest), and what its later sentences find is as much the request's as what its first ones find
        n = min(req.request_phrases, len(phrases))
        parts = request_parts(phrases[0]) if SPLIT_REQUEST and n else []
        asked = [*phrases[:n], *parts]
        request_text = phrases[:n]
        wider = [*asked, *phrases[n:]]
        if semantic is not None and semantic.configured and len(wider) > len(asked):
            prefetch_phrases(db, wider)  # both keyword passes run while the phrases are embedded
            prefetch_phrases(db, asked)
        alone = not (asked and len(wider) > len(asked))  # the request's phrases are all there is
        opinion = REQUEST_OPINION if asked else None
        ranking = rank_phrases(
            db, wider, filters, want=PER_PHRASE * len(wider), semantic=semantic, opinion=opinion if alone else None
        )
        degraded_reason = ranking.reason
        model = semantic.model if semantic is not None and ranking.mode != "lexical" else None
        bars = relevance_bars(model, inject=True)
        first = None
        if asked and len(wider) > len(asked):
            first = rank_phrases(db, asked, filters, want=PER_PHRASE * len(asked), semantic=semantic, opinion=opinion)
        candidates = [pk for r in (ranking, first) if r is not None for _, pk, _, _ in (r.ranked or r.order)]
        moved = factors(db, candidates, req.session_id)
        sunk = {pk: f.value for pk, f in moved.items() if f.value < 1.0}
        every = _positions(ranking, window, bars, set(pinned_pks.values()), sunk)
        lead: dict[int, tuple[int, str, float, dict[str, Any]]] = {}  # no request phrase: the request found nothing
        if asked:
            lead = every if first is None else _positions(first, window, bars, set(pinned_pks.values()), sunk)
            for _, pk, _, explain in (first or ranking).ranked or (first or ranking).order:
                p = explain.get("likelihood")  # none computed (a ranking without the decision): judged as before
                request_likelihood[pk] = 1.0 if p is None else float(p)
        asked_for = set(lead)
        ranked = every.keys() | lead.keys()
        for pk in every.keys() | lead.keys():
            rank_all = 1.0 - every[pk][0] / window if pk in every else 0.0  # rank-based: fused scores are z-scores
            rank_lead = 1.0 - lead[pk][0] / window if pk in lead else 0.0
            _position, match, fused, explain = every.get(pk) or lead[pk]
            cand = found.setdefault(pk, _Candidate(pk))
            cand.score = (rank_all + LEAD_WEIGHT * rank_lead) / (1.0 + LEAD_WEIGHT)
            cand.why.update(ranked_why(ranking.mode, match, cand.score, fused, explain))
    if entity_names:
        hub = db.memories_with_entities(entity_names, filters, window)
        names_of = db.entities_of([pk for pk, _ in hub])
        for pk, count in hub:
            cand = found.setdefault(pk, _Candidate(pk, why={"retriever": "entity"}))
            cand.score += ENTITY_WEIGHT * count / len(entity_names)
            cand.why["score"] = round(cand.score, 4)
            cand.why["entities"] = [n for n, _ in names_of.get(pk, []) if n in entity_names]
    if LOOKUPS_NEED_NO_MEMORY and request_text and answered_by_looking(" ".join(request_text)):
        asked_for.clear()  # the request calls for no memory; what a later step touches still may
        if req.step is None:
            found.clear()
    if NO_UNASKED_TODOS and req.step is None and found and not _ASKS_FOR_TODOS_RE.search(" ".join(request_text)):
        rows_of = db.get_by_pks(list(found))
        for pk in [pk for pk, mem in rows_of.items() if mem.category == "todo"]:
            found.pop(pk)
            asked_for.discard(pk)
    if NAMES_ARE_NOT_ENOUGH and request_text:
        # not the request's: it leaves what the request's words alone brought (at a turn's first call, everything;
        # later, _follow_turn drops it unless the step touches it; after a failed call its error lines may vouch)
        for pk in _about_names_only(db, request_text, list(found)):
            asked_for.discard(pk)
            if req.step is None:
                found.pop(pk)
    if req.step is not None and JUDGE_STEP:
        _judge_step(db, req.step, found, filters, asked_for, request_text)
    max_memories = req.max_memories
    if req.step is not None and FOLLOW_TURN and not req.step.failed:  # a failure's error lines are a question
        _follow_turn(found, asked_for, request_likelihood, req.request_carried)
        max_memories = min(max_memories, LATER_MAX)
    for pk in excluded:
        found.pop(pk, None)
    notes = stale_notes(db, list(found))
    for pk, note in notes.items():  # a memory about code that is gone gives its place up ([staleness] demote)
        found[pk].score *= max(0.0, min(1.0, db.stale_factor))
        found[pk].why["stale"] = note
        if "score" in found[pk].why:
            found[pk].why["score"] = round(found[pk].score, 4)
    # what agents did with it when shown (retrieval/usefulness.py) moves its score too
    moved.update(factors(db, [pk for pk in found if pk not in moved], req.session_id))
    for pk in [pk for pk in found.keys() & moved.keys() if pk not in ranked and "step" not in found[pk].why]:
        if moved[pk].value < ENTITY_ONLY_SINK_BAR:  # no likelihood for the record to move: it decides alone
            found.pop(pk)
    for pk in found.keys() & moved.keys():
        found[pk].score = adjusted(found[pk].score, moved[pk].value)
        found[pk].why["usefulness"] = moved[pk].to_why()
        if "score" in found[pk].why:
            found[pk].why["score"] = round(found[pk].score, 4)

    # A pin stays while this step's query still ranks it high enough; otherwise it is a fresh candidate like any
    # other (it may come back on its score, counted against max_new).
    kept: list[_Candidate] = []
    for mid in dict.fromkeys(req.pinned_memory_ids):
        pin = found.get(pinned_pks.get(mid, -1))
        if pin is None or pin.score < req.pinned_min_score:
            continue
        found.pop(pin.pk)
        pin.why["pinned"] = True
        kept.append(pin)

    fresh = sorted(found.values(), key=lambda c: -c.score)
    chosen: list[_Candidate] = []
    budget = req.token_budget
    rows = db.get_by_pks([c.pk for c in kept] + [c.pk for c in fresh])
    new_count = 0
    for cand in sorted(kept, key=lambda c: -c.score) + fresh:
        if len(chosen) >= max_memories:
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
        origin = mem.provenance
        out.append(
            RetrievedMemory(mem.id, mem.text, mem.importance, mem.category, cand.why, origin.origin, origin.label())
        )
    result = RetrieveResult(out, req.token_budget - budget, degraded_reason is not None, degraded_reason)
    return result, [c.pk for c in chosen]
