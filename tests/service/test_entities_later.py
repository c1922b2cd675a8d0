"""An import may store the text first and read the memories' entities after it: nothing is lost on the way (a
crash after the import's commit, an interrupted pass), and what the pass writes is what an import that read them at
once writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codememory import Store
from codememory.service import entity_backfill

LINES = 60
TEXTS = [
    "kafka consumers lag when src/billing/worker_{i}.py retries with backoff",
    "Postgres raises IntegrityError on duplicate invoice numbers (case {i})",
    "plain note number {i} about lunch",  # no entities at all: it must not stay pending either
]


def _dump(path: Path) -> Path:
    with path.open("w") as out:
        for i in range(1, LINES + 1):
            text = TEXTS[i % len(TEXTS)].format(i=i)
            out.write(json.dumps({"id": f"mem_{i:08x}", "text": text}) + "\n")
    return path


def _stored_entities(store: Store) -> dict[str, set[tuple[str, str]]]:
    """Each memory's entities as the store holds them (memory_entities only, not read from text)."""
    rows = store.db.conn.execute(
        "SELECT m.id, e.name, e.type FROM memories m JOIN memory_entities me ON me.memory_pk = m.pk "
        "JOIN entities e ON e.id = me.entity_id"
    ).fetchall()
    out: dict[str, set[tuple[str, str]]] = {}
    for mid, name, kind in rows:
        out.setdefault(mid, set()).add((name, kind))
    return out


def _init(project: Path) -> Store:
    project.mkdir()
    return Store.init(project)[0]


def _at_once(tmp_path: Path) -> dict[str, set[tuple[str, str]]]:
    with _init(tmp_path / "at-once") as store:
        assert store.import_(_dump(tmp_path / "at-once.jsonl"), entities="now").added == LINES
        assert store.db.count_entities_pending() == 0
        return _stored_entities(store)


def _run(code: str, *args: object) -> None:
    """Python in a child process that ends with os._exit: as abrupt as a crash, no clean-up runs."""
    env = {**os.environ, "CODEMEMORY_EMBEDDING_PROVIDER": "none"}
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True)
    assert done.returncode == 9, done.stderr[-2000:]


def test_entities_left_for_later_are_read_from_the_text_then_filled_as_at_once(tmp_path: Path) -> None:
    expected = _at_once(tmp_path)
    with _init(tmp_path / "later") as store:
        assert store.import_(_dump(tmp_path / "later.jsonl"), entities="later").added == LINES
        assert store.db.count_entities_pending() == LINES
        assert _stored_entities(store) == {}
        assert store.list(entity="kafka", limit=100) == []  # a filter sees only what is stored
        pk = store.db.pk_of("mem_00000003")
        assert pk is not None
        # a reader of one memory's entities gets them from the text meanwhile
        assert set(store.db.entities_of([pk])[pk]) == expected["mem_00000003"]

        assert store.fill_pending_entities() == LINES
        assert store.db.count_entities_pending() == 0
        assert _stored_entities(store) == expected
        assert len(store.list(entity="kafka", limit=100)) == LINES // len(TEXTS)


def test_a_crash_right_after_the_import_leaves_every_memory_marked(tmp_path: Path) -> None:
    expected = _at_once(tmp_path)
    project = tmp_path / "crashed"
    _init(project).close()
    _run(
        "import os, sys\nfrom codememory import Store\ns = Store.open(sys.argv[1])\n"
        "assert s.import_(sys.argv[2], entities='later').added == int(sys.argv[3])\nos._exit(9)\n",
        project,
        _dump(tmp_path / "crashed.jsonl"),
        LINES,
    )
    with Store.open(project) as store:
        assert store.count() == LINES
        assert store.db.count_entities_pending() == LINES
        store.fill_pending_entities()
        assert _stored_entities(store) == expected


