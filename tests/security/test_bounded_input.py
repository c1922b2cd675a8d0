"""Bounded input and well-formed text (issue 11, item 8, and the robustness findings).

Every reader of standard input or of a file someone else wrote stops at a documented cap (see
codememory.core.bounded_input); `remember-scan` ends a note at its paragraph or the next marker and skips an
oversized one with a warning; lone surrogates and bytes that are not UTF-8 become U+FFFD wherever text
comes in (command line, stdin, files, hook JSON, MCP arguments, the Python API), so SQLite and the
markdown files never receive a string they cannot hold. Driven through the real entry points: the CLI
in-process and as installed console scripts, the hook script with JSON on stdin, and the MCP server
through the official client."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import Result
from mcp import ClientSession, StdioServerParameters

from codememory import Store
from codememory.capture.jsonl_reader import read_lines
from codememory.core.bounded_input import LineTooLong, capped_lines, read_text_upto, valid_json_text, valid_text
from codememory.errors import InvalidInput
from codememory.mcp.server import _ProtocolLines
from conftest import Invoke
from support.mcp import run_stdio

CODEMEMORY = Path(sys.executable).with_name("codememory")
HOOK = Path(sys.executable).with_name("codememory-hook")
MiB = 1024 * 1024
T = TypeVar("T")


# ----------------------------------------------------------------------------------------------- helpers
def clean(result: Result) -> Result:
    """Exit 0, no exception, no traceback."""
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.exception is None, repr(result.exception)
    assert "Traceback" not in result.output
    return result


def one_line_error(result: Result, fragment: str, code: int = 2) -> str:
    """A user error: the exit code, one line on stderr holding `fragment`, nothing on stdout, no traceback."""
    assert result.exit_code == code, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("codememory: error: "), result.stderr
    assert fragment in lines[0], lines[0]
    return lines[0]


def warnings_in(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("codememory: warning: ")]


def stored_texts(root: Path) -> list[str]:
    with Store.open(root) as store:
        return sorted(m.text for m in store.list(limit=1000, include_expired=True))


def assert_valid_utf8_everywhere(root: Path) -> None:
    """Every text value in the store's SQLite file and every text file under .codememory/ is valid UTF-8:
    no lone surrogate (or undecodable byte) was written anywhere."""
    conn = sqlite3.connect(root / ".codememory" / "memory.db")
    conn.text_factory = bytes
    try:
        tables = [r[0].decode() for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [r[1].decode() for r in conn.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                query = f'SELECT "{column}" FROM "{table}" WHERE typeof("{column}") = \'text\''
                for (value,) in conn.execute(query):
                    value.decode("utf-8")  # raises on a lone surrogate's bytes
    finally:
        conn.close()
    for path in (root / ".codememory").rglob("*"):
        if path.is_file() and path.suffix in (".md", ".json", ".jsonl", ".log", ".toml"):
            path.read_bytes().decode("utf-8")


def script(
    *args: str | bytes | Path, stdin: bytes = b"", cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run an installed console script with byte arguments (as a shell passes them), never a daemon."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "CODEMEMORY_PROJECT")}
    env["CODEMEMORY_HOOK_NO_DAEMON"] = "1"
    argv = [os.fsencode(a) if isinstance(a, (str, Path)) else a for a in args]
    done = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env, timeout=120)
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
    return done


# ----------------------------------------------------------------------------------------- remember-scan
def test_a_note_without_a_blank_line_ends_at_the_next_marker_and_the_later_notes_are_stored(
    cm: Invoke, project: Path
) -> None:
    text = (
        "Build notes\n"
        "*Remember*: CI runs on Ubuntu 24.04 runners\n"
        "*Remember*: the staging database resets every Sunday\n"
        "it is restored from the Saturday snapshot\n"
        "*remember*: deploys to production need the VPN\n"
        "\n"
        "Closing words that are not a note.\n"
    )
    data = json.loads(clean(cm("remember-scan", "--json", input=text)).stdout)
    assert [r["memory"]["text"] for r in data["results"]] == [
        "CI runs on Ubuntu 24.04 runners",
        "the staging database resets every Sunday\nit is restored from the Saturday snapshot",
        "deploys to production need the VPN",
    ]
    assert data["warnings"] == []


def test_an_oversized_note_is_skipped_with_a_warning_and_the_notes_after_it_are_stored(
    cm: Invoke, project: Path
) -> None:
    # The note in the middle has no blank line after it: it runs through 600 log lines (23,000+ characters),
    # which used to abort the whole scan with "memory text is ... characters".
    log = "\n".join(f"log line {i} of a build that never ends" for i in range(600))
    text = (
        "*Remember*: the cache lives in ~/.cache/app\n\n"
        f"*Remember*: check the log below\n{log}\n\n"
        "*Remember*: run migrations before the tests\n"
    )
    result = clean(cm("remember-scan", input=text))
    assert stored_texts(project) == ["run migrations before the tests", "the cache lives in ~/.cache/app"]
    [warning] = warnings_in(result.stderr)
    assert "skipped a *Remember* note of 2" in warning and "'check the log below log line 0" in warning
    assert "10,000" in warning


def test_the_python_api_reports_skipped_notes_through_on_warning(project: Path) -> None:
    warned: list[str] = []
    with Store.open(project) as store:
        results = store.remember_scan(
            "*Remember*: " + "y" * 10_001 + "\n\n*Remember*: keep the API stable", on_warning=warned.append
        )
    assert [r.memory.text for r in results] == ["keep the API stable"]
    assert len(warned) == 1 and "skipped a *Remember* note of 10,001 characters" in warned[0]


def test_remember_scan_reads_at_most_10_MiB_and_says_how_much_it_scanned(cm: Invoke, project: Path) -> None:
    head = b"*Remember*: the first note is within the cap\n\n"
    huge_line = b"x" * (12 * MiB)  # no newline: the scan stops at the last whole line before the cap
    tail = b"\n\n*Remember*: a note past the cap is never read\n"
    result = clean(cm("remember-scan", input=head + huge_line + tail))
    assert stored_texts(project) == ["the first note is within the cap"]
    [warning] = warnings_in(result.stderr)
    assert "standard input is over the 10 MiB limit" in warning
    assert f"scanned its first {len(head):,} bytes" in warning


def test_remember_scan_console_script_stops_at_the_cap_on_a_real_pipe(project: Path) -> None:
    head = b"*Remember*: pipes are read in chunks\n\n"
    filler = b"".join(b"filler line %07d of a long build log\n" % i for i in range(12 * MiB // 37))
    data = head + filler + b"\n*Remember*: this one is past the cap\n"
    assert len(data) > 12 * MiB
    done = script(CODEMEMORY, "--project", project, "remember-scan", stdin=data)
    assert done.returncode == 0, done.stderr
    scanned = data[: 10 * MiB].rfind(b"\n") + 1
    warnings = warnings_in(done.stderr.decode())
    assert len(warnings) == 1 and f"scanned its first {scanned:,} bytes" in warnings[0]
    assert stored_texts(project) == ["pipes are read in chunks"]


# ------------------------------------------------------------------------------------------ stdin / file caps
def test_store_refuses_standard_input_over_1_MiB(cm: Invoke, project: Path) -> None:
    one_line_error(cm("store", input=b"a" * (MiB + 1)), "standard input is over the 1 MiB limit")
    assert stored_texts(project) == []


def test_store_refuses_a_file_over_1_MiB(cm: Invoke, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"word " * (MiB // 5 + 1))
    one_line_error(cm("store", "--file", big), f"{big} is over the 1 MiB limit")


def test_store_text_under_the_cap_still_gets_the_memory_length_message(cm: Invoke) -> None:
    one_line_error(cm("store", input="a" * 20_000), "memory text is 20,000 characters; the limit is 10,000")


def test_retrieve_input_over_1_MiB_is_refused(cm: Invoke) -> None:
    body = json.dumps({"query_expansion": ["x" * (MiB + 1)]})
    one_line_error(cm("retrieve", "--input", "-", input=body), "--input is over the 1 MiB limit")


def test_import_line_over_1_MiB_is_an_invalid_line_and_the_others_import(cm: Invoke, tmp_path: Path) -> None:
    lines = [
        json.dumps({"text": "the frontend uses pnpm, not npm"}),
        json.dumps({"text": "x" * (MiB + 10)}),
        json.dumps({"text": "tests run with pytest -x"}),
    ]
    path = tmp_path / "memories.jsonl"
    path.write_text("\n".join(lines) + "\n")
    one_line_error(cm("import", path), "line 2: longer than the 1 MiB limit")
    result = clean(cm("import", path, "--skip-invalid", "--json"))
    report = json.loads(result.stdout)
    assert report["added"] == 2 and report["invalid"] == [{"line": 2, "error": "longer than the 1 MiB limit"}]


def test_capped_lines_skips_a_long_line_and_stops_at_the_total() -> None:
    stream = io.BytesIO(b"short\n" + b"L" * 5000 + b"\nafter \xff\n")
    items = list(capped_lines(stream, 100, 10_000, "the input"))
    assert items[0] == "short\n" and isinstance(items[1], LineTooLong) and items[2] == "after \ufffd\n"
    assert items[1].size == 5001
    over = io.BytesIO(b"line\n" * 3000)
    try:
        list(capped_lines(over, 100, 10_000, "the input"))
    except InvalidInput as exc:
        assert str(exc) == "the input is over the 10,000 bytes limit"
    else:
        raise AssertionError("a stream over the total cap was read whole")


def test_read_text_upto_reads_no_more_than_its_cap() -> None:
    stream = io.BytesIO(b"a\nb\nccccc")
    assert read_text_upto(stream, 6, whole_lines=True) == ("a\nb\n", 4, True)
    assert stream.tell() == 7  # the cap and one byte to know there is more; nothing else was read


def test_sessions_rebuild_skips_a_markdown_file_over_4_MiB(cm: Invoke, project: Path) -> None:
    sessions = project / ".codememory" / "sessions"
    sessions.mkdir(exist_ok=True)
    (sessions / "2026-01-05_10-00_cursor_huge.md").write_bytes(b"# huge\n" + b"z" * (4 * MiB + 1))
    result = clean(cm("sessions", "rebuild"))
    [warning] = warnings_in(result.stderr)
    assert "2026-01-05_10-00_cursor_huge.md" in warning and "is over the 4 MiB limit" in warning


# -------------------------------------------------------------------------------------------------- hooks
def test_hook_ignores_a_payload_over_16_MiB_and_logs_one_line(project: Path) -> None:
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "prompt": "x" * (17 * MiB)}).encode()
    done = script(HOOK, "claude", "UserPromptSubmit", stdin=payload, cwd=project)
    assert (done.returncode, done.stdout) == (0, b"")
    log = (project / ".codememory" / "logs" / "hooks.log").read_text()
    assert "claude UserPromptSubmit: stdin is over the 16 MiB limit; ignored" in log
    with Store.open(project) as store:
        assert store.list_sessions() == []  # nothing was done with a payload that was not read


def test_hook_payload_with_lone_surrogates_and_bad_bytes_is_stored_with_replacement_characters(
    project: Path,
) -> None:
    edit = json.dumps(
        {"session_id": "s2", "cwd": str(project), "tool_name": "Write", "tool_input": {"file_path": "src/PLACE.py"}}
    ).encode()
    done = script(HOOK, "claude", "PostToolUse", stdin=edit.replace(b"PLACE", b"\\udcff\xfe"), cwd=project)
    assert done.returncode == 0
    stop = json.dumps(
        {
            "session_id": "s2",
            "cwd": str(project),
            "last_assistant_message": "Done.\n\n*Remember*: the lint step LONE runs BAD first",
        }
    ).encode()
    stop = stop.replace(b"LONE", b"\\ud800").replace(b"BAD", b"\xff\xfe")
    done = script(HOOK, "claude", "Stop", stdin=stop, cwd=project)
    assert (done.returncode, done.stdout) == (0, b"")
    # the assistant's note waits for the user's next prompt, which carries on and so accepts it
    carry_on = json.dumps({"session_id": "s2", "cwd": str(project), "prompt": "thanks, next one"}).encode()
    assert script(HOOK, "claude", "UserPromptSubmit", stdin=carry_on, cwd=project).returncode == 0
    assert stored_texts(project) == ["the lint step \ufffd runs \ufffd\ufffd first"]
    journal = next((project / ".codememory" / "journal").glob("claude-s2.jsonl"))
    assert json.loads(journal.read_bytes().decode("utf-8"))["path"] == "src/\ufffd\ufffd.py"
    assert not (project / ".codememory" / "logs" / "hooks.log").exists()  # nothing failed
    assert_valid_utf8_everywhere(project)


def test_a_transcript_line_longer_than_the_hook_read_does_not_stop_the_scan(project: Path, tmp_path: Path) -> None:
    """The Stop hook scans 4 MB of transcript per run: a longer line used to stop it there for good."""
    transcript = tmp_path / "t.jsonl"

    def assistant(text: str) -> bytes:
        return json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}).encode()

    transcript.write_bytes(assistant("o" * (5 * MiB)) + b"\n" + assistant("*Remember*: the queue is Redis") + b"\n")
    stop = json.dumps({"session_id": "s3", "cwd": str(project), "transcript_path": str(transcript)}).encode()
    for _run in range(2):  # the long line fills one run's budget; the next run reads on from it
        assert script(HOOK, "claude", "Stop", stdin=stop, cwd=project).returncode == 0
    carry_on = json.dumps({"session_id": "s3", "cwd": str(project), "prompt": "ok, go on"}).encode()
    assert script(HOOK, "claude", "UserPromptSubmit", stdin=carry_on, cwd=project).returncode == 0  # accepts the note
    assert stored_texts(project) == ["the queue is Redis"]
    state = json.loads((project / ".codememory" / "journal" / "claude-s3.json").read_text())
    assert state["transcripts"][str(transcript.resolve())] == transcript.stat().st_size


def test_read_lines_skips_a_line_over_its_cap_and_always_makes_progress(tmp_path: Path) -> None:
    good = [b'{"n": %d, "text": "caf\\u00e9 \\ud800"}' % i for i in range(3)]
    path = tmp_path / "t.jsonl"
    path.write_bytes(good[0] + b"\n" + b"J" * 5000 + b"\n" + good[1] + b"\n" + b"\xff" * 3000 + b"\n" + good[2] + b"\n")
    whole = read_lines(path, 0, None, line_cap=1000)
    assert [line.data["n"] for line in whole.lines] == [0, 1, 2]
    assert (whole.end, whole.at_end, whole.skipped) == (path.stat().st_size, True, 2)
    assert whole.lines[0].data["text"] == "caf\u00e9 \ufffd"
    # small budgets: every read moves forward (even inside a long line) and the same lines come out
    seen: list[int] = []
    offset, reads = 0, 0
    while True:
        part = read_lines(path, offset, 700, line_cap=1000)
        assert part.end > offset or part.at_end
        seen += [line.data["n"] for line in part.lines]
        offset, reads = part.end, reads + 1
        if part.at_end and part.end == path.stat().st_size:
            break
        assert reads < 50
    assert seen == [0, 1, 2]


# ------------------------------------------------------------------------------ text that is not UTF-8
@pytest.mark.slow
def test_non_utf8_command_line_bytes_become_replacement_characters(project: Path) -> None:
    def run(*args: str | bytes) -> subprocess.CompletedProcess[bytes]:
        return script(CODEMEMORY, "--project", project, *args)

    stored = run("store", b"caf\xe9 uses \xff\xfe ports", "--tags", b"t\xff", "--json")
    assert stored.returncode == 0, stored.stderr
    memory = json.loads(stored.stdout.decode("utf-8"))["memory"]
    assert (memory["text"], memory["tags"]) == ("caf\ufffd uses \ufffd\ufffd ports", ["t\ufffd"])
    for args in (
        ("search", b"\xed\xa0\x80"),
        ("search", b"caf\xe9", "--json"),
        ("search", b'"\xff" OR \xfe*'),
        ("list", "--tags", b"t\xff", "--json"),
        ("list", "--entered-by", b"\xc3"),
        ("show", b"mem_\xff"),
        ("forget", b"\xff"),
        ("sessions", "search", b"\xff"),
        ("store", b"\xff", "--category", b"\xff"),
        ("remember-scan", "--source", b"\xff"),
    ):
        done = run(*args)
        done.stdout.decode("utf-8")  # the output is valid UTF-8 too
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8").splitlines()
            assert done.returncode in (1, 2) and len(lines) == 1 and lines[0].startswith("codememory: error: ")
    found = json.loads(run("list", "--tags", b"t\xff", "--json").stdout)
    assert [m["id"] for m in found["memories"]] == [memory["id"]]
    assert_valid_utf8_everywhere(project)


def test_lone_surrogates_through_the_python_api_are_replaced(project: Path, tmp_path: Path) -> None:
    exported = tmp_path / "in.jsonl"
    exported.write_text('{"text": "imported \\ud800 note", "tags": ["a\\udcff"], "source": "x\\udfff"}\n')
    with Store.open(project) as store:
        added = store.add("retry \ud800 budget \udcff is 3", tags=["ci\udc80"], source="s\ud801", entered_by="me\udfff")
        assert added.memory.text == "retry \ufffd budget \ufffd is 3"
        assert (added.memory.tags, added.memory.source, added.memory.entered_by) == (
            ["ci\ufffd"],
            "s\ufffd",
            "me\ufffd",
        )
        assert store.add("a pair \ud83d\ude00 is one character").memory.text == "a pair \U0001f600 is one character"
        assert [h.memory.id for h in store.search("budget \ud800").hits] == [added.memory.id]
        store.search('"\ud800" OR \udcff* NEAR(\udfff)')
        assert store.count(tags="ci\udc80") == 1 and store.count(entered_by="me\udfff") == 1
        store.retrieve(["budget \ud800"], entities=["x\udcff"])
        [note] = store.remember_scan("*Remember*: deploy \ud800 on fridays", entered_by="\udcff")
        assert note.memory.text == "deploy \ufffd on fridays"
        session = store.checkpoint(tool="pytest", slug="surrogates", goal="fix \ud800 bug", work_completed=["\udcff"])
        assert store.search_sessions("\ud800 bug").results[0].session_id == session.session_id
        assert store.import_(exported).added == 1
        imported = store.search("imported").hits[0].memory
        assert (imported.text, imported.tags, imported.source) == ("imported \ufffd note", ["a\ufffd"], "x\ufffd")
    markdown = Path(session.markdown_path).read_bytes().decode("utf-8")
    assert "fix \ufffd bug" in markdown
    assert_valid_utf8_everywhere(project)


def test_the_text_helpers_replace_only_what_is_broken() -> None:
    assert valid_text("plain ascii") == "plain ascii"
    assert valid_text("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"
    assert valid_text("\udcff\ud800x\ud83d\ude00") == "\ufffd\ufffdx\U0001f600"
    assert (
        valid_json_text(r'{"a": "\ud800 \\ud800 \ud83d\ude00 \udc00"}')
        == r'{"a": "\ufffd \\ud800 \ud83d\ude00 \ufffd"}'
    )
    assert json.loads(valid_json_text(r'["\uD800\u0041"]')) == ["\ufffdA"]


# ---------------------------------------------------------------------------------------------------- MCP
RELAY = """\
import subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE)
for line in sys.stdin.buffer:
    child.stdin.write(line.replace(b"LONE_SURROGATE", b"\\\\ud800").replace(b"BAD_BYTES", b"\\xff\\xfe"))
    child.stdin.flush()
