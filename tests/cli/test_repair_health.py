"""`codememory repair` on a healthy store says so and changes nothing (no backup; `--force` rebuilds anyway), and
a store that another command sends the user to repair for is never called healthy (real store files, damaged as
an attacker's or a crashed writer's sqlite3 would)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from codememory import Store
from conftest import Invoke

HINT = "codememory repair"


def db_file(project: Path) -> Path:
    return project / ".codememory" / "memory.db"


def backups(project: Path) -> list[str]:
    return sorted(p.name for p in db_file(project).parent.iterdir() if ".bak-" in p.name)


def dump(project: Path) -> list[str]:
    """Everything the store holds, as SQL text (read-only)."""
    with closing(sqlite3.connect(f"file:{db_file(project)}?mode=ro", uri=True)) as conn:
        return list(conn.iterdump())


def repair_json(invoke: Invoke, project: Path, *args: str) -> dict[str, Any]:
    result = invoke("--project", project, "repair", "--json", *args)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def seed(project: Path) -> None:
    with Store.open(project) as store:
        first = store.add("Use httpx for HTTP calls", tags="http,python", category="decision").memory
        second = store.add("Requests is not used any more", tags="http", supersedes=[first.id]).memory
        store.add("Pin ruff in CI", importance=0.9, source="session:abc turn:3")
        store.link(second.id, first.id, "refines")
        store.checkpoint(tool="cursor", slug="http-client", goal="Pick an HTTP client", decisions=["httpx"])


def tamper(project: Path, *statements: str) -> None:
    """Run SQL on the store as another sqlite3 would (CHECK constraints off)."""
    with closing(sqlite3.connect(db_file(project))) as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        for statement in statements:
            conn.execute(statement)
        conn.commit()


def test_a_healthy_store_is_called_healthy_and_left_as_it_is(project: Path, invoke: Invoke) -> None:
    seed(project)
    before = dump(project)
    result = invoke("--project", project, "repair")
    assert result.exit_code == 0, result.output
    assert "is healthy" in result.stdout and "Nothing was changed and no backup made" in result.stdout
    assert "repair --force" in result.stdout
    assert backups(project) == [] and dump(project) == before

    report = repair_json(invoke, project)
    assert (report["healthy"], report["rebuilt"], report["problems"], report["backup"]) == (True, False, [], None)
    assert report["memories"] == {"kept": 3, "skipped": 0, "unreadable": 0}
    assert backups(project) == [] and dump(project) == before
    assert not list(db_file(project).parent.glob("*.repair-*"))  # the rebuilt copy it checked with is gone

    forced = repair_json(invoke, project, "--force")
    assert (forced["healthy"], forced["rebuilt"]) == (True, True)
    assert backups(project) == [Path(forced["backup"]).name]


# (statements that damage the store, the command that then advises repair, what repair says it found)
DAMAGE = [
    pytest.param(
        ["UPDATE memories SET category = 'gossip' WHERE text LIKE 'Pin ruff%'"],
        ["export", "-"],
        "memories: invalid rows: 1",
        id="a-row-the-store-skips",
    ),
    pytest.param(
        ["INSERT INTO tags(name) VALUES ('two words')", "INSERT INTO memory_tags SELECT 1, max(id) FROM tags"],
        ["export", "-"],
        "tags: invalid rows: 1",
        id="a-tag-the-store-drops",
    ),
    pytest.param(
        ["UPDATE memories SET importance = 7 WHERE text LIKE 'Pin ruff%'"],
        None,  # read as the default importance, silently: still not what the store holds
        "memories: rows with invalid values: 1",
        id="a-value-the-store-reads-as-its-default",
    ),
    pytest.param(
        ["CREATE TRIGGER wreck AFTER INSERT ON memories BEGIN DELETE FROM memories_fts_data; END"],
        ["list", "--json"],
        "holds trigger 'wreck' on 'memories'",
        id="a-foreign-trigger",
    ),
    pytest.param(
        [
            "INSERT INTO memories_fts(memories_fts, rowid, text) SELECT 'delete', pk, text FROM memories "
            "WHERE text LIKE 'Pin ruff%'"
        ],
        None,  # the memory is just never found by keyword: no command can tell
        "its full-text index memories_fts does not match its rows",
        id="a-full-text-index-missing-a-memory",
    ),
    pytest.param(
        ["UPDATE memories_fts_data SET block = randomblob(length(block)) WHERE id > 1"],
        ["search", "httpx"],
        "its full-text index memories_fts does not match its rows",
        id="a-damaged-full-text-index",
    ),
]


@pytest.mark.parametrize(("statements", "advised_by", "found"), DAMAGE)
def test_a_store_that_needs_repair_is_never_called_healthy(
    project: Path,
    invoke: Invoke,
    console_script: Path,
    statements: list[str],
    advised_by: list[str] | None,
    found: str,
) -> None:
    seed(project)
    tamper(project, *statements)
    if advised_by is not None:  # the installed script in its own process: its warnings are its own, not the suite's
        told = subprocess.run(
            [console_script, "--project", project, *advised_by], capture_output=True, text=True, timeout=60
        )
        assert HINT in told.stderr, (told.returncode, told.stderr)
    result = invoke("--project", project, "repair")
    assert result.exit_code == 0, result.output
    assert "is healthy" not in result.stdout and "It needed repair:" in result.stdout
    assert found in result.stdout, result.stdout
    assert len(backups(project)) == 1
    again = repair_json(invoke, project)  # the rebuilt store is what repair makes: healthy
    assert (again["healthy"], again["rebuilt"], again["problems"]) == (True, False, [])


def test_a_store_another_process_holds_locked_is_not_called_damaged_nor_swapped(project: Path, invoke: Invoke) -> None:
    """FTS5's check writes (rolled back): a writer holding the lock makes it fail with 'database is locked', which
    says nothing about the index. Called damage, repair swapped the file under the writer: its commit would have
    landed in the backup."""
    seed(project)
    before = dump(project)
    with closing(sqlite3.connect(db_file(project), isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE memories SET importance = 0.2 WHERE text LIKE 'Pin ruff%'")
        result = invoke("--project", project, "repair", "--json")
        writer.execute("COMMIT")
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert "locked by another process" in result.output and "try again" in result.output
    assert backups(project) == [] and not list(db_file(project).parent.glob("*.repair-*"))
    assert dump(project) != before  # the writer's commit is in the store, not in a backup
    assert repair_json(invoke, project)["healthy"] is True
