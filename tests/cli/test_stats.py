"""`codememory stats`: the counts, with and without --tags/--agents."""

from __future__ import annotations

from pathlib import Path

from support.cli import (
    Invoke,
    db_file,
    import_expired,
    ok,
    ok_json,
    store,
)


# -------------------------------------------------------------------------------------- stats
def test_stats(cm: Invoke, tmp_path: Path, project: Path) -> None:
    store(cm, "docker one", "--tags", "docker,ci", "--entered-by", "claude")
    store(cm, "docker two", "--tags", "Docker", "--entered-by", "claude", "--category", "gotcha")
    archived = store(cm, "third", "--entered-by", "codex")
    ok(cm("archive", archived))
    import_expired(cm, tmp_path)
    data = ok_json(cm("stats", "--json"))
    assert {"total", "live", "expired", "archived", "size_bytes"} <= set(data)
    assert (data["total"], data["live"], data["expired"], data["archived"]) == (4, 2, 1, 1)
    assert data["size_bytes"] >= db_file(project).stat().st_size > 0
    assert "tags" not in data and "agents" not in data
    full = ok_json(cm("stats", "--tags", "--agents", "--json"))
    assert full["tags"] == {"docker": 2, "ci": 1}
    assert full["agents"] == {"claude": 2, "codex": 1, "(unknown)": 1}
    text = ok(cm("stats", "--tags", "--agents")).stdout
    assert "4 total, 2 live, 1 expired, 1 archived" in text
    assert "docker" in text and "claude" in text


def test_stats_empty_store(cm: Invoke) -> None:
    data = ok_json(cm("stats", "--json"))
    assert (data["total"], data["live"], data["expired"], data["archived"]) == (0, 0, 0, 0)
    assert "0 total" in ok(cm("stats")).stdout