def test_an_interrupted_pass_leaves_exactly_the_rest_marked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _at_once(tmp_path)
    project = tmp_path / "interrupted"
    with _init(project) as store:
        store.import_(_dump(tmp_path / "interrupted.jsonl"), entities="later")
    _run(  # batches of 20: the process dies as soon as the first one is committed
        "import os, sys\nfrom codememory import Store\nfrom codememory.service import entity_backfill\n"
        "entity_backfill.BATCH = 20\ns = Store.open(sys.argv[1])\n"
        "def stop(done):\n    os._exit(9)\n"
        "s.fill_pending_entities(progress=stop)\n",
        project,
    )
    with Store.open(project) as store:
        pending = {pk for (pk,) in store.db.conn.execute("SELECT memory_pk FROM entities_pending")}
        assert len(pending) == LINES - 20
        filled = _stored_entities(store)
        ids_of = store.db.ids_of(sorted(pending))
        assert not set(ids_of.values()) & set(filled)  # nothing half-written for a memory still marked
        assert filled == {mid: e for mid, e in expected.items() if mid not in ids_of.values()}
        monkeypatch.setattr(entity_backfill, "BATCH", 7)
        assert store.fill_pending_entities() == LINES - 20
        assert _stored_entities(store) == expected


def test_an_edit_of_a_pending_memory_is_not_overwritten_by_the_pass(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        store.import_(_dump(tmp_path / "edit.jsonl"), entities="later")
        store.edit("mem_00000001", text="redis cache warms on deploy")
        assert store.db.count_entities_pending() == LINES - 1
        store.fill_pending_entities()
        assert _stored_entities(store)["mem_00000001"] == {("redis", "database")}


def test_a_small_import_reads_its_entities_at_once(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        store.import_(_dump(tmp_path / "small.jsonl"))
        assert store.db.count_entities_pending() == 0
        assert len(store.list(entity="kafka", limit=100)) == LINES // len(TEXTS)


def test_the_pass_in_worker_processes_writes_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _at_once(tmp_path)
    with _init(tmp_path / "parallel") as store:
        store.import_(_dump(tmp_path / "parallel.jsonl"), entities="later")
        store.edit("mem_00000002", text="redis cache warms on deploy")  # unmarked: the pass must leave it alone
        monkeypatch.setattr(entity_backfill, "BATCH", 7)  # several batches in flight at once
        assert store.fill_pending_entities(workers=2) == LINES - 1
        assert store.db.count_entities_pending() == 0
        assert _stored_entities(store) == {**expected, "mem_00000002": {("redis", "database")}}


def test_re_running_an_import_fills_what_an_interrupted_pass_left(tmp_path: Path) -> None:
    expected = _at_once(tmp_path)
    dump = _dump(tmp_path / "again.jsonl")
    with _init(tmp_path / "again") as store:
        store.import_(dump, entities="later")  # as an import whose own pass was stopped before it began
        assert store.import_(dump).added == 0  # nothing new, yet the store is repaired
        assert store.db.count_entities_pending() == 0
        assert _stored_entities(store) == expected


def test_a_large_library_import_reads_its_entities_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codememory.service import transfer

    monkeypatch.setattr(transfer, "IMPORT_BATCH", 20)  # the file is "large": three batches
    with _init(tmp_path / "large") as store:
        assert store.import_(_dump(tmp_path / "large.jsonl")).added == LINES
        assert store.db.count_entities_pending() == 0
        assert len(store.list(entity="kafka", limit=100)) == LINES // len(TEXTS)


def test_a_memory_the_shared_files_rewrite_is_no_longer_pending(tmp_path: Path) -> None:
    from codememory.store.shared import SharedMemory

    with _init(tmp_path / "shared") as store:
        store.import_(_dump(tmp_path / "shared.jsonl"), entities="later")
        memory = store.get("mem_00000001")
        memory.text = "redis cache warms on deploy"
        store.db.apply_shared([SharedMemory(memory, [("redis", "database")])], [], [], [], local=True)
        assert store.db.count_entities_pending() == LINES - 1
        store.fill_pending_entities()  # must not add the old text's entities beside the file's
        assert _stored_entities(store)["mem_00000001"] == {("redis", "database")}


def test_a_shared_store_reports_the_entity_pass_it_runs_after_a_large_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codememory.operations.share import share_on
    from codememory.service import transfer

    monkeypatch.setattr(transfer, "IMPORT_BATCH", 20)  # the file is "large": three batches
    heard: list[tuple[str, int, int | None]] = []
    with _init(tmp_path / "shared-large") as store:
        share_on(store)
        # as the CLI asks when a daemon serves the project: the text form needs the entities all the same
        store.import_(_dump(tmp_path / "shared-large.jsonl"), entities="auto", progress=lambda *e: heard.append(e))
        assert store.db.count_entities_pending() == 0
        assert ("entities", LINES, LINES) in heard
