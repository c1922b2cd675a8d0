"""A consolidation run's changes, planned from the live store without writing anything: squashes (one memory for a
cluster that says one thing), supersessions and conflicts (pairs that must never merge), decay (old, unread,
unimportant memories to archive) and entity merges. `codememory consolidate --dry-run` shows this plan; a run
applies it (store/consolidation_runs.py) and records it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from itertools import combinations

from codememory.core.dates import from_iso, now_iso, to_iso
from codememory.core.model import Memory, new_memory_id
from codememory.core.provenance import Provenance
from codememory.operations.consolidation.cluster import components, lexical_edges, vector_edges
from codememory.operations.consolidation.entity_gc import EntityMerge, plan_entity_merges
from codememory.operations.consolidation.facts import Fact, fact_of
from codememory.operations.consolidation.model import MAX_CLUSTER, ClusterJudge
from codememory.operations.consolidation.rules import (
    APART,
    CONFLICTS,
    SQUASH,
    SUPERSEDES,
    Decision,
    compatible,
    decide,
    keeper,
)
from codememory.service.project_store import Store
from codememory.store.consolidation_runs import CONSOLIDATION_AGENT, ConsolidationTables, Squash
from codememory.store.filters import Filters
from codememory.text.instructions import is_instruction_like

Progress = Callable[[str], None]


@dataclass
class PlannedSquash:
    members: list[Fact]
    text: str
    category: str
    reason: str
    kept: Fact | None  # the member whose text is kept (rules), None for a text the model wrote


@dataclass
class PlannedLink:
    """A `supersedes` or `conflicts` link from `a` to `b`. An end that a squash of the same run replaces is the
    squash's new memory (`a_slot` / `b_slot`: the squash's position in the plan)."""

    decision: Decision
    a_slot: int | None
    b_slot: int | None
    retire: bool  # supersedes: mark `b` superseded by `a`


@dataclass
class LeftAlone:
    """A cluster the run does not change, and why, pair by pair (the pairs that were compared)."""

    members: list[Fact]
    reasons: list[tuple[Fact, Fact, str]]


@dataclass
class Plan:
    considered: int = 0
    similarity: str = "words"
    clusters: int = 0
    method: str = "rules"
    squashes: list[PlannedSquash] = field(default_factory=list)
    links: list[PlannedLink] = field(default_factory=list)
    decay: list[tuple[Fact, str]] = field(default_factory=list)
    entities: list[EntityMerge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    model_calls: int = 0
    left_alone: list[LeftAlone] = field(default_factory=list)


def _edges(store: Store, facts: list[Fact], plan: Plan) -> tuple[list[tuple[int, int, float | None]], float]:
    """Candidate pairs (indices into `facts`) and the near-identical threshold of their vector space."""
    if len(facts) < 2:  # nothing to compare (and no vectors to ask for)
        return [], 1.01
    cfg = store.config.consolidation
    semantic = store.semantic
    model = semantic.model if semantic.configured else None
    if model is None:
        plan.notes.append(f"no embeddings ({semantic.reason or 'not configured'}): compared by shared words instead")
        return list(lexical_edges(facts)), 1.01
    import numpy as np

    from codememory.embedding.vector_rows import from_blob

    blobs = store.db.vectors_for(model, [f.pk for f in facts])
    have = [i for i, f in enumerate(facts) if f.pk in blobs]
    if len(have) < len(facts):
        plan.notes.append(
            f"{len(facts) - len(have)} memories have no vector from {model} yet and were not compared "
            "(`codememory embed` adds them)"
        )
    if len(have) < 2:
        plan.notes.append(f"fewer than two memories have vectors from {model}: compared by shared words instead")
        return list(lexical_edges(facts)), 1.01
    from codememory.embedding.relevance import scale_for

    scale = scale_for(
        model, dedup=store.config.dedup.cosine, links=store.config.links.cosine, cluster=cfg.similarity_threshold
    )
    cluster_at, near = scale.cluster, scale.squash
    matrix = np.vstack([from_blob(blobs[facts[i].pk][1], blobs[facts[i].pk][0]) for i in have])
    plan.similarity = f"vectors:{model} (cosine >= {cluster_at:g})"
    return [(have[i], have[j], c) for i, j, c in vector_edges(matrix, cluster_at)], near


def _grouped(
    facts: list[Fact], edges: list[tuple[int, int, float | None]], limit: int | None = None, strict: bool = True
) -> list[list[int]]:
    """Groups joined along `edges` (the closest first) only while every pair across two groups is compatible
    (complete linkage): connected components would chain "A contained in B" and "A contained in C" into one
    squash of B and C, two different facts."""
    group_of = list(range(len(facts)))
    groups: dict[int, list[int]] = {}
    for i, j, _c in sorted(edges, key=lambda e: -(e[2] if e[2] is not None else 1.0)):
        gi, gj = group_of[i], group_of[j]
        if gi == gj:
            continue
        left, right = groups.get(gi, [i]), groups.get(gj, [j])
        if limit is not None and len(left) + len(right) > limit:
            continue
        if all(compatible(facts[x], facts[y], strict) for x in left for y in right):
            groups[gi] = left + right
            groups.pop(gj, None)
            for x in right:
                group_of[x] = gi
    return [sorted(g) for g in groups.values() if len(g) > 1]


def _unambiguous(facts: list[Fact], edges: list[tuple[int, int, float | None]]) -> list[tuple[int, int, float | None]]:
    """The squash edges without those of a memory that could join two memories that may not merge with each
    other (a first sentence contained in both a note and its reversal): which one it restates is a guess."""
    partners: dict[int, list[int]] = {}
    for i, j, _c in edges:
        partners.setdefault(i, []).append(j)
        partners.setdefault(j, []).append(i)
    torn = {
        x
        for x, others in partners.items()
        if len(others) > 1 and any(not compatible(facts[p], facts[q]) for p, q in combinations(others, 2))
    }
    return [(i, j, c) for i, j, c in edges if i not in torn and j not in torn]


def _squash_groups(
    facts: list[Fact],
    edges: list[tuple[int, int, float | None]],
    decisions: dict[tuple[int, int], Decision],
    judge: ClusterJudge | None,
    apart: dict[tuple[int, int], str],
) -> list[PlannedSquash]:
    """Squashes: groups the model judges when there is one (of memories the rules let merge), else groups
    along the rules' squash decisions."""
    squash_edges = _unambiguous(facts, [(i, j, c) for i, j, c in edges if _is(decisions, i, j, SQUASH)])
    out: list[PlannedSquash] = []
    if judge is not None:
        mergeable = [(i, j, c) for i, j, c in edges if decisions.get((i, j)) is None or _is(decisions, i, j, SQUASH)]
        left: list[tuple[int, int, float | None]] = []
        for group in _grouped(facts, mergeable, MAX_CLUSTER, strict=False):
            members = [facts[i] for i in group]
            verdict = judge.judge(members)
            if verdict is None:  # over budget or the model failed: the rules decide this group
                inside = set(group)
                left += [(i, j, c) for i, j, c in squash_edges if i in inside and j in inside]
            elif verdict.squash and verdict.text is not None and verdict.category is not None:
                out.append(PlannedSquash(members, verdict.text, verdict.category, f"model: {verdict.reason}", None))
            else:
                inside = set(group)
                why = f"the model kept them apart: {verdict.reason}" if verdict.reason else "the model kept them apart"
                apart.update({(i, j): why for i, j, _c in mergeable if i in inside and j in inside})
        squash_edges = left
    for group in _grouped(facts, squash_edges):
        part = [facts[i] for i in group]
        kept = keeper(part)
        inside = set(group)
        reasons = sorted({decisions[(i, j)].reason for i, j, _c in squash_edges if i in inside and j in inside})
        out.append(PlannedSquash(part, kept.memory.text, kept.memory.category, "; ".join(reasons), kept))
    return out


