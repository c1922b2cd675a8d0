"""Coding sessions: checkpoints, the markdown file (exact format, parsed back by rebuild), git SHAs and
files touched from a real git repository, weighted search with query filters, and the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from codememory import Store
from codememory.errors import InvalidInput, NotFound
from codememory.sessions.filters import extract_filters
from codememory.sessions.markdown import parse, render
from codememory.store.migrations import LATEST, apply
from codememory.store.sessions import SessionRecord, SessionRow

Invoke = Callable[..., Result]

NOW = datetime(2026, 3, 10, 14, 32, 5, tzinfo=UTC)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(make_project: Callable[[str], Path]) -> Path:
    """An initialised codememory project that is a git repository with one commit."""
    root = make_project("repo")
    git(root, "init", "-q")
    (root / "src").mkdir()
    (root / "src" / "server.py").write_text("one\ntwo\n", encoding="utf-8")
    (root / "old.txt").write_text("old\n", encoding="utf-8")
    git(root, "add", "src", "old.txt")
    git(root, "commit", "-qm", "start")
    return root


def stamp(when: datetime) -> str:
    return when.astimezone().strftime("%Y-%m-%d_%H-%M")


# ----------------------------------------------------------------------------- markdown
SAMPLE = SessionRecord(
    SessionRow(
        id="2026-02-23_14-32_cursor_tei-migration",
        project="inference",
        tool="cursor",
        slug="tei-migration",
        started_at="2026-02-23T12:10:00.000Z",
        updated_at="2026-02-23T13:00:00.000Z",
        ended_at="2026-02-23T13:00:00.000Z",
        trigger="context_limit",
        git_sha_start="a3f1c99",
        git_sha_end="d8e2f04",
        status="frozen",
        markdown_path="sessions/2026-02-23_14-32_cursor_tei-migration.md",
        goal="Migrate BGE-M3 embedding endpoint from vLLM to TEI for ~40% p50 latency reduction.",
    ),
    completed=["Replaced vLLM serving logic with TEI HTTP client", "Created k8s deployment manifest"],
    pending=["Tune TEI batch size (current: 32, target: 64+)"],
    summary=["Profiled existing vLLM embedding path", "TEI benchmarked at 38ms vs Infinity 61ms"],
    decisions=[
        "**TEI over Infinity:** Native BGE-M3 support; Infinity required patching.\n"
        "[TEI supported models](https://huggingface.co/docs/tei)",
        "**HTTP over gRPC:** Simpler auth for initial rollout",
    ],
    plan_files=[{"path": "docs/plans/tei-migration-plan.md", "header": "## TEI Migration Plan | Phase 1"}],
    references=[
        {"url": "https://huggingface.co/docs/text-embeddings-inference", "title": "TEI Documentation"},
        {"url": "docs/benchmarks/tei-vs-vllm.csv", "title": "Internal Benchmark Results"},
    ],
    diff_summary="2 files modified, 1 file created. +187 / -43 lines.\nKey changes: TEI HTTP call replaces vLLM.",
    files=[
        ("k8s/deployments/tei-deployment.yaml", "created"),
        ("src/inference/client.py", "modified"),
        ("src/inference/embedding_server.py", "modified"),
    ],
)

SAMPLE_MARKDOWN = """\
---
session_id: 2026-02-23_14-32_cursor_tei-migration
tool: cursor
project: inference
started_at: 2026-02-23T12:10:00.000Z
git_sha_start: a3f1c99
git_sha_end: d8e2f04
trigger: context_limit
slug: tei-migration
status: frozen
ended_at: 2026-02-23T13:00:00.000Z
updated_at: 2026-02-23T13:00:00.000Z
---

## Goal
Migrate BGE-M3 embedding endpoint from vLLM to TEI for ~40% p50 latency reduction.

---

## Todos

### ✅ Work Completed
- Replaced vLLM serving logic with TEI HTTP client
- Created k8s deployment manifest

### 🔲 Work To Be Completed
- Tune TEI batch size (current: 32, target: 64+)

---

## Files Touched

