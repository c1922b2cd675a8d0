"""`codememory consolidate` (and the daemon's scheduled run): squash memories that say one thing, link the ones that
must never merge (`supersedes` for an updated value, `conflicts` for a reversal), archive old unread unimportant
memories (decay) and merge spellings of one entity. Every run that changes something is recorded with what it
changed and can be undone (`--undo RUN`); a dry run only shows the plan. Nothing is ever deleted: originals and
decayed memories are archived."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codememory.core.dates import now_iso
from codememory.core.result import Result

if TYPE_CHECKING:
    from codememory.operations.consolidation.model import ClusterJudge
    from codememory.operations.consolidation.plan import Plan
    from codememory.service.project_store import Store
    from codememory.store.consolidation_runs import ConsolidationTables

KINDS = ("squash", "supersedes", "conflicts", "decay", "entity")


@dataclass
class ConsolidationChange(Result):
    """One change of a run (or of a dry run's plan)."""

    kind: str  # squash | supersedes | conflicts | decay | entity
    memories: list[str]  # squash: the originals; supersedes/conflicts: [newer, older]; decay: [the memory]
    result: str | None  # squash: the consolidated memory (None in a dry run); entity: the canonical name
    text: str | None  # squash: the consolidated text; entity: the spelling merged away
    reason: str


@dataclass
class PairLeftAlone(Result):
    memories: list[str]  # the two memories compared
    reason: str  # why nothing was done ("differ in a number: 5432 vs 5433", "cosine 0.88 under ...")


@dataclass
class ClusterLeftAlone(Result):
    """A cluster (memories close enough to compare) that the run leaves as it is."""

    memories: list[str]
    pairs: list[PairLeftAlone]


@dataclass
class ConsolidationReport(Result):
    """`consolidate --json`: what the run changed (or, with --dry-run, would change)."""

    run: int | None  # the recorded run (None: a dry run)
    dry_run: bool
    method: str  # "rules" or "model:<provider>/<model>"
    similarity: str  # how memories were compared: "vectors:<model> (cosine >= t)" or "words"
    considered: int  # live memories
    clusters: int
    model_calls: int
    counts: dict[str, int]  # changes by kind
    changes: list[ConsolidationChange]
    notes: list[str] = field(default_factory=list)
    left_alone: list[ClusterLeftAlone] = field(default_factory=list)  # every cluster no change touches, and why


@dataclass
class RunSummary(Result):
    id: int
    started_at: str
    finished_at: str
    trigger: str  # command | schedule
    method: str
    status: str  # applied | undone
    undone_at: str | None
    counts: dict[str, int]


@dataclass
class ConsolidationRuns(Result):
    """`consolidate --runs --json`: the recorded runs, newest first."""

    runs: list[RunSummary]


@dataclass
class ConsolidationUndo(Result):
    """`consolidate --undo RUN --json`: what undoing the run restored."""

    run: int
    restored: list[str]  # memories unarchived (squash originals, decayed) or no longer superseded
    archived: list[str]  # consolidated memories the run wrote, archived again
    links_removed: int
    entities_restored: int


@dataclass
class ConsolidationStats(Result):
    """The consolidation part of `stats`."""

    runs: int
    last_run: str | None
    consolidated: int  # live memories a squash wrote
    squashed: int  # originals archived by applied runs
    decayed: int  # memories archived by decay in applied runs
    linked: int  # supersedes + conflicts links applied runs wrote


def _judge(store: Store, run_key: str, use_model: bool, notes: list[str]) -> ClusterJudge | None:
    if not use_model or not store.config.consolidation.use_model:
        return None
    from codememory.errors import InvalidInput
    from codememory.extract.llm import provider_from_config

    try:
        provider = provider_from_config(store.config.llm)
    except InvalidInput as exc:
        notes.append(f"model not used: {exc}")
        return None
    if provider is None:
        return None
    from codememory.operations.consolidation.model import ClusterJudge

    return ClusterJudge(provider, store.db, store.config.llm, run_key, store.root.name)


def _changes(plan: Plan, tables: ConsolidationTables) -> tuple[list[ConsolidationChange], list[dict[str, Any]]]:
    """The plan as report entries and as the run's stored changes (what undo reads)."""
    report: list[ConsolidationChange] = []
    stored: list[dict[str, Any]] = []
    for i, s in enumerate(plan.squashes):
        ids = [f.memory.id for f in s.members]
        report.append(ConsolidationChange("squash", ids, None, s.text, s.reason))
        stored.append({"kind": "squash", "slot": i, "originals": ids, "reason": s.reason})
    for link in plan.links:
        d = link.decision
        pair = [d.a.memory.id, d.b.memory.id]
        report.append(ConsolidationChange(d.kind, pair, None, None, d.reason))
        slots = link.a_slot is not None or link.b_slot is not None
        stored.append(
            {
                "kind": d.kind,
                "from": pair[0] if link.a_slot is None else None,
                "to": pair[1] if link.b_slot is None else None,
                "from_slot": link.a_slot,
                "to_slot": link.b_slot,
                "previous": None if slots else tables.link_type(d.a.pk, d.b.pk),
                "retired": link.retire,
                "reason": d.reason,
            }
        )
    for fact, reason in plan.decay:
        report.append(ConsolidationChange("decay", [fact.memory.id], None, None, reason))
        stored.append({"kind": "decay", "memory": fact.memory.id, "reason": reason})
    for e in plan.entities:
        reason = f"another spelling of {e.into} ({e.memories} memories)"
        report.append(ConsolidationChange("entity", [], e.into, e.name, reason))
        stored.append({"kind": "entity", "into": e.into, "into_type": e.into_type})
    return report, stored


def consolidate(
    store: Store,
    *,
    dry_run: bool = False,
    use_model: bool = True,
    trigger: str = "command",
    progress: Callable[[str], None] | None = None,
    never_used: bool = False,
) -> ConsolidationReport:
    """Plan a run over the live memories and, unless `dry_run`, apply and record it (a run with no change is
    recorded too: the daemon's schedule counts from it). With `never_used`, memories agents were shown in at least
    `[usefulness] never_used_after` sessions and never used are archived too (as decay: undone the same way);
    without, the plan's notes name them."""
    from codememory.operations.consolidation.plan import plan_run, squash_record
    from codememory.store.consolidation_runs import ConsolidationTables

    started = now_iso()
    tables = ConsolidationTables(store.db)
    planned_after = tables.latest_run_id()
    notes: list[str] = []
    judge = _judge(store, f"consolidation:{started}", use_model, notes)
    plan = plan_run(store, started, judge, progress, never_used=never_used)
    plan.notes[:0] = notes
    report, stored = _changes(plan, tables)
    counts = dict(Counter(c.kind for c in report))
    result = ConsolidationReport(
        None,
        dry_run,
        plan.method,
        plan.similarity,
        plan.considered,
        plan.clusters,
        plan.model_calls,
        {k: counts.get(k, 0) for k in KINDS},
        report,
        plan.notes,
        [
            ClusterLeftAlone(
                [f.memory.id for f in cluster.members],
                [PairLeftAlone([a.memory.id, b.memory.id], why) for a, b, why in cluster.reasons],
            )
            for cluster in plan.left_alone
        ],
    )
    if dry_run:
        return result
    now = now_iso()
    squashes = [squash_record(s, store, tables, now) for s in plan.squashes]
    summary = dict(result.counts)
    summary["squashed"] = sum(len(s.originals) for s in squashes)
    run_id, new_ids, _merged = tables.apply(
        started_at=started,
        now=now,
        trigger=trigger,
        method=plan.method,
        squashes=squashes,
        links=[
            (
                d.a.pk if link.a_slot is None else -1 - link.a_slot,
                d.b.pk if link.b_slot is None else -1 - link.b_slot,
                d.kind,
                None,
                link.retire,
            )
            for link in plan.links
            for d in [link.decision]
        ],
        archive=[f.pk for f, _ in plan.decay],
        entity_merges=[(e.entity_id, e.into, e.into_type) for e in plan.entities],
        changes=stored,
        summary=summary,
        planned_after=planned_after,
    )
    result.run = run_id
    squash_changes = [c for c in report if c.kind == "squash"]
    for i, change in enumerate(squash_changes):
        change.result = new_ids.get(i)
    link_changes = [c for c in report if c.kind in ("supersedes", "conflicts")]
    for change, link in zip(link_changes, plan.links, strict=True):
        for end, slot in ((0, link.a_slot), (1, link.b_slot)):
            if slot is not None and slot in new_ids:
                change.memories[end] = new_ids[slot]
    _embed_new(store, [s for s in squashes if s.vector_from is None])
    return result


def _embed_new(store: Store, squashes: list[Any]) -> None:
    """Vectors for the texts a model wrote (a kept text's vector was copied); the daemon's backfill covers a
    failure here."""
    if not squashes or not store.semantic.configured:
        return
    pks = [p for p in (store.db.pk_of(s.memory.id) for s in squashes) if p is not None]
    store.semantic.backfill(len(pks) + 1, pks)


def runs(store: Store, limit: int = 50) -> ConsolidationRuns:
    from codememory.store.consolidation_runs import ConsolidationTables

    return ConsolidationRuns(
        [
            RunSummary(
                r.id,
                r.started_at,
                r.finished_at,
                r.trigger,
                r.method,
                r.status,
                r.undone_at,
                {k: v for k, v in r.summary.items() if isinstance(k, str) and isinstance(v, int)},
            )
            for r in ConsolidationTables(store.db).runs(limit)
        ]
    )


def consolidation_stats(store: Store) -> ConsolidationStats:
    from codememory.store.consolidation_runs import ConsolidationTables

    n, last, live, summaries = ConsolidationTables(store.db).counts()

    def total(*keys: str) -> int:
        return sum(v for s in summaries for k in keys if isinstance(v := s.get(k), int))

    return ConsolidationStats(n, last, live, total("squashed"), total("decay"), total("supersedes", "conflicts"))


def undo(store: Store, run_id: int) -> ConsolidationUndo:
    from codememory.operations.consolidation.undo import undo_run

    return ConsolidationUndo(run_id, *undo_run(store, run_id))
