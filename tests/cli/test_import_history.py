"""`codememory import-history`: a HOME holding past sessions of Claude Code, Codex and Gemini CLI (transcripts the real
CLIs wrote, placed where each keeps them: support.history_home) is imported into the project's store through the same
capture and extraction a live session goes through; a second run adds nothing; --since, --limit, --dry-run and --json
say and bound what is done; secrets typed into a session never reach the store; `init` offers the import."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from codememory.core.project import db_path, store_dir
from support.cli import Invoke, assert_error, ok, ok_json
from support.history_home import env_for, fill_home, place_session

SECRET = "sk-proj-" + "Zq8wX2vB4nM6kL1jH3gF5dS7aP9oI0uY2tR4eW6q"  # split: not a real key for scanners


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    for key, value in env_for(folder).items():
        monkeypatch.setenv(key, value)
    return folder


def counts(project: Path) -> tuple[int, int, int]:
    """(captured turns, memories, extraction runs) in the project's store file."""
    with closing(sqlite3.connect(db_path(project))) as db:
        return tuple(  # type: ignore[return-value]
            db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("captured_turns", "memories", "extractions")
        )


@pytest.mark.slow
def test_fifty_past_sessions_of_three_tools_are_imported_once(
    cm: Invoke, project: Path, home: Path, tmp_path: Path
) -> None:
    made = fill_home(home, project, 50)
    other = tmp_path / "elsewhere"
    (other / ".git").mkdir(parents=True)
    place_session(home, other, "codex")  # another project's session: never imported here
    turns = {"claude": 6, "codex": 2, "gemini": 2}  # finished turns in each recording

    dry = ok_json(cm("import-history", "--dry-run", "--json"))
    assert (dry["found"], dry["to_import"], dry["dry_run"]) == (50, 50, True)
    assert dry["by_assistant"] == {"claude": 17, "codex": 17, "gemini": 16}
    assert {s["session_id"] for s in dry["sessions"]} == {session for _, session, _ in made}
    assert counts(project) == (0, 0, 0)  # a dry run changes nothing

    first = ok_json(cm("import-history", "--json"))
    expected_turns = sum(turns[assistant] for assistant, _, _ in made)
    assert (first["found"], first["to_import"], first["turns_captured"]) == (50, 50, expected_turns)
    assert all(s["status"] == "new" and s["error"] is None for s in first["sessions"])
    assert first["memories_created"] > 0
    captured, memories, runs = counts(project)
    assert (captured, memories) == (expected_turns, first["memories_created"])
    assert runs >= 50  # every session extracted, as if it had just ended

    again = ok_json(cm("import-history", "--json"))
    assert (again["found"], again["to_import"], again["turns_captured"], again["memories_created"]) == (50, 0, 0, 0)
    assert {s["status"] for s in again["sessions"]} == {"imported"}
    assert counts(project) == (captured, memories, runs)  # every session counted once

    text = ok(cm("import-history")).stdout
    assert "Found 50 past sessions of this project (17 claude, 17 codex, 16 gemini); 0 not imported yet." in text


@pytest.mark.slow
def test_since_and_limit_bound_the_import_newest_first(cm: Invoke, project: Path, home: Path) -> None:
    made = fill_home(home, project, 6)  # one a day going back from 2026-11-18
    newest = [session for _, session, _ in made]

    limited = ok_json(cm("import-history", "--limit", "2", "--json"))
    assert [s["session_id"] for s in limited["sessions"]] == newest[:2]
    assert limited["to_import"] == 2 and limited["turns_captured"] == 6 + 2

    since = ok_json(cm("import-history", "--since", "2026-11-15T00:00:00Z", "--dry-run", "--json"))
    assert [s["session_id"] for s in since["sessions"]] == newest[:4]  # 11-18, 17, 16, 15
    assert [s["status"] for s in since["sessions"]] == ["imported", "imported", "new", "new"]
    assert since["to_import"] == 2


def test_secrets_typed_into_a_past_session_never_reach_the_store(cm: Invoke, project: Path, home: Path) -> None:
    said = "Please add the limiter."
    place_session(home, project, "codex", replace={said: f"{said} The staging key is {SECRET} for now."})
    report = ok_json(cm("import-history", "--json"))
    assert report["turns_captured"] == 2
    logs = "".join(p.read_text(encoding="utf-8") for p in (store_dir(project) / "memory").glob("*.md"))
    assert "Please add the limiter" in logs and SECRET not in logs
    for path in store_dir(project).rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_bad_input_is_one_line_without_a_traceback(cm: Invoke, project: Path, home: Path) -> None:
    assert_error(cm("import-history", "--since", "the day after never"), "--since")
    bad_limit = cm("import-history", "--limit", "0")
    assert bad_limit.exit_code == 2 and "Traceback" not in bad_limit.output and "--limit" in bad_limit.stderr


def test_a_broken_transcript_is_reported_and_the_rest_imported(cm: Invoke, project: Path, home: Path) -> None:
    _, good = place_session(home, project, "gemini")
    broken = good.with_name("session-2026-11-27T07-09-broken00.jsonl")
    broken.write_bytes(b"\x00\xff not json\n")
    result = cm("import-history", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert report["found"] == 1 and report["turns_captured"] == 2  # the broken file is not a session of it


@pytest.mark.slow
def test_init_offers_the_import(invoke: Invoke, home: Path, tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    fill_home(home, root, 3)
    text = ok(invoke("--project", root, "init", "--assistants", "none")).stdout
    assert "Found 3 past assistant sessions of this project on this machine" in text
    assert "codememory import-history" in text
    assert ok_json(invoke("--project", root, "init", "--assistants", "none", "--json"))["past_sessions"] == 3
    ok(invoke("--project", root, "import-history"))
    assert "past assistant sessions" not in ok(invoke("--project", root, "init", "--assistants", "none")).stdout


def test_only_this_projects_claude_folders_are_read(cm: Invoke, project: Path, home: Path, tmp_path: Path) -> None:
    sibling = tmp_path / f"{project.name}-other"  # its Claude Code folder starts like this project's
    (sibling / ".git").mkdir(parents=True)
    place_session(home, sibling, "claude")
    mine, _ = place_session(home, project, "claude")
    sub = project / "src"
    sub.mkdir()
    in_sub, _ = place_session(home, sub, "claude")  # a session started in a subfolder is the project's
    # a probe: a session of this project filed where Claude Code would never file it is not even read
    _, probe = place_session(home, project, "claude")
    (home / ".claude" / "projects" / "-elsewhere").mkdir()
    probe.rename(home / ".claude" / "projects" / "-elsewhere" / probe.name)
    report = ok_json(cm("import-history", "--dry-run", "--json"))
    assert {s["session_id"] for s in report["sessions"]} == {mine, in_sub} and report["errors"] == []
