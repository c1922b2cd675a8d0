"""Team sharing through git, end to end: two clones of one real repository (a bare origin and two working copies,
driven by the real `git`), each with its own store, exchanging memories through the text form in
`.codememory/memories/` with nothing but commits, pulls and the store opening."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codememory.service.project_store import Store
from conftest import invoke_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)
    if check:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


def cli_json(root: Path, *args: str) -> Any:
    result = invoke_cli("--project", root, *args, "--json")
    assert result.exit_code == 0, (args, result.output, result.stderr)
    return json.loads(result.stdout)


def clone(tmp_path: Path, origin: Path, name: str) -> Path:
    git(tmp_path, "clone", "-q", str(origin), name)
    root = tmp_path / name
    git(root, "config", "user.email", f"{name}@example.com")
    git(root, "config", "user.name", name)
    git(root, "config", "pull.rebase", "false")
    return root


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, check=False)  # nothing to commit is fine


def pull(root: Path, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    return git(root, "pull", "-q", "--no-edit", "origin", "main", check=check)


def memories(root: Path) -> dict[str, str]:
    """{id: text} of every live memory, as the store sees it right after opening (which follows the files)."""
    with Store.open(root) as store:
        return {m.id: m.text for m in store.list(limit=1000, include_archived=True)}


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path]:
    """Two clones (alice, bob) of one origin; alice set sharing up and pushed it, bob cloned it and shares too."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    alice = clone(tmp_path, origin, "alice")
    (alice / "README.md").write_text("# shop\n")
    assert invoke_cli("--project", alice, "init", "--assistants", "none", "--no-global").exit_code == 0
    on = cli_json(alice, "share", "on")
    assert on["sharing"] is True and on["gitignore"] == "written"
    commit_all(alice, "project with shared memory")
    git(alice, "push", "-q", "origin", "HEAD:main")
    bob = clone(tmp_path, origin, "bob")
    assert (bob / ".codememory" / ".gitignore").is_file() and not (bob / ".codememory" / "memory.db").exists()
    assert cli_json(bob, "share", "on")["sharing"] is True
    return alice, bob


def test_two_clones_converge_through_plain_git(team: tuple[Path, Path]) -> None:
    alice, bob = team
    with Store.open(alice) as store:
        httpx = store.add("Use httpx, not requests, for outbound HTTP calls", category="decision", tags="http").memory
        pool = store.add("The Postgres pool size is 20 in production", category="fact").memory
        tabs = store.add("I prefer tabs in my editor", category="preference").memory  # personal by default
    with Store.open(bob) as store:
        sqlite = store.add("Tests run against SQLite, never the staging Postgres", category="convention").memory
        mine = store.add("My scratch notes live in ~/notes/shop.md", personal=True).memory
    # memory.db, its WAL and SHM never reach git; the memory files do
    commit_all(alice, "alice's memories")
    git(alice, "push", "-q", "origin", "HEAD:main")
    commit_all(bob, "bob's memories")
    pull(bob)  # a merge: both added files, no conflict
    git(bob, "push", "-q", "origin", "HEAD:main")
    pull(alice)
    tracked = git(alice, "ls-files", ".codememory").stdout.split()
    assert ".codememory/.gitignore" in tracked and not any("memory.db" in t for t in tracked)
    assert {Path(t).stem for t in tracked if t.startswith(".codememory/memories/")} == {httpx.id, pool.id, sqlite.id}

    shared = {httpx.id, pool.id, sqlite.id}
    assert set(memories(alice)) == shared | {tabs.id}
    assert set(memories(bob)) == shared | {mine.id}

    # alice edits one memory, bob forgets another; each commits, they pull and merge
    new_text = "Use httpx, not requests, for outbound HTTP calls: we need HTTP/2"
    with Store.open(alice) as store:
        store.edit(httpx.id, text=new_text, tags="http,deps")
    with Store.open(bob) as store:
        assert store.forget([pool.id])[0] == [pool.id]
    commit_all(alice, "edit")
    git(alice, "push", "-q", "origin", "HEAD:main")
    commit_all(bob, "forget")
    pull(bob)
    git(bob, "push", "-q", "origin", "HEAD:main")
    pull(alice)

    for root, own in ((alice, tabs.id), (bob, mine.id)):
        seen = memories(root)
        assert set(seen) == {httpx.id, sqlite.id, own}, root.name
        assert seen[httpx.id] == new_text
        with Store.open(root) as store:
            assert [h.memory.id for h in store.search("HTTP/2 httpx").hits] == [httpx.id]
            assert store.get(httpx.id).tags == ["deps", "http"]
    tombstone = json.loads((alice / ".codememory" / "memories" / pool.id[4:6] / f"{pool.id}.json").read_text())
    assert tombstone == {"format": 1, "id": pool.id, "forgotten_at": tombstone["forgotten_at"]}  # no text


