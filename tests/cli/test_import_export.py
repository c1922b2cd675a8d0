"""`codememory export` and `import`: JSON Lines round trips, deduplication and invalid lines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import MEMORY_KEYS
from support.cli import (
    ID,
    Invoke,
    assert_error,
    ok,
    ok_json,
    show,
    store,
    write_jsonl,
)


# ------------------------------------------------------------------------------ export/import
def _export_lines(invoke: Invoke, root: Path) -> dict[str, dict[str, Any]]:
    out = ok(invoke("--project", root, "export", "-")).stdout
    records = [json.loads(line) for line in out.splitlines()]
    return {r["id"]: r for r in records}


def test_export_import_preserves_every_field(
    invoke: Invoke, make_project: Callable[[str], Path], tmp_path: Path
) -> None:
    src, dst = make_project("src"), make_project("dst")
    ids = []
    for args in (
        ["full memory", "--tags", "a,b", "--category", "decision", "--importance", "0.9", "--entered-by", "claude"],
        ["with source and expiry", "--source", "https://x.test/1?q=é", "--expires", "2031-05-06"],
        ["will be archived"],
    ):
        ids.append(ok(invoke("--project", src, "store", *args, "-q")).stdout.strip())
    ok(invoke("--project", src, "show", ids[0]))  # access_count 1, last_accessed_at set
    ok(invoke("--project", src, "archive", ids[2]))
    path = tmp_path / "memories.jsonl"
    exported = ok(invoke("--project", src, "export", path))
    assert "Exported 3 memories" in exported.stderr
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(set(json.loads(line)) == MEMORY_KEYS for line in lines)

    report = ok_json(invoke("--project", dst, "import", path, "--json"))
    assert report == {"added": 3, "skipped_existing": 0, "invalid": []}
    original, copied = _export_lines(invoke, src), _export_lines(invoke, dst)
    assert set(copied) == set(ids)
    for mid in ids:
        a, b = dict(original[mid]), dict(copied[mid])
        assert sorted(a.pop("tags")) == sorted(b.pop("tags"))
        # where it came from is the one field an import does not take from the line: the file is its origin
        assert a.pop("provenance")["origin"] == "local"
        assert b.pop("provenance") | {"at": None} == {
            "origin": "import",
            "by": "memories.jsonl",
            "at": None,
            "review": None,
            "trusted": False,
            "label": "imported from memories.jsonl",
        }
        assert a == b
    assert copied[ids[0]]["access_count"] == 1 and copied[ids[0]]["last_accessed_at"]
    assert copied[ids[1]]["source"] == "https://x.test/1?q=é"
    assert copied[ids[1]]["expires_at"] == "2031-05-06T00:00:00.000Z"
    assert copied[ids[2]]["archived"] is True
    # The copy is searchable, with its tags.
    hits = ok_json(invoke("--project", dst, "search", "full", "--tags", "a,b", "--json"))["results"]
    assert [r["id"] for r in hits] == [ids[0]]


def test_reimport_adds_nothing(cm: Invoke, tmp_path: Path) -> None:
    store(cm, "only once")
    path = tmp_path / "e.jsonl"
    ok(cm("export", path, "--json"))
    assert ok_json(cm("import", path, "--json")) == {"added": 0, "skipped_existing": 1, "invalid": []}
    assert "Imported 0 memories (1 already present)" in ok(cm("import", path)).stdout
    assert ok_json(cm("list", "--json"))["total"] == 1


def test_import_without_ids_dedupes_by_text(cm: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "noid.jsonl", [{"text": "no id given"}, {"text": "another", "tags": ["X"]}])
    assert ok_json(cm("import", path, "--json"))["added"] == 2
    assert ok_json(cm("import", path, "--json")) == {"added": 0, "skipped_existing": 2, "invalid": []}
    mems = ok_json(cm("list", "--json"))["memories"]
    assert all(ID.fullmatch(m["id"]) for m in mems)
    assert {m["text"]: m["tags"] for m in mems}["another"] == ["x"]


def test_export_json_summary_and_stdout(cm: Invoke, tmp_path: Path) -> None:
    mid = store(cm, "exported to stdout")
    assert ok_json(cm("export", tmp_path / "x.jsonl", "--json")) == {"exported": 1, "file": str(tmp_path / "x.jsonl")}
    out = ok(cm("export", "-")).stdout
    assert [json.loads(line)["id"] for line in out.splitlines()] == [mid]


def test_import_from_stdin(cm: Invoke) -> None:
    lines = json.dumps({"id": "mem_abcdef01", "text": "from stdin import"}) + "\n"
    assert "Imported 1 memories" in ok(cm("import", "-", input=lines)).stdout
    assert show(cm, "mem_abcdef01")["text"] == "from stdin import"


def test_import_malformed_line_imports_nothing(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"text": "good one"}) + "\n" + "{not json\n" + json.dumps({"text": "good two"}) + "\n",
        encoding="utf-8",
    )
    assert_error(cm("import", path), "line 2", "nothing imported", code=2)
    assert ok_json(cm("list", "--json"))["total"] == 0
    result = ok(cm("import", path, "--skip-invalid"))
    assert "Imported 2 memories" in result.stdout and "1 invalid" in result.stdout
    assert "line 2" in result.stderr
    assert {m["text"] for m in ok_json(cm("list", "--json"))["memories"]} == {"good one", "good two"}


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"id": "mem_zz", "text": "x"}, "id"),
        ({"text": ""}, "empty"),
        ({"text": "x" * 10_001}, "10,000"),
        ({"text": "x", "category": "bogus"}, "bogus"),
        ({"text": "x", "importance": 7}, "importance"),
        ({"text": "x", "created_at": "yesterday-ish"}, "created_at"),
        ({"text": "x", "tags": "a,b"}, "tags"),
        ({"nope": 1}, "text"),
        (["a list"], "object"),
    ],
)
def test_import_invalid_records_name_the_line(
    cm: Invoke, tmp_path: Path, record: dict[str, Any], fragment: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "fine"}) + "\n\n" + json.dumps(record) + "\n", encoding="utf-8")
    assert_error(cm("import", path), "line 3", fragment, code=2)
    assert ok_json(cm("list", "--json"))["total"] == 0


def test_import_missing_file(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("import", tmp_path / "missing.jsonl"), "no such file", code=2)


def test_export_to_a_directory_is_an_error(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("export", tmp_path), "directory", code=2)


def test_entity_readers_say_how_many_imported_memories_have_no_entities_yet(
    invoke: Invoke, make_project: Callable[[str], Path], tmp_path: Path
) -> None:
    from codememory import Store

    root = make_project("pending")
    dump = tmp_path / "pending.jsonl"
    dump.write_text("".join(json.dumps({"text": f"kafka consumer {i} lags behind"}) + "\n" for i in range(5)))
    with Store.open(root) as opened:
        opened.import_(dump, entities="later")  # as a large import whose entities the daemon has not read yet
    project = ("--project", root)
    for args in (
        ("list", "--entity", "kafka"),
        ("search", "consumer", "--entity", "kafka"),
        ("retrieve", "-e", "kafka"),
        ("stats",),
    ):
        assert ok_json(invoke(*project, *args, "--json"))["entities_pending"] == 5, args
        shown = ok(invoke(*project, *args))
        assert "5 imported memories have no entities yet" in shown.stderr, args
    assert "entities_pending" not in ok_json(invoke(*project, "list", "--json"))  # no entity filter: nothing missed
    ok(invoke(*project, "import", dump))  # any later import reads them
    assert ok_json(invoke(*project, "list", "--entity", "kafka", "--json"))["entities_pending"] == 0
    assert "no entities yet" not in ok(invoke(*project, "list", "--entity", "kafka")).stderr
