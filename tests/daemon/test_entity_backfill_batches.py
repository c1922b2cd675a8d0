"""The daemon's entity pass holds a project's store one batch at a time (a recall waiting on the store waits for
one batch, not the whole poll) and stops between batches when the daemon stops."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import TracebackType

import pytest

from codememory import Store
from codememory.core import registry
from codememory.core.config import load_config
from codememory.core.project import store_dir
from codememory.daemon import entity_backfill
from codememory.daemon.project_access import RegisteredProjects
from codememory.daemon.state import DaemonState

LINES = 30


class _StopOnSecondHold:
    """The store's lock, which asks the daemon to stop as the pass takes it a second time."""

    def __init__(self, stop: threading.Event) -> None:
        self.lock = threading.Lock()
        self.holds = 0
        self.stop = stop

    def __enter__(self) -> None:
        self.lock.acquire()
        self.holds += 1
        if self.holds == 2:
            self.stop.set()

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self.lock.release()


def test_the_pass_takes_the_store_per_batch_and_stops_between_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEMEMORY_EMBEDDING_PROVIDER", "none")
    project = tmp_path / "proj"
    project.mkdir()
    dump = tmp_path / "big.jsonl"
    dump.write_text("".join(json.dumps({"text": f"kafka consumer {i} lags"}) + "\n" for i in range(LINES)))
    with Store.init(project)[0] as store:
        store.import_(dump, entities="later")
    registry_file = tmp_path / "projects.json"
    registry.register(project.resolve(), store_dir(project.resolve()), registry_file)
    state = DaemonState(token="t", config=load_config(None), projects=RegisteredProjects(registry_file))
    monkeypatch.setattr(entity_backfill, "BATCH", 7)
    try:
        with state.stores.use(project.resolve()):
            pass
        (entry,) = state.stores._entries.values()
        hold = _StopOnSecondHold(state.stop_event)
        entry.lock = hold  # type: ignore[assignment]
        entity_backfill.EntityBackfill()(state)
        assert hold.holds == 2
        with Store.open(project) as store:
            assert store.db.count_entities_pending() == LINES - 2 * 7
        state.stop_event.clear()
        entity_backfill.EntityBackfill()(state)
        with Store.open(project) as store:
            assert store.db.count_entities_pending() == 0
    finally:
        state.stores.close_all()