def test_the_same_memory_edited_on_both_sides_is_a_readable_conflict_the_store_waits_out(
    team: tuple[Path, Path],
) -> None:
    alice, bob = team
    with Store.open(alice) as store:
        memory = store.add("The deploy window is Tuesday morning", category="fact").memory
    commit_all(alice, "deploy window")
    git(alice, "push", "-q", "origin", "HEAD:main")
    pull(bob)
    assert memories(bob)[memory.id] == "The deploy window is Tuesday morning"

    with Store.open(alice) as store:
        store.edit(memory.id, text="The deploy window is Tuesday afternoon")
    with Store.open(bob) as store:
        store.edit(memory.id, text="The deploy window is Thursday morning")
    commit_all(alice, "afternoon")
    git(alice, "push", "-q", "origin", "HEAD:main")
    commit_all(bob, "thursday")
    merge = pull(bob, check=False)
    assert merge.returncode != 0 and "CONFLICT" in merge.stdout + merge.stderr

    path = bob / ".codememory" / "memories" / memory.id[4:6] / f"{memory.id}.json"
    conflict = path.read_text()
    assert "<<<<<<<" in conflict and '"text": "The deploy window is Thursday morning"' in conflict
    assert len(conflict.splitlines()) < 40  # one key a line: the conflict is over the lines that differ
    # the store reports the file and keeps its own version until it is resolved
    report = cli_json(bob, "sync")
    assert [s["file"] for s in report["skipped"]] == [f".codememory/memories/{memory.id[4:6]}/{memory.id}.json"]
    assert "conflict" in report["skipped"][0]["error"]
    assert memories(bob)[memory.id] == "The deploy window is Thursday morning"
    with Store.open(bob) as store:  # no write of that memory while its file is in conflict
        store.archive([memory.id])
    assert "<<<<<<<" in path.read_text()

    git(bob, "checkout", "--theirs", "--", str(path.relative_to(bob)))  # take alice's
    git(bob, "add", str(path.relative_to(bob)))
    git(bob, "commit", "-q", "--no-edit")
    assert memories(bob)[memory.id] == "The deploy window is Tuesday afternoon"  # applied on open
    git(bob, "push", "-q", "origin", "HEAD:main")
    pull(alice)
    assert memories(alice)[memory.id] == memories(bob)[memory.id]


def test_a_fresh_clone_gets_the_team_memory_without_init(team: tuple[Path, Path], tmp_path: Path) -> None:
    alice, _ = team
    with Store.open(alice) as store:
        memory = store.add("Feature flags live in config/flags.yaml", category="convention").memory
    commit_all(alice, "flags")
    git(alice, "push", "-q", "origin", "HEAD:main")
    carol = clone(tmp_path, tmp_path / "origin.git", "carol")
    found = cli_json(carol, "search", "feature flags")
    assert [r["id"] for r in found["results"]] == [memory.id]
    # carol does not share: her own memories stay out of the text form
    with Store.open(carol) as store:
        own = store.add("Carol's note about the flags service").memory
    assert not (carol / ".codememory" / "memories" / own.id[4:6] / f"{own.id}.json").exists()
    assert git(carol, "status", "--porcelain").stdout == ""  # and nothing of hers is left for git to take