child.stdin.close()
sys.exit(child.wait())
"""


def mcp_session(project: Path, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """The official client talking to `codememory mcp` through a relay that puts what the Python client
    cannot send into its messages: a JSON `\\ud800` escape (a JavaScript client sends one for a lone
    surrogate) and bytes that are not UTF-8."""

    args = ["-c", RELAY, str(CODEMEMORY), "--project", str(project), "mcp"]
    return run_stdio(StdioServerParameters(command=sys.executable, args=args, cwd=project), body)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.isError, f"{tool} failed: {text}"
    return json.loads(text)


@pytest.mark.slow
def test_lone_surrogates_and_bad_bytes_through_the_mcp_server(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        stored = await call(session, "memory_store", {"text": "pool LONE_SURROGATE size BAD_BYTES is 20"})
        found = await call(session, "memory_search", {"query": "LONE_SURROGATE pool"})
        await call(session, "memory_retrieve", {"query_expansion": ["pool LONE_SURROGATE"], "entities": ["BAD_BYTES"]})
        saved = await call(session, "checkpoint", {"slug": "surrogates", "goal": "handle LONE_SURROGATE input"})
        sessions = await call(session, "search_sessions", {"query": "LONE_SURROGATE input"})
        return {"stored": stored, "found": found, "saved": saved, "sessions": sessions}

    out = mcp_session(project, body)
    memory = out["stored"]["memory"]
    assert memory["text"] == "pool \ufffd size \ufffd\ufffd is 20"
    assert [hit["id"] for hit in out["found"]["results"]] == [memory["id"]]
    markdown = Path(out["saved"]["markdown_path"]).read_bytes().decode("utf-8")
    assert "handle \ufffd input" in markdown
    assert out["sessions"]["results"][0]["session_id"] == out["saved"]["session_id"]
    assert_valid_utf8_everywhere(project)


def test_mcp_stdio_lines_are_capped_and_made_valid() -> None:
    stream = io.BytesIO(
        b'{"id": 1}\n' + b"{" + b"x" * (5 * MiB) + b"}\n" + b'{"t": "\\ud800"}\n' + b'{"t": "\xff"}\n' + b"{"
    )
    lines = _ProtocolLines(stream)
    read = [lines.readline() for _ in range(5)]
    assert read == ['{"id": 1}\n', '{"t": "\\ufffd"}\n', '{"t": "\ufffd"}\n', "{", ""]


# ------------------------------------------------------------------------------------------------- daemon
@pytest.mark.slow
def test_lone_surrogates_in_daemon_requests_are_replaced(tmp_path: Path) -> None:
    """JSON's `\\ud800` escapes (what json.dumps sends for a lone surrogate) in every kind of daemon request:
    each is answered, and what it stored is valid UTF-8."""
    from support.daemon import isolated_env, make_project, spawn

    env = isolated_env(tmp_path / "d")
    project = tmp_path / "daemon-project"
    make_project(env, project)
    root = str(project.resolve())
    d = spawn(env)
    try:
        client = d.client()
        stored = client.request(
            "POST", "/memory/store", {"project_root": root, "text": "queue \ud800 depth is 50", "tags": ["q\udcff"]}
        )
        assert stored.status == 200, stored.data
        assert stored.data["memory"]["text"] == "queue \ufffd depth is 50"
        requests: list[tuple[str, dict[str, Any]]] = [
            ("/memory/search", {"project_root": root, "query": "\ud800 queue"}),
            ("/memory/transcript", {"project_root": root, "reference": "mem_\ud800"}),
            ("/retrieve", {"project_root": root, "query_expansion": ["queue \ud800 depth"], "session_id": "s\udcff"}),
            (
                "/hook",
                {
                    "assistant": "claude",
                    "event": "UserPromptSubmit",
                    "payload": json.dumps({"session_id": "h\udcff", "cwd": root, "prompt": "queue \ud800 depth"}),
                    "project": root,
                },
            ),
            (
                "/api/raw-events",
                {
                    "project_root": root,
                    "batch_id": "b\udcff",
                    "events": [
                        {
                            "event_id": "msg_1",
                            "session_id": "ses_1",
                            "kind": "user_prompt",
                            "at": 1_790_000_000_000,
                            "payload": {"text": "raw \ud800 prompt", "k\udcff": ["\udfff"]},
                        }
                    ],
                },
            ),
        ]
        statuses = {path: client.request("POST", path, body) for path, body in requests}
        assert {path: answer.status for path, answer in statuses.items()} == {
            "/memory/search": 200,
            "/memory/transcript": 400,  # a clean "not a memory id ...: mem_\ufffd"
            "/retrieve": 200,
            "/hook": 200,
            "/api/raw-events": 200,
        }, {path: answer.data for path, answer in statuses.items()}
        assert (
            statuses["/memory/transcript"].data["error"]
            == "not a memory id (expected mem_ and 8 hex digits): mem_\ufffd"
        )
        assert "queue \ufffd depth is 50" in statuses["/hook"].data["output"]
    finally:
        d.terminate()
    assert_valid_utf8_everywhere(project)