def _left_alone(
    facts: list[Fact],
    clusters: list[list[int]],
    edges: list[tuple[int, int, float | None]],
    decisions: dict[tuple[int, int], Decision],
    apart: dict[tuple[int, int], str],
    changed: set[int],
    linked: set[tuple[int, int]],
) -> list[LeftAlone]:
    """The clusters no change of the plan touches, each with the reason for every pair compared in it."""
    out: list[LeftAlone] = []
    for cluster in clusters:
        if any(facts[i].pk in changed for i in cluster):
            continue
        inside = set(cluster)
        reasons = []
        for i, j, _c in edges:
            if i not in inside or j not in inside:
                continue
            a, b = facts[i], facts[j]
            if (i, j) in apart:
                why = apart[(i, j)]
            elif (d := decisions.get((i, j))) is not None and d.kind != SQUASH:
                pair = (min(a.pk, b.pk), max(a.pk, b.pk))
                why = f"already linked ({d.kind}: {d.reason})" if pair in linked else d.reason
            else:
                why = "one says what two memories that may not merge both say: which one it restates is a guess"
            reasons.append((a, b, why))
        out.append(LeftAlone([facts[i] for i in cluster], reasons))
    return out


def _is(decisions: dict[tuple[int, int], Decision], i: int, j: int, kind: str) -> bool:
    d = decisions.get((i, j))
    return d is not None and d.kind == kind


