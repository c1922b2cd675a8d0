"""Every recorded hygiene run of a store, newest first: consolidation runs (`codememory consolidate`, the daemon's
schedule) and staleness checks (`codememory stale`, the daemon's schedule), for the viewer's Runs page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from codememory.core.result import Result

if TYPE_CHECKING:
    from codememory.service.project_store import Store


@dataclass
class HygieneRun(Result):
    kind: str  # consolidation | staleness
    id: int
    started_at: str
    finished_at: str
    status: str  # consolidation: applied | undone; staleness: checked
    trigger: str | None  # consolidation: command | schedule
    counts: dict[str, int]  # what the run changed (consolidation: by kind; staleness: checked, marked, cleared)


@dataclass
class HygieneRuns(Result):
    """`POST /viewer/runs`: consolidation and staleness runs, newest first."""

    runs: list[HygieneRun]


def hygiene_runs(store: Store, limit: int = 50) -> HygieneRuns:
    from codememory.operations.consolidate import runs as consolidation_runs

    found = [
        HygieneRun("consolidation", r.id, r.started_at, r.finished_at, r.status, r.trigger, r.counts)
        for r in consolidation_runs(store, limit).runs
    ]
    found += [
        HygieneRun(
            "staleness",
            run_id,
            started,
            finished,
            "checked",
            None,
            {"checked": checked, "marked": marked, "cleared": cleared},
        )
        for run_id, started, finished, _head, checked, marked, cleared in store.db.staleness_runs(limit)
    ]
    found.sort(key=lambda r: r.finished_at, reverse=True)
    return HygieneRuns(found[:limit])
