"""`codememory init` and how every command finds its project (--project, CODEMEMORY_PROJECT, walking up)."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from codememory.service.share_files import EARLIER_GITIGNORES, GITIGNORE, SHARE_GITIGNORE
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
    assert (tmp_path / ".codememory" / ".gitignore").read_text() == GITIGNORE
    conn = sqlite3.connect(db_file(tmp_path))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"memories", "tags", "memory_tags", "memories_fts"} <= tables


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.slow
def test_git_add_after_init_commits_nothing_binary(invoke: Invoke, tmp_path: Path) -> None:
    """`git add -A` right after `init` and some use: the store, its WAL and caches stay out of git; only text is
    staged, and of .codememory/ only what may be committed (its .gitignore and settings)."""
    git(tmp_path, "init", "-q")
    (tmp_path / "app.py").write_text("print('hi')\n")
    ok(invoke("--project", tmp_path, "init", "--assistants", "all", "--no-global"))
    ok(invoke("--project", tmp_path, "store", "Use httpx, not requests"))
    (tmp_path / ".codememory" / "config.toml").write_text("[search]\nneighbour_weight = 0.4\n")
    (tmp_path / ".codememory" / "cache" / "vectors").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".codememory" / "cache" / "vectors" / "x.npy").write_bytes(b"\x93NUMPY\x00\x01")
    assert db_file(tmp_path).is_file()
    git(tmp_path, "add", "-A")
    staged = git(tmp_path, "diff", "--cached", "--name-only", "-z").split("\0")
    staged = [name for name in staged if name]
    assert "app.py" in staged
    assert sorted(n for n in staged if n.startswith(".codememory/")) == [
        ".codememory/.gitignore",
        ".codememory/config.toml",
    ]
    binary = [name for name in staged if b"\0" in (tmp_path / name).read_bytes()]
    assert binary == []
    # `git check-ignore` agrees for what a store holds over time
    for name in ("memory.db", "memory.db-wal", "memory.db-shm", "memory.db-journal", "cache/x", "logs/hooks.log"):
        assert git(tmp_path, "check-ignore", f".codememory/{name}").strip() == f".codememory/{name}"
    # a store committed anyway (by an earlier version, or by force) is pointed out, sharing or not
    git(tmp_path, "add", "-f", ".codememory/memory.db")
    (warning,) = ok_json(invoke("--project", tmp_path, "share", "status", "--json"))["warnings"]
    assert "git rm --cached .codememory/memory.db" in warning and "share on" in warning


def test_init_replaces_the_gitignore_an_earlier_version_wrote(invoke: Invoke, tmp_path: Path) -> None:
    """Earlier versions left memory.db to git; their .gitignore is replaced, by init and by share on alike."""
    for command in (["init"], ["share", "on"]):
        folder = tmp_path / command[0]
        folder.mkdir()
        ok(invoke("--project", folder, "init"))
        (folder / ".codememory" / ".gitignore").write_text(EARLIER_GITIGNORES[0])
        ok(invoke("--project", folder, *command))
        expected = GITIGNORE if command == ["init"] else SHARE_GITIGNORE
        assert (folder / ".codememory" / ".gitignore").read_text() == expected


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