def plan_run(
    store: Store, now: str, judge: ClusterJudge | None, progress: Progress | None = None, *, never_used: bool = False
) -> Plan:
    plan = Plan()
    tables = ConsolidationTables(store.db)
    live = tables.live(Filters(now=now))
    plan.considered = len(live)
    entities = store.db.entities_of([pk for pk, _ in live])
    facts = [fact_of(pk, mem, entities.get(pk, [])) for pk, mem in live]
    if progress:
        progress(f"comparing {len(facts)} live memories")
    edges, near = _edges(store, facts, plan)
    clusters = components(len(facts), edges)
    plan.clusters = len(clusters)
    decisions: dict[tuple[int, int], Decision] = {}
    apart: dict[tuple[int, int], str] = {}
    for i, j, cosine in edges:
        found = decide(facts[i], facts[j], cosine, near)
        if found.kind == APART:
            apart[(i, j)] = found.reason
        else:
            decisions[(i, j)] = found
    if judge is not None:
        plan.method = judge.method
    plan.squashes = _squash_groups(facts, edges, decisions, judge, apart)
    if judge is not None:
        plan.model_calls = judge.calls
        if judge.stopped:
            plan.notes.append(f"the model stopped ({judge.stopped}); the rules decided the remaining clusters")
    slot_of = {f.pk: n for n, sq in enumerate(plan.squashes) for f in sq.members}
    linked = tables.linked_pairs([f.pk for f in facts], (CONFLICTS, SUPERSEDES))
    retired: set[int] = set()
    done: set[tuple[object, object]] = set()
    ordered = sorted(
        (d for d in decisions.values() if d.kind != SQUASH), key=lambda d: d.a.memory.created_at, reverse=True
    )
    for d in ordered:
        a, b = d.a.pk, d.b.pk
        a_slot, b_slot = slot_of.get(a), slot_of.get(b)
        ends = (("slot", a_slot) if a_slot is not None else a, ("slot", b_slot) if b_slot is not None else b)
        if (min(a, b), max(a, b)) in linked or a in retired or ends in done or ends[::-1] in done:
            continue
        if a_slot is not None and a_slot == b_slot:
            continue
        done.add(ends)
        retire = d.kind == SUPERSEDES and b not in retired and b_slot is None
        if retire:
            retired.add(b)
        plan.links.append(PlannedLink(d, a_slot, b_slot, retire))
    busy = set(slot_of) | retired | {link.decision.a.pk for link in plan.links}
    changed = set(slot_of) | {p for link in plan.links for p in (link.decision.a.pk, link.decision.b.pk)}
    plan.left_alone = _left_alone(facts, clusters, edges, decisions, apart, changed, linked)
    _plan_decay(store, tables, facts, now, plan, busy)
    _plan_never_used(store, facts, plan, busy | {f.pk for f, _ in plan.decay}, never_used)
    plan.entities = plan_entity_merges(tables.entity_table())
    return plan