### Created
- `k8s/deployments/tei-deployment.yaml`

### Modified
- `src/inference/client.py`
- `src/inference/embedding_server.py`

---

## Git Diff Summary
2 files modified, 1 file created. +187 / -43 lines.
Key changes: TEI HTTP call replaces vLLM.

---

## Work Done

- Profiled existing vLLM embedding path
- TEI benchmarked at 38ms vs Infinity 61ms

---

## Plan Files

| File | Description |
|------|-------------|
| `docs/plans/tei-migration-plan.md` | ## TEI Migration Plan \\| Phase 1 |

---

## Architecture Decisions

- **TEI over Infinity:** Native BGE-M3 support; Infinity required patching.
  [TEI supported models](https://huggingface.co/docs/tei)
- **HTTP over gRPC:** Simpler auth for initial rollout

---

## References

- [TEI Documentation](https://huggingface.co/docs/text-embeddings-inference)
- [Internal Benchmark Results](docs/benchmarks/tei-vs-vllm.csv)
"""


def test_render_is_the_seed_format_exactly_and_parses_back() -> None:
    assert render(SAMPLE) == SAMPLE_MARKDOWN
    assert parse(SAMPLE_MARKDOWN, SAMPLE.row.markdown_path) == SAMPLE


def test_empty_sections_render_as_none_and_parse_back_empty() -> None:
    row = SessionRow(
        id="2026-02-23_14-32_claude-code_empty",
        project="p",
        tool="claude-code",
        slug="empty",
        started_at="2026-02-23T12:10:00.000Z",
        updated_at="2026-02-23T12:10:00.000Z",
        markdown_path="sessions/x.md",
    )
    text = render(SessionRecord(row))
    assert "git_sha_start:\n" in text and "## Goal\n_None._\n" in text
    assert "### ✅ Work Completed\n_None._\n\n### 🔲 Work To Be Completed\n_None._" in text
    assert parse(text, "sessions/x.md") == SessionRecord(row)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("no frontmatter", "no frontmatter"),
        ("---\nsession_id: bad id\n---\n", "is not a session id"),
        ("---\nsession_id: 2026-02-23_14-32_cursor_x\ntool: cursor\n---\n", "frontmatter has no started_at"),
        (
            "---\nsession_id: 2026-02-23_14-32_cursor_x\ntool: cursor\nstarted_at: 2026-02-23\nstatus: gone\n---\n",
            "unknown status 'gone'",
        ),
    ],
)
def test_parse_rejects_what_is_not_a_session_file(text: str, error: str) -> None:
    with pytest.raises(InvalidInput, match=error):
        parse(text, "sessions/x.md")


# --------------------------------------------------------------------------- checkpoint
def test_checkpoints_append_replace_and_track_git(repo: Path) -> None:
    start_sha = git(repo, "rev-parse", "HEAD")
    with Store.open(repo) as store:
        first = store.checkpoint(
            tool="Claude Code",
            slug="Server Rewrite",
            goal="Rewrite the server loop.",
            work_completed=["Read the old loop"],
            work_pending=["Write the new loop", "Benchmark it"],
            plan_files=[{"path": "docs/plan.md"}],
            now=NOW,
        )
        session_id = f"{stamp(NOW)}_claude-code_server-rewrite"
        assert first.to_dict() == {
            "session_id": session_id,
            "markdown_path": str(repo / ".codememory" / "sessions" / f"{session_id}.md"),
            "status": "open",
            "created": True,
            "files_touched": 0,
        }
        # work happens: a modified file, an untracked new file, a deleted file, and a commit
        (repo / "src" / "server.py").write_text("one\nTWO\nthree\n", encoding="utf-8")
        (repo / "src" / "loop.py").write_text("a\nb\n", encoding="utf-8")
        (repo / "docs").mkdir()
        (repo / "docs" / "plan.md").write_text("intro\n# Loop plan\n", encoding="utf-8")
        git(repo, "rm", "-q", "old.txt")
        git(repo, "commit", "-qm", "remove old")
        later = NOW + timedelta(minutes=20)
        second = store.checkpoint(
            tool="claude-code",
            slug="server-rewrite",  # finds the open session by tool and slug
            work_completed=["Wrote the new loop"],
            work_pending=["Benchmark it"],
            work_summary=["Loop rewritten around a queue"],
            decisions=["**Queue over threads:** simpler shutdown"],
            plan_files=[{"path": "docs/plan.md"}],
            references=[{"url": "https://docs.python.org/3/library/queue.html", "title": "queue docs"}],
            key_changes="server.py drives a queue",
            now=later,
        )
        assert (second.session_id, second.created, second.files_touched) == (session_id, False, 4)
        end_sha = git(repo, "rev-parse", "HEAD")
        closed = store.checkpoint(tool="claude-code", session_id=session_id, status="closed", now=later)
        assert closed.status == "closed"
        record = store.sessions.tables.get(session_id)
        assert record is not None
        assert (record.row.git_sha_start, record.row.git_sha_end) == (start_sha, end_sha)
        assert (record.row.trigger, record.row.ended_at) == ("session_end", "2026-03-10T14:52:05.000Z")
        assert record.completed == ["Read the old loop", "Wrote the new loop"]
        assert record.pending == ["Benchmark it"]
        # the first plan file did not exist yet (no heading); the second read its first heading
        assert record.plan_files == [
            {"path": "docs/plan.md", "header": ""},
            {"path": "docs/plan.md", "header": "# Loop plan"},
        ]
        assert [f.to_dict() for f in store.session_files(session_id)] == [
            {"path": "docs/plan.md", "change_type": "created"},
            {"path": "src/loop.py", "change_type": "created"},
            {"path": "src/server.py", "change_type": "modified"},
            {"path": "old.txt", "change_type": "deleted"},
        ]
        markdown = Path(closed.markdown_path).read_text(encoding="utf-8")
        assert markdown == render(record)
        assert f"git_sha_start: {start_sha}\ngit_sha_end: {end_sha}\n" in markdown
        assert (
            "## Git Diff Summary\n1 file modified, 2 files created, 1 file deleted. +6 / -2 lines.\n"
            "Key changes: server.py drives a queue\n" in markdown
        )
        assert ".codememory" not in json.dumps([f.to_dict() for f in store.session_files(session_id)])
        # a closed session is not continued: the same slug starts a new one (same minute: a suffix)
        again = store.checkpoint(tool="claude-code", slug="server-rewrite", now=later - timedelta(minutes=20))
        assert again.created is True and again.session_id == session_id + "-2"
        # ... and that one is found by its slug, not by the suffixed id
        more = store.checkpoint(tool="claude-code", slug="server-rewrite", work_completed=["More"])
        assert (more.session_id, more.created) == (session_id + "-2", False)
        rebuilt = store.rebuild_sessions()
        assert rebuilt.to_dict() == {"sessions": 2, "errors": []}
        more = store.checkpoint(tool="claude-code", slug="server-rewrite", work_completed=["After rebuild"])
        assert (more.session_id, more.created) == (session_id + "-2", False)


def test_without_git_shas_are_null_and_no_files_are_listed(project: Path) -> None:
    with Store.open(project) as store:
        out = store.checkpoint(tool="cursor", slug="no-git", goal="Try without git.", status="closed", now=NOW)
        record = store.sessions.tables.get(out.session_id)
        assert record is not None
        assert (record.row.git_sha_start, record.row.git_sha_end, record.files) == (None, None, [])
        text = Path(out.markdown_path).read_text(encoding="utf-8")
        assert "git_sha_start:\ngit_sha_end:\n" in text and "## Git Diff Summary\n_None._" in text


def test_checkpoint_validation(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n", encoding="utf-8")
    (project / "escape").symlink_to(tmp_path)
    with Store.open(project) as store:
        cases: list[tuple[dict[str, Any], type[Exception], str]] = [
            ({}, InvalidInput, "slug is required to start a session"),
            ({"slug": "a b c d e"}, InvalidInput, "more than 4 words"),
            ({"slug": "!!"}, InvalidInput, "slug is empty"),
            ({"slug": "x", "status": "done"}, InvalidInput, "unknown status 'done'; choose one of: open, frozen"),
            ({"slug": "x", "trigger": "nope"}, InvalidInput, "unknown trigger 'nope'"),
            ({"slug": "x", "work_completed": ["ok", "  \n "]}, InvalidInput, r"work_completed\[1\] is empty"),
            ({"slug": "x", "plan_files": [{"path": "../outside.md"}]}, InvalidInput, "is outside the project root"),
            ({"slug": "x", "plan_files": [{"path": str(outside)}]}, InvalidInput, "is outside the project root"),
            ({"slug": "x", "plan_files": [{"path": "escape/outside.md"}]}, InvalidInput, "outside the project"),
            ({"slug": "x", "plan_files": [{"path": "."}]}, InvalidInput, "is the project root itself"),
            ({"slug": "x", "plan_files": [{"path": "a`b.md"}]}, InvalidInput, "contains a backtick"),
            ({"slug": "x", "references": [{"url": "../../etc/passwd"}]}, InvalidInput, r"references\[0\]\.url"),
            ({"slug": "x", "references": [{"title": "t"}]}, InvalidInput, "needs a url"),
            ({"session_id": "2026-01-01_10-00_cursor_nope"}, NotFound, "no session with id"),
            ({"session_id": "../../x"}, InvalidInput, "is not a session id"),
        ]
        for args, error, message in cases:
            with pytest.raises(error, match=message):
                store.checkpoint(tool="cursor", **args)
        assert store.list_sessions() == []  # nothing half-written
        assert not list((project / ".codememory").glob("sessions/*.md"))
        made = store.checkpoint(
            tool="cursor",
            slug="x",
            plan_files=[{"path": str(project / "docs" / "p.md"), "header": "# P"}],
            references=[{"url": "./docs/../notes.md"}],
            now=NOW,
        )
        record = store.sessions.tables.get(made.session_id)
        assert record is not None
        assert record.plan_files == [{"path": "docs/p.md", "header": "# P"}]  # absolute inside: made relative
        assert record.references == [{"url": "notes.md", "title": "notes.md"}]
        with pytest.raises(InvalidInput, match="a slug cannot change"):
            store.checkpoint(tool="cursor", session_id=made.session_id, slug="other")


# ------------------------------------------------------------------------------- search
def test_extract_filters() -> None:
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    q = extract_filters("kv cache implementation last week", [], now)
    assert (q.terms, q.after, q.before) == (["kv", "cache", "implementation"], "2026-03-03T12:00:00.000Z", None)
    q = extract_filters("the OOM fix in january", [], now)
    assert (q.terms, q.after, q.before) == (["oom", "fix"], "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z")
    q = extract_filters("auth in december", [], now)  # a month still to come this year means last year's
    assert (q.after, q.before) == ("2025-12-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z")
    q = extract_filters("yesterday's flaky test", [], now)
    assert (q.after, q.before) == ("2026-03-09T00:00:00.000Z", "2026-03-10T00:00:00.000Z")
    q = extract_filters("cursor session about speculative decoding before march 1", [], now)
    assert (q.tool, q.terms, q.before) == ("cursor", ["speculative", "decoding"], "2026-03-01T00:00:00.000Z")
    q = extract_filters("work in claude code on src/inference/embedding_server.py and tei.yaml", [], now)
    assert (q.tool, q.terms) == ("claude-code", ["work"])
    assert q.paths == ["src/inference/embedding_server.py", "tei.yaml"]
    q = extract_filters("pytest-agent retry logic since 2026-02-01", ["pytest-agent"], now)
    assert (q.tool, q.terms, q.after) == ("pytest-agent", ["retry", "logic"], "2026-02-01T00:00:00.000Z")
    q = extract_filters("database cursor leak", [], now)  # a tool word that is not about the tool stays
    assert (q.tool, q.terms) == (None, ["database", "cursor", "leak"])


def _seed_sessions(store: Store) -> dict[str, str]:
    ids = {}
    ids["tei"] = store.checkpoint(
        tool="cursor",
        slug="tei-migration",
        goal="Migrate the embedding endpoint to TEI.",
        decisions=["**TEI over Infinity:** native BGE-M3 support"],
        now=datetime(2026, 1, 12, 9, 0, tzinfo=UTC),
    ).session_id
    ids["kv"] = store.checkpoint(
        tool="claude-code",
        slug="kv-cache",
        goal="Implement the KV cache prefill.",
        work_summary=["Compared TEI batching notes while profiling"],
        now=datetime(2026, 3, 8, 9, 0, tzinfo=UTC),
    ).session_id
    ids["auth"] = store.checkpoint(
        tool="claude-code",
        slug="auth-tokens",
        goal="Rotate auth tokens daily.",
        plan_files=[{"path": "docs/auth_rotation.md", "header": "# Rotation"}],
        now=datetime(2026, 3, 9, 9, 0, tzinfo=UTC),
    ).session_id
    return ids


def test_search_weights_filters_threshold_and_limit(project: Path) -> None:
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    with Store.open(project) as store:
        ids = _seed_sessions(store)
        search = store.sessions.search

        hits = search("TEI", now=now)["results"]
        assert [h["session_id"] for h in hits] == [ids["tei"], ids["kv"]]  # goal+decisions beat work done
        assert hits[0]["score"] > hits[1]["score"]
        assert set(hits[0]) == {
            "rank",
            "score",
            "session_id",
            "goal",
            "date",
            "tool",
            "status",
            "top_files",
            "markdown_path",
            "why",
        }
        assert hits[0]["markdown_path"].endswith(f".codememory/sessions/{ids['tei']}.md")
        assert "markdown" not in hits[0] and hits[0]["date"] == "2026-01-12"
        assert hits[0]["why"] == "tei in decisions, goal"
        assert [h["session_id"] for h in search("TEI last week", now=now)["results"]] == [ids["kv"]]
        assert [h["session_id"] for h in search("TEI in january", now=now)["results"]] == [ids["tei"]]
        assert [h["session_id"] for h in search("TEI cursor session", now=now)["results"]] == [ids["tei"]]
        assert [h["session_id"] for h in search("TEI", tool="claude-code", now=now)["results"]] == [ids["kv"]]
        assert [h["session_id"] for h in search("auth_rotation.md", now=now)["results"]] == [ids["auth"]]
        assert search("quantum gravity", now=now)["results"] == []  # nothing relevant enough
        assert search("the session", now=now)["results"] == []  # nothing to look for
        # one weak match among several terms stays below the threshold
        assert search("profiling gpu kernels fusion", now=now)["results"] == []
        # only filters: the sessions in range, newest first
        only = search("sessions last week", now=now)["results"]
        assert [h["session_id"] for h in only] == [ids["auth"], ids["kv"]]
        assert only[0]["score"] is None
        for i in range(6):
            store.checkpoint(tool="codex", slug=f"retry-{i}", goal="Retry logic for uploads.", now=now)
        assert len(search("retry uploads", limit=50, now=now)["results"]) == 5  # hard cap


def test_rebuild_recreates_rows_from_markdown(project: Path) -> None:
    with Store.open(project) as store:
        ids = _seed_sessions(store)
        before = {sid: store.sessions.tables.get(sid) for sid in ids.values()}
        folder = project / ".codememory" / "sessions"
        (folder / "notes.md").write_text("just notes\n", encoding="utf-8")
        # the markdown is the source of truth: an edit there wins
        tei = folder / f"{ids['tei']}.md"
        tei.write_text(
            tei.read_text(encoding="utf-8").replace("Migrate the embedding", "Move the embedding"), encoding="utf-8"
        )
        store.db.conn.execute("DELETE FROM sessions")  # lost rows
        report = store.rebuild_sessions()
        assert report.sessions == 3
        assert [e.to_dict() for e in report.errors] == [
            {"file": str(folder / "notes.md"), "error": "no frontmatter (the file must start with a --- block)"}
        ]
        after = {sid: store.sessions.tables.get(sid) for sid in ids.values()}
        assert after[ids["kv"]] == before[ids["kv"]] and after[ids["auth"]] == before[ids["auth"]]
        tei_after = after[ids["tei"]]
        assert tei_after is not None and tei_after.row.goal == "Move the embedding endpoint to TEI."
        hits = store.search_sessions("move embedding").results
        assert hits[0].session_id == ids["tei"]
        # later checkpoints continue the rebuilt session
        out = store.checkpoint(tool="cursor", slug="tei-migration", work_completed=["Done"])
        assert out.session_id == ids["tei"] and out.created is False


# ---------------------------------------------------------------------------------- CLI
def test_cli_sessions_list_search_show_rebuild(project: Path, cm: Invoke) -> None:
    with Store.open(project) as store:
        ids = _seed_sessions(store)
    listed = cm("sessions", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [s["session_id"] for s in json.loads(listed.stdout)["sessions"]] == [ids["auth"], ids["kv"], ids["tei"]]
    plain = cm("sessions", "list", "--tool", "cursor")
    assert ids["tei"] in plain.stdout and ids["kv"] not in plain.stdout and "Migrate the embedding" in plain.stdout

    found = cm("sessions", "search", "tei", "migration", "--json")
    assert found.exit_code == 0, found.output
    data = json.loads(found.stdout)
    assert data["results"][0]["session_id"] == ids["tei"] and data["query"]["terms"] == ["tei", "migration"]
    assert "No sessions found" in cm("sessions", "search", "quantum").stdout

    shown = cm("sessions", "show", ids["auth"])
    assert shown.exit_code == 0 and shown.stdout == (
        project / ".codememory" / "sessions" / f"{ids['auth']}.md"
    ).read_text(encoding="utf-8")
    files = cm("sessions", "show", ids["auth"], "--files", "--json")
    assert json.loads(files.stdout) == {"session_id": ids["auth"], "files": []}
    as_json = json.loads(cm("sessions", "show", ids["auth"], "--json").stdout)
    assert as_json["goal"] == "Rotate auth tokens daily." and as_json["markdown"].startswith("---\n")

    missing = cm("sessions", "show", "2026-01-01_00-00_cursor_none")
    assert missing.exit_code == 1 and "no session with id 2026-01-01_00-00_cursor_none" in missing.stderr
    bad = cm("sessions", "show", "../../etc/passwd")
    assert bad.exit_code == 2 and "is not a session id" in bad.stderr

    rebuilt = cm("sessions", "rebuild", "--json")
    assert json.loads(rebuilt.stdout) == {"sessions": 3, "errors": []}
    assert "Rebuilt 3 sessions from markdown." in cm("sessions", "rebuild").stdout
    assert os.path.exists(project / ".codememory" / "memory.db")


def test_without_a_git_binary_checkpoints_still_work(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with Store.open(repo) as store:
        out = store.checkpoint(tool="cursor", slug="offline", goal="No git on PATH.", now=NOW)
        record = store.sessions.tables.get(out.session_id)
        assert record is not None and record.row.git_sha_start is None and record.files == []


def test_migration_4_upgrades_a_version_3_store(project: Path) -> None:
    """A store built by migrations 1-3 alone (as a release of that time wrote it) is brought up to date."""
    path = project / ".codememory" / "memory.db"
    for old in path.parent.glob("memory.db*"):
        old.unlink()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    apply(conn, 0, 3, "2026-01-01T00:00:00.000Z")
    conn.execute(
        "INSERT INTO memories(id, text, text_hash, created_at, updated_at) VALUES (?, ?, '-', ?, ?)",
        ("mem_0000abcd", "kept across the upgrade", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
    )
    conn.execute("COMMIT")
    conn.close()
    with Store.open(project) as store:
        assert store.db.schema_version() == LATEST
        assert [m.text for m in store.list()] == ["kept across the upgrade"]
        assert [h.memory.id for h in store.search("upgrade").hits] == ["mem_0000abcd"]
        assert store.checkpoint(tool="cursor", slug="after-upgrade", now=NOW).created is True
