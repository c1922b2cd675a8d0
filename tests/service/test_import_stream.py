"""A large import: read in batches prepared by worker processes, written in one transaction (all or nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codememory import Store
from codememory.errors import InvalidInput
from codememory.service.transfer import IMPORT_BATCH

LINES = 2 * IMPORT_BATCH + 500  # three batches: the pool of worker processes prepares them


def _dump(path: Path, bad_line: int | None = None) -> Path:
    with path.open("w") as out:
        for i in range(1, LINES + 1):
            if i == bad_line:
                out.write('{"text": 42}\n')
            else:
                out.write(
                    json.dumps({"id": f"mem_{i:08x}", "text": f"note {i}: kafka consumers in src/app_{i}.py"}) + "\n"
                )
    return path


@pytest.mark.slow
def test_a_large_import_keeps_every_line_and_its_entities(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        seen: list[tuple[str, int]] = []
        report = store.import_(
            _dump(tmp_path / "all.jsonl"), progress=lambda phase, done, _t: seen.append((phase, done))
        )
        assert report.added == LINES and not report.invalid
        assert [done for phase, done in seen if phase == "read"] == [IMPORT_BATCH, 2 * IMPORT_BATCH, LINES]
        last = store.get(f"mem_{LINES:08x}")
        assert last.text == f"note {LINES}: kafka consumers in src/app_{LINES}.py"
        pk = store.db.pk_of(last.id)
        assert pk is not None
        assert dict(store.db.entities_of([pk])[pk]) == {"kafka": "service", f"src/app_{LINES}.py": "file"}
        conn = store.db.conn
        for table, query in (("memories_fts", "kafka"), ("memories_words", "consumers"), ("memories_trigram", "app_")):
            found = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query,)).fetchone()[0]
            assert found == LINES, table  # every batch in every text index
        assert store.import_(tmp_path / "all.jsonl").skipped_existing == LINES  # idempotent


@pytest.mark.slow
def test_an_invalid_line_late_in_a_large_file_imports_nothing(tmp_path: Path) -> None:
    with Store.init(tmp_path)[0] as store:
        dump = _dump(tmp_path / "bad.jsonl", bad_line=LINES - 3)
        with pytest.raises(InvalidInput, match=f"line {LINES - 3}"):
            store.import_(dump)
        assert store.count() == 0
        assert store.import_(dump, skip_invalid=True).added == LINES - 1


def test_a_record_without_dates_is_dated_at_its_import(tmp_path: Path) -> None:
    from codememory.core.dates import now_iso

    dump = tmp_path / "undated.jsonl"
    dump.write_text(
        json.dumps({"id": "mem_0000000a", "text": "undated note"})
        + "\n"
        + json.dumps({"id": "mem_0000000b", "text": "dated note", "created_at": "2026-01-02T03:04:05Z"})
        + "\n"
    )
    with Store.init(tmp_path)[0] as store:
        before = now_iso()
        store.import_(dump)
        undated, dated = store.get("mem_0000000a"), store.get("mem_0000000b")
        assert before <= undated.created_at <= now_iso() and undated.updated_at == undated.created_at
        assert dated.created_at == dated.updated_at == "2026-01-02T03:04:05.000Z"