def _plan_never_used(store: Store, facts: list[Fact], plan: Plan, busy: set[int], archive: bool) -> None:
    """Memories agents were shown in at least `[usefulness] never_used_after` sessions and never used
    (capture/usage.py): archived with `never_used` (recorded and undone like decay), else a note names them. A
    warning is never among them: a session that did not go against it is not counted as ignoring it."""
    from codememory.text.usage_cues import warns

    threshold = max(1, store.config.usefulness.never_used_after)
    records = store.db.usefulness([f.memory.id for f in facts], now_iso())
    found = [
        (f, records[f.memory.id])
        for f in facts
        if f.pk not in busy
        and (r := records.get(f.memory.id)) is not None
        and not r.used_total
        and r.shown_total >= threshold
        and not warns(f.memory.text)
    ]
    if not archive:
        if found:
            plan.notes.append(
                f"{len(found)} memories were shown in {threshold} or more agent sessions and never used "
                f"({', '.join(f.memory.id for f, _ in found[:5])}{', ...' if len(found) > 5 else ''}): "
                "`codememory consolidate --never-used` archives them"
            )
        return
    for fact, record in found:
        last = (record.last_shown_at or "?")[:10]
        plan.decay.append((fact, f"shown in {record.shown_total} agent sessions, never used (last shown {last})"))


def _plan_decay(
    store: Store, tables: ConsolidationTables, facts: list[Fact], now: str, plan: Plan, busy: set[int]
) -> None:
    cfg = store.config.consolidation
    if not cfg.decay or cfg.decay_after_days <= 0:
        return
    cutoff = to_iso(from_iso(now) - timedelta(days=cfg.decay_after_days))
    shown = tables.shown_since(cutoff)
    by_pk = {f.pk: f for f in facts}
    for pk, mem in tables.decay_candidates(Filters(now=now), cutoff, cfg.decay_max_importance):
        if pk in busy or mem.id in shown or pk not in by_pk:
            continue
        last = (mem.last_accessed_at or "never")[:10]
        plan.decay.append(
            (
                by_pk[pk],
                f"importance {mem.importance:g} <= {cfg.decay_max_importance:g}; not retrieved or shown in "
                f"{cfg.decay_after_days:g} days (created {mem.created_at[:10]}, last read {last})",
            )
        )


def _merged_provenance(members: list[Memory], text: str) -> Provenance:
    """Where a squash's memory comes from: merged here when every member was written here; else from where its first
    untrusted member came (merging never launders a pulled or committed memory into one of ours), waiting for review
    when a member did or its text reads like instructions."""
    untrusted = [m.provenance for m in members if not m.provenance.trusted]
    if not untrusted:
        return Provenance(by="consolidation")
    waiting = any(p.review == "pending" for p in untrusted) or is_instruction_like(text)
    return replace(untrusted[0], review="pending" if waiting else None)


def squash_record(s: PlannedSquash, store: Store, tables: ConsolidationTables, now: str) -> Squash:
    """The consolidated memory of a planned squash: the highest importance, every tag and entity, the links
    of its members to memories outside it, the newest member's date."""
    members = s.members
    first = s.kept or max(members, key=lambda f: f.memory.importance)
    tags = list(dict.fromkeys(t for f in [first, *members] for t in f.memory.tags))
    expiries = [f.memory.expires_at for f in members]
    memory = Memory(
        id=new_memory_id(),
        text=s.text,
        category=s.category,
        importance=max(f.memory.importance for f in members),
        tags=tags,
        entered_by=CONSOLIDATION_AGENT,
        source=first.memory.source,
        created_at=max(f.memory.created_at for f in members),
        updated_at=now,
        expires_at=None if any(e is None for e in expiries) else max(e for e in expiries if e),
        provenance=_merged_provenance([f.memory for f in members], s.text),
    )
    pks = {f.pk for f in members}
    entities = store.db.entities_of(list(pks))
    merged = list(dict.fromkeys(e for f in [first, *members] for e in entities.get(f.pk, [])))
    if s.kept is None:
        from codememory.service.memory_entities import entities_in

        merged = list(dict.fromkeys([*entities_in(s.text), *merged]))
    links: list[tuple[int, str, str, float | None]] = []
    seen: set[tuple[int, str]] = set()
    for a, b, kind, score in tables.links_touching(list(pks)):
        if a in pks and b in pks:
            continue
        other, direction = (b, "out") if a in pks else (a, "in")
        if (other, direction) not in seen:
            seen.add((other, direction))
            links.append((other, direction, kind, score))
    return Squash(memory, sorted(pks), merged, links, s.kept.pk if s.kept else None)
