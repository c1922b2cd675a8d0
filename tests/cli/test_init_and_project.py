"""`codememory init` and how every command finds its project (--project, CODEMEMORY_PROJECT, walking up)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from support.cli import (
    Invoke,
    assert_error,
    db_file,
    ok,
    ok_json,
)


# ------------------------------------------------------------------------------------- init
def test_init_creates_store_and_gitignore(invoke: Invoke, tmp_path: Path) -> None:
    result = ok(invoke("--project", tmp_path, "init"))
    assert "Initialized" in result.stdout
    assert db_file(tmp_path).is_file()
    gitignore = (tmp_path / ".codememory" / ".gitignore").read_text()
    assert "*.db-wal" in gitignore and "*.db-shm" in gitignore
    conn = sqlite3.connect(db_file(tmp_path))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"memories", "tags", "memory_tags", "memories_fts"} <= tables


def test_init_is_idempotent_and_keeps_memories_and_gitignore(invoke: Invoke, tmp_path: Path) -> None:
    ok(invoke("--project", tmp_path, "init"))
    ok(invoke("--project", tmp_path, "store", "kept across re-init"))
    gitignore = tmp_path / ".codememory" / ".gitignore"
    gitignore.write_text("# my own rules\n")
    again = ok(invoke("--project", tmp_path, "init"))
    assert "already exists" in again.stdout
    assert gitignore.read_text() == "# my own rules\n"
    assert ok_json(invoke("--project", tmp_path, "list", "--json"))["total"] == 1


def test_init_json(invoke: Invoke, tmp_path: Path) -> None:
    first = ok_json(invoke("--project", tmp_path, "init", "--json", "--assistants", "none"))
    assert first | {"steps": None} == {
        "created": True,
        "project": str(tmp_path.resolve()),
        "store": str(db_file(tmp_path.resolve())),
        "assistants": [],
        "steps": None,
        "warnings": [],  # nothing to run by name: nothing to find on PATH
    }
    second = ok_json(invoke("--project", tmp_path, "init", "--json"))
    assert second["created"] is False
    assert second["store"] == first["store"]


def test_project_option_must_exist(invoke: Invoke, tmp_path: Path) -> None:
    assert_error(invoke("--project", tmp_path / "nope", "init"), "does not exist", code=1)


# ------------------------------------------------------------------------- project selection
def test_project_from_environment_variable(invoke: Invoke, make_project: Callable[[str], Path]) -> None:
    root = make_project("envproj")
    mem = ok_json(invoke("store", "chosen by env var", "--json", env={"CODEMEMORY_PROJECT": str(root)}))
    assert ok_json(invoke("--project", root, "list", "--json"))["memories"][0]["id"] == mem["memory"]["id"]


def test_project_option_beats_environment_variable(invoke: Invoke, make_project: Callable[[str], Path]) -> None:
    explicit, from_env = make_project("explicit"), make_project("fromenv")
    ok(invoke("--project", explicit, "store", "goes to explicit", env={"CODEMEMORY_PROJECT": str(from_env)}))
    assert ok_json(invoke("--project", explicit, "list", "--json"))["total"] == 1
    assert ok_json(invoke("--project", from_env, "list", "--json"))["total"] == 0


def test_walks_up_from_subdirectory_to_nearest_store(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = project / "src" / "pkg" / "module"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    ok(invoke("store", "found by walking up"))
    assert not (deep / ".codememory").exists()
    assert [m["text"] for m in ok_json(invoke("--project", project, "list", "--json"))["memories"]] == [
        "found by walking up"
    ]


def test_nearest_store_wins_over_git_root(invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    ok(invoke("--project", repo, "init"))
    nested = repo / "services" / "api"
    nested.mkdir(parents=True)
    ok(invoke("--project", nested, "init"))
    (nested / "handlers").mkdir()
    monkeypatch.chdir(nested / "handlers")
    ok(invoke("store", "belongs to the nested project"))
    assert ok_json(invoke("--project", nested, "list", "--json"))["total"] == 1
    assert ok_json(invoke("--project", repo, "list", "--json"))["total"] == 0


@pytest.mark.parametrize("git_is_file", [False, True], ids=["git-dir", "git-file-worktree"])
def test_init_without_store_uses_git_root(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_is_file: bool
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    if git_is_file:
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    else:
        (repo / ".git").mkdir()
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    data = ok_json(invoke("init", "--json"))
    assert data["project"] == str(repo.resolve())
    assert db_file(repo).is_file()
    assert not (sub / ".codememory").exists()
