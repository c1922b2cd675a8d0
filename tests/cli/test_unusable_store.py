"""Every command refuses a missing, corrupt or newer-schema store with one clear line, never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from support.cli import (
    Invoke,
    assert_error,
    db_file,
)

# ------------------------------------------------------------------------- unusable stores
READ_COMMANDS = [
    ["search", "x"],
    ["list"],
    ["stats"],
    ["store", "x"],
    ["show", "mem_00000000"],
    ["export", "-"],
    ["prune", "--dry-run"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_missing_store_says_run_init(invoke: Invoke, tmp_path: Path, args: list[str]) -> None:
    assert_error(invoke("--project", tmp_path, *args), "run `codememory init`", code=1)
    assert not (tmp_path / ".codememory").exists()


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_corrupt_store_is_refused_clearly(invoke: Invoke, project: Path, args: list[str]) -> None:
    for side in db_file(project).parent.glob("memory.db-*"):
        side.unlink()
    db_file(project).write_bytes(bytes(range(256)) * 64)
    assert_error(invoke("--project", project, *args), "corrupt", str(db_file(project)), code=1)


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_newer_schema_is_refused_clearly(invoke: Invoke, project: Path, args: list[str]) -> None:
    conn = sqlite3.connect(db_file(project))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    assert_error(invoke("--project", project, *args), "999", "newer", "upgrade codememory", code=1)
    conn = sqlite3.connect(db_file(project))
    assert conn.execute("PRAGMA user_version").fetchone() == (999,)
    conn.close()


def test_init_on_corrupt_store_is_refused(invoke: Invoke, project: Path) -> None:
    db_file(project).write_bytes(b"\xde\xad\xbe\xef" * 2048)
    assert_error(invoke("--project", project, "init"), "corrupt", code=1)
    assert db_file(project).read_bytes() == b"\xde\xad\xbe\xef" * 2048
