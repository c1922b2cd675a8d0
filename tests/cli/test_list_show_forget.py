"""`codememory list`, `show`, `forget`, `archive` and `prune`: sorting, filters, access counts, and deletion
that leaves no trace."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import MEMORY_KEYS
from support.cli import (
    A,
    B,
    C,
    Invoke,
    assert_error,
    db_file,
    import_expired,
    list_ids,
    ok,
    ok_json,
    search_ids,
    show,
    store,
    write_jsonl,
)


# --------------------------------------------------------------------------------------- list
def test_list_default_newest_first_with_json_totals(sortable: Invoke) -> None:
    data = ok_json(sortable("list", "--json"))
    assert set(data) == {"count", "total", "memories", "personal"}
    assert (data["count"], data["total"]) == (3, 3)
    assert [m["id"] for m in data["memories"]] == [C, B, A]
    assert set(data["memories"][0]) == MEMORY_KEYS


@pytest.mark.parametrize(
    ("sort", "ascending"),
    [
        ("created", [A, B, C]),
        ("updated", [B, C, A]),
        ("expires", [C, A, B]),
        ("importance", [A, C, B]),
        ("accessed", [B, A, C]),
        ("content", [C, B, A]),
    ],
)
def test_list_sort_keys(sortable: Invoke, sort: str, ascending: list[str]) -> None:
    assert list_ids(sortable, "--sort", sort, "--order", "asc") == ascending
    assert list_ids(sortable, "--sort", sort, "--order", "desc") == ascending[::-1]
    assert list_ids(sortable, "--sort", sort) == ascending[::-1]  # desc is the default


def test_list_sort_puts_missing_values_last(sortable: Invoke) -> None:
    never = store(sortable, "never expires, never accessed")
    assert list_ids(sortable, "--sort", "expires", "--order", "asc") == [C, A, B, never]
    assert list_ids(sortable, "--sort", "expires", "--order", "desc") == [B, A, C, never]
    assert list_ids(sortable, "--sort", "accessed", "--order", "asc") == [B, A, C, never]


def test_list_limit_offset(sortable: Invoke) -> None:
    data = ok_json(sortable("list", "--sort", "created", "--order", "asc", "--limit", "1", "--offset", "1", "--json"))
    assert [m["id"] for m in data["memories"]] == [B]
    assert (data["count"], data["total"]) == (1, 3)
    assert list_ids(sortable, "--offset", "5") == []


def test_list_filters(sortable: Invoke, tmp_path: Path) -> None:
    cm = sortable
    assert set(list_ids(cm, "--tags", "red")) == {A, C}
    assert list_ids(cm, "--tags", "red,green") == [C]
    assert set(list_ids(cm, "--any-tag", "green,yellow")) == {B, C}
    assert set(list_ids(cm, "--entered-by", "alice")) == {A, C}
    assert list_ids(cm, "--category", "decision") == [B]
    assert set(list_ids(cm, "--after", "2025-02-01")) == {B, C}
    assert list_ids(cm, "--before", "2025-02-01") == [A]
    filtered = ok_json(cm("list", "--tags", "red", "--limit", "1", "--json"))
    assert (filtered["count"], filtered["total"]) == (1, 2)
    expired = import_expired(cm, tmp_path)
    ok(cm("archive", B))
    assert set(list_ids(cm)) == {A, C}
    assert set(list_ids(cm, "--include-expired")) == {A, C, expired}
    assert set(list_ids(cm, "--include-archived")) == {A, B, C}


def test_list_does_not_count_as_access(sortable: Invoke) -> None:
    ok(sortable("list"))
    assert {m["id"]: m["access_count"] for m in ok_json(sortable("list", "--json"))["memories"]} == {
        A: 3,
        B: 1,
        C: 2,
    }


def test_list_plain_and_markdown_and_empty(cm: Invoke) -> None:
    empty = ok(cm("list"))
    assert empty.stdout == "" and "No memories" in empty.stderr
    mid = store(cm, "listed memory", "--tags", "ops")
    out = ok(cm("list")).stdout
    assert mid in out and "listed memory" in out and "#ops" in out
    md = ok(cm("list", "--markdown")).stdout
    assert md.startswith("## Memories") and f"`{mid}`" in md and "> listed memory" in md


def test_list_rejects_unknown_sort(cm: Invoke) -> None:
    result = cm("list", "--sort", "random")
    assert result.exit_code == 2 and "Traceback" not in result.output


# --------------------------------------------------------------------------------------- show
def test_show_updates_access_count(cm: Invoke) -> None:
    mid = store(cm, "shown twice", "--source", "session-7")
    first = show(cm, mid)
    second = show(cm, mid)
    assert (first["access_count"], second["access_count"]) == (1, 2)
    assert second["last_accessed_at"] >= first["last_accessed_at"]
    assert set(first) == MEMORY_KEYS | {"links", "entities", "staleness", "usefulness", "personal"}


def test_show_plain_markdown_and_several_ids(cm: Invoke) -> None:
    one = store(cm, "first shown", "--tags", "x", "--source", "commit abc")
    two = store(cm, "second shown")
    out = ok(cm("show", one)).stdout
    assert one in out and "first shown" in out and "commit abc" in out
    md = ok(cm("show", one, "--markdown")).stdout
    assert f"`{one}`" in md and "> first shown" in md and "source: commit abc" in md
    both = ok_json(cm("show", one, two, "--json"))
    assert [m["id"] for m in both] == [one, two]


@pytest.mark.parametrize("command", ["show", "forget", "archive"])
def test_unknown_id(cm: Invoke, command: str) -> None:
    store(cm, "something")
    assert_error(cm(command, "mem_00000000"), "mem_00000000", code=1)


@pytest.mark.parametrize("command", ["show", "forget", "archive"])
@pytest.mark.parametrize("bad", ["abc", "mem_XYZ", "mem_123", "12345678"])
def test_malformed_id(cm: Invoke, command: str, bad: str) -> None:
    assert_error(cm(command, bad), "not a memory id", code=2)


# ----------------------------------------------------------------------------- forget/archive
def test_forget_removes_text_everywhere(cm: Invoke, project: Path) -> None:
    keep = store(cm, "keep this ordinary note")
    gone = store(cm, "quetzalcoatl zebrafish secret rotation key")
    assert search_ids(cm, "zebrafish") == [gone]
    result = ok(cm("forget", gone))
    assert gone in result.stdout
    assert search_ids(cm, "zebrafish") == []
    assert search_ids(cm, "zebrafsh") == []  # not even fuzzily
    assert list_ids(cm, "--include-expired", "--include-archived") == [keep]
    assert_error(cm("show", gone), code=1)
    conn = sqlite3.connect(db_file(project))
    try:
        assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zebrafish'").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memories WHERE text LIKE '%zebrafish%'").fetchone() == (0,)
    finally:
        conn.close()


def test_forget_leaves_no_trace_in_the_file(cm: Invoke, project: Path) -> None:
    store(cm, "ordinary filler note")
    gone = store(cm, "quetzalcoatlus-zebrafish-secret")
    ok(cm("forget", gone))
    for path in db_file(project).parent.glob("memory.db*"):
        assert b"quetzalcoatlus" not in path.read_bytes(), path.name


def test_forget_json_and_partial_unknown(cm: Invoke) -> None:
    one, two = store(cm, "one to forget"), store(cm, "two to forget")
    data = ok_json(cm("forget", one, "--json"))
    assert data == {"forgotten": [one], "unknown": []}
    result = cm("forget", two, "mem_00000000")
    assert result.exit_code == 1 and "mem_00000000" in result.stderr
    assert f"Forgotten {two}" in result.stdout
    assert list_ids(cm) == []


def test_archive_and_undo(cm: Invoke) -> None:
    mid = store(cm, "archived knowledge about grpc")
    assert f"Archived {mid}" in ok(cm("archive", mid)).stdout
    assert search_ids(cm, "grpc") == []
    assert list_ids(cm) == []
    assert list_ids(cm, "--include-archived") == [mid]
    assert show(cm, mid)["archived"] is True  # still there, just hidden
    data = ok_json(cm("archive", mid, "--undo", "--json"))
    assert data == {"unarchived": [mid], "unknown": []}
    assert search_ids(cm, "grpc") == [mid]
    assert show(cm, mid)["archived"] is False


# -------------------------------------------------------------------------------------- prune
@pytest.fixture
def prunable(cm: Invoke, tmp_path: Path) -> tuple[str, str, str]:
    records = [
        {"id": "mem_e0000001", "text": "expired one", "created_at": "2024-01-01T00:00:00Z", "expires_at": "2024-06-01"},
        {"id": "mem_e0000002", "text": "expired two", "created_at": "2024-01-02T00:00:00Z", "expires_at": "2024-06-02"},
        {"id": "mem_01d00001", "text": "old but not expired", "created_at": "2024-01-03T00:00:00Z"},
    ]
    ok(cm("import", write_jsonl(tmp_path / "prunable.jsonl", records)))
    fresh = store(cm, "fresh and valid", "--expires", "2099-01-01")
    return "mem_e0000001", "mem_e0000002", fresh


def all_ids(cm: Invoke) -> set[str]:
    return set(list_ids(cm, "--include-expired", "--include-archived", "--limit", "1000"))


def test_prune_dry_run_deletes_nothing(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    before = all_ids(cm)
    result = ok(cm("prune", "--dry-run"))
    assert "Would delete 2 memories." in result.stdout
    assert "expired one" in result.stdout and "expired two" in result.stdout
    assert all_ids(cm) == before
    data = ok_json(cm("prune", "--dry-run", "--json"))
    assert data["dry_run"] is True and data["count"] == 2
    assert {m["id"] for m in data["memories"]} == {prunable[0], prunable[1]}


def test_prune_without_force_and_no_tty_refuses(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    before = all_ids(cm)
    assert_error(cm("prune"), "--force", "2", code=2)
    assert all_ids(cm) == before


def test_prune_force_deletes_only_expired(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    result = ok(cm("prune", "--force"))
    assert "Deleted 2 memories." in result.stdout
    assert all_ids(cm) == {"mem_01d00001", prunable[2]}
    assert ok(cm("prune", "--force")).stdout.strip() == "Deleted 0 memories."


def test_prune_nothing_to_do_needs_no_force(cm: Invoke) -> None:
    store(cm, "nothing expired")
    assert "Deleted 0 memories." in ok(cm("prune")).stdout


def test_prune_before_also_deletes_old_memories(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    dry = ok_json(cm("prune", "--before", "2025-01-01", "--dry-run", "--json"))
    assert {m["id"] for m in dry["memories"]} == {prunable[0], prunable[1], "mem_01d00001"}
    data = ok_json(cm("prune", "--before", "2025-01-01", "--force", "--json"))
    assert data["dry_run"] is False and data["count"] == 3
    assert all_ids(cm) == {prunable[2]}
    assert_error(cm("prune", "--before", "whenever-ish"), "whenever-ish", code=2)


def test_show_marks_a_personal_memory_and_share_status_counts_it_in_the_singular(cm: Invoke) -> None:
    """A user trial: neither `show` nor its JSON said a memory was personal, and `share status` said "1 personal
    memories"."""
    personal = ok(cm("store", "-q", "--personal", "my editor is helix")).stdout.strip()
    shared = ok(cm("store", "-q", "--shared", "the API listens on port 8000")).stdout.strip()
    assert ok_json(cm("show", personal, "--json"))["personal"] is True
    assert ok_json(cm("show", shared, "--json"))["personal"] is False
    assert "personal:" in ok(cm("show", personal)).stdout and "personal:" not in ok(cm("show", shared)).stdout
    assert "1 personal memory stays on this machine." in ok(cm("share", "status")).stdout
    assert ok_json(cm("list", "--json"))["personal"] == [personal]
    lines = ok(cm("list")).stdout.splitlines()
    assert "personal" in next(x for x in lines if personal in x) and "personal" not in next(
        x for x in lines if shared in x
    )


def test_link_prints_json_with_json(cm: Invoke) -> None:
    first = ok(cm("store", "-q", "the API listens on port 8000")).stdout.strip()
    second = ok(cm("store", "-q", "the API listens on port 8080 since the proxy moved")).stdout.strip()
    linked = ok_json(cm("link", second, first, "--type", "supersedes", "--json"))
    assert linked == {"from": second, "type": "supersedes", "to": first}
