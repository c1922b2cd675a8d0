"""Capture of Claude Code and Codex transcripts, on transcripts recorded from the real CLIs
(tests/fixtures/transcripts/README.md), into real stores in tmp dirs."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from codememory.capture import codex as codex_transcript
from codememory.capture.daily_log import MEMORY_DIR, DailyLog, find_anchors
from codememory.capture.hook_transcripts import capture_transcript, detect_source, read_session
from codememory.capture.jsonl_reader import ReadState
from codememory.core.project import store_dir
from codememory.errors import TranscriptError
from codememory.service.project_store import Store
from codememory.store.capture import CaptureTables

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
CLAUDE_FIXTURE = FIXTURES / "claude-code-2.1.197.jsonl"
CODEX_FIXTURE = FIXTURES / "codex-0.169.0.jsonl"
CLAUDE_SESSION = "528bc694-980c-40c8-b942-618b1b6cb9dd"
CODEX_SESSION = "01a2085a-0176-7773-a954-fb989b486aef"
CODEX_NAME = f"rollout-2026-11-23T12-20-46-{CODEX_SESSION}.jsonl"
SECRET_KEY = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d"  # split: not a real key for scanners
PRIVATE = "my-private-diary-entry"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    store, _ = Store.init(root)
    store.close()
    return root


def fixture_lines(source: Path, project: Path, folder: Path) -> list[str]:
    """The recorded lines with the recording machine's paths replaced by this test's folders."""
    text = source.read_text(encoding="utf-8")
    text = text.replace("__PROJECT__", str(project)).replace("__TRANSCRIPT_DIR__", str(folder))
    return text.replace("__HOME__", str(folder)).splitlines(keepends=True)


def write(path: Path, lines: list[str], mode: str = "w") -> None:
    with path.open(mode, encoding="utf-8") as f:
        f.write("".join(lines))


def claude_file(project: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    lines = fixture_lines(CLAUDE_FIXTURE, project, tmp_path)
    return tmp_path / f"{CLAUDE_SESSION}.jsonl", lines


def codex_file(project: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    return tmp_path / CODEX_NAME, fixture_lines(CODEX_FIXTURE, project, tmp_path)


def log_text(project: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((store_dir(project) / MEMORY_DIR).glob("*.md")))


def anchors(project: Path) -> list[tuple[str, str]]:
    return [a for p in sorted((store_dir(project) / MEMORY_DIR).glob("*.md")) for a in find_anchors(p)]


def captured(project: Path, source: str) -> list[tuple[str, int]]:
    with Store.open(project) as store:
        return [(t.turn_id, t.seq) for t in CaptureTables(store.db).turns(source)]


def capture(project: Path, path: Path, **kwargs: object) -> dict[str, object]:
    with Store.open(project) as store:
        return capture_transcript(store, path, **kwargs).to_dict()  # type: ignore[arg-type]


def index_of(lines: list[str], needle: str, start: int = 0) -> int:
    return next(i for i in range(start, len(lines)) if needle in lines[i])


def prompt_line(lines: list[str], text: str) -> int:
    """The index of the Claude prompt line holding `text` (not the queue line that precedes it)."""
    return next(i for i, x in enumerate(lines) if json.loads(x).get("type") == "user" and text in x)


# --------------------------------------------------------------------------- parsing
def test_claude_transcript_turns(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    write(path, lines)
    assert detect_source(path) == "claude-code"
    info, turns = read_session(path)
    assert (info.source, info.session_id, info.project_root) == ("claude-code", CLAUDE_SESSION, str(project))
    assert info.created_at.startswith("2026-11-23T12:18") and info.updated_at.startswith("2026-11-23T12:21")
    assert [t.seq for t in turns] == [1, 2, 3, 4, 5, 6] and all(t.completed for t in turns)
    assert turns[0].user_text == "create the hello file please"
    assert turns[0].turn_id == "c913277b-9d59-48a3-9777-0e14ecee4dee"  # the prompt line's uuid
    assert turns[0].assistant_texts[-1].startswith("Created hello.py.")
    [write_call] = turns[0].tool_calls
    assert (write_call.tool, write_call.status, write_call.input["file_path"]) == (
        "Write",
        "completed",
        f"{project}/hello.py",
    )
    assert turns[0].files == ("hello.py",)
    edit, bash = turns[4].tool_calls
    assert (edit.tool, edit.status) == ("Edit", "completed")
    # a failed command: is_error, "Exit code 3" then its output
    assert (bash.tool, bash.status, bash.failed, bash.exit_code, bash.error) == ("Bash", "error", True, 3, None)
    assert (bash.title, bash.output) == ("Run it", "Exit code 3\nhello world")
    assert edit.exit_code is None and not edit.failed
    assert turns[4].files == ("hello.py",) and turns[4].ended_at and turns[4].ended_at > turns[4].started_at
    for turn in turns:  # the context our hooks injected (attachment lines) is nowhere in a turn
        assert "codememory" not in turn.user_text + "".join(turn.assistant_texts)


def test_codex_rollout_turns(project: Path, tmp_path: Path) -> None:
    path, lines = codex_file(project, tmp_path)
    write(path, lines)
    assert detect_source(path) == "codex"
    info, turns = read_session(path)
    assert (info.source, info.session_id, info.project_root) == ("codex", CODEX_SESSION, str(project))
    assert [t.user_text for t in turns][0::2] == ["create the hello file please", "anything else?"]
    assert turns[0].turn_id == "01a2085a-01a2-7503-8518-3cecaa098167"  # task_started's turn id
    patch, run = turns[0].tool_calls
    assert patch.status == "completed" and "apply_patch" in patch.input["cmd"]
    assert (run.status, run.failed, run.exit_code, run.error) == ("error", True, 3, None)
    assert (patch.exit_code, turns[1].tool_calls[0].exit_code) == (0, 0)  # "Exit code: 0", "exited with code 0"
    assert turns[0].files == ("hello.py",)  # from the FileChange item and the patch, once
    assert turns[1].files == ("greet.py",)  # `echo … > greet.py`
    for turn in turns:  # developer messages (our hooks' context) and <environment_context> are not prompts
        assert "codememory" not in turn.user_text and "environment_context" not in turn.user_text


def test_shell_written() -> None:
    assert codex_transcript.shell_written("echo hi > a.txt && cat a.txt | tee -a b.log >/dev/null") == [
        "a.txt",
        "b.log",
    ]
    assert codex_transcript.shell_written("printf x >>c.md; touch d e") == ["c.md", "d", "e"]
    assert codex_transcript.shell_written("ls -la 2>err.txt; grep x y") == []
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.py\n*** Delete File: b.py\n*** End Patch\nEOF"
    assert codex_transcript.shell_written(patch) == ["src/a.py", "b.py"]
    assert codex_transcript.shell_written("echo 'unclosed") == []


def user(content: object, uuid: str | None = None, at: str | None = None, **extra: object) -> dict[str, object]:
    """A Claude Code prompt (or tool result) line."""
    line: dict[str, object] = {"type": "user", "message": {"role": "user", "content": content}, **extra}
    if uuid:
        line["uuid"] = uuid
    if at:
        line["timestamp"] = at
    return line


def answer(blocks: list[dict[str, object]], stop: str, at: str, **extra: object) -> dict[str, object]:
    """A Claude Code assistant line."""
    message = {"id": f"msg-{at}", "role": "assistant", "content": blocks, "stop_reason": stop}
    return {"type": "assistant", "timestamp": at, "message": message, **extra}


def test_claude_meta_lines_and_interruptions(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    reminder = "<system-reminder>## codememory: memories\n- `mem_1`</system-reminder>"
    bash = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
    rows = [
        user(reminder + "fix the build", "u1", "2026-11-20T10:00:00Z", sessionId="s", cwd=str(project)),
        user("Caveat: meta text", "m1", isMeta=True),
        user("## codememory: injected by an old hook", "m2"),
        answer([{"type": "text", "text": "sub-agent talk"}], "end_turn", "2026-11-20T10:00:01Z", isSidechain=True),
        answer([bash], "tool_use", "2026-11-20T10:00:05Z"),
        user([{"type": "text", "text": "[Request interrupted by user for tool use]"}], "i1", "2026-11-20T10:00:09Z"),
        user("<command-name>/review</command-name><command-args>src</command-args>", "u2", "2026-11-20T10:01:00Z"),
    ]
    write(path, [json.dumps(r) + "\n" for r in rows])
    info, turns = read_session(path)
    assert info.session_id == "s" and [t.turn_id for t in turns] == ["u1", "u2"]
    first, second = turns
    assert first.user_text == "fix the build" and first.assistant_texts == ()
    assert first.completed and first.error == "interrupted by the user" and first.ended_at == "2026-11-20T10:00:09.000Z"
    assert [(c.tool, c.status) for c in first.tool_calls] == [("Bash", "error")]
    assert second.user_text == "/review src" and not second.completed  # no answer yet


def test_not_a_transcript(project: Path, tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n{not json\n")
    with pytest.raises(TranscriptError, match="not a transcript codememory can read"):
        read_session(junk)
    assert "not a transcript codememory can read" in str(capture(project, junk)["error"])
    assert "cannot read" in str(capture(project, tmp_path / "missing.jsonl")["error"])
    assert "unknown transcript source" in str(capture(project, junk, source="cursor")["error"])
    assert captured(project, "claude-code") == []


# --------------------------------------------------------------------------- capture
def test_incremental_capture_reads_each_byte_once(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    cut = prompt_line(lines, "please edit the greeting to hello world")  # turn 5
    mid = index_of(lines, "toolu_rec_edit1", cut)  # turn 5 half answered
    write(path, lines[:mid])
    first = capture(project, path)
    assert first["turns_captured"] == 4 and first["turns_pending"] == 1
    assert first["offset"] == sum(len(x.encode()) for x in lines[:cut])  # the unfinished turn's first byte
    again = capture(project, path)
    assert again["turns_captured"] == 0 and again["bytes_read"] == path.stat().st_size - int(first["offset"])

    # the rest arrives, turn 6's answer still being written (its line has no newline yet)
    answer = index_of(lines, "Nothing to do.", prompt_line(lines, "anything else?"))
    rest = "".join(lines[mid:answer]) + lines[answer][:100]
    write(path, [rest], "a")
    second = capture(project, path)
    assert second["turns_captured"] == 1 and second["turns_pending"] == 1
    write(path, [lines[answer][100:], *lines[answer + 1 :]], "a")
    third = capture(project, path)
    assert third["turns_captured"] == 1 and third["offset"] == path.stat().st_size
    assert capture(project, path)["bytes_read"] == 0

    _, full = read_session(path, root=str(project))
    assert captured(project, "claude-code") == [(t.turn_id, t.seq) for t in full]
    assert sorted(anchors(project)) == sorted({(CLAUDE_SESSION, t.turn_id) for t in full})  # each entry once
    log = log_text(project)
    assert "- User: create the hello file please" in log and "- Claude Code: Created hello.py." in log
    assert "- [Tool: Write `hello.py`] completed" in log and "- Files: hello.py" in log
    assert "- [Tool: Bash `python3 hello.py && exit 3`] failed (exit 3)" in log
    with Store.open(project) as store:
        cursor = CaptureTables(store.db).get_cursor("claude-code", str(path.resolve()))
    assert cursor is not None
    state = ReadState.from_json(cursor.position)
    assert (state.offset, state.seq, state.turn) == (path.stat().st_size, 6, full[-1].turn_id)


def test_crash_between_log_append_and_record(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    write(path, lines)
    # A capture that died after appending turn 1's entry, before recording it:
    info, turns = read_session(path, root=str(project))
    DailyLog(store_dir(project) / MEMORY_DIR, root=project).append(turns[0], info)
    report = capture(project, path)
    assert report["turns_captured"] == 6 and report["turns_repaired"] == 1
    assert len(anchors(project)) == 6 == len(set(anchors(project)))
    # A capture that died after recording its turns, before moving the cursor:
    with Store.open(project) as store:
        CaptureTables(store.db).set_cursor(
            "claude-code", str(path.resolve()), ReadState().to_json(), "2026-11-23T00:00:00.000Z"
        )
    assert capture(project, path)["turns_captured"] == 0
    assert len(anchors(project)) == 6 and len(captured(project, "claude-code")) == 6


def test_replaced_file_is_read_again_without_duplicates(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    write(path, lines)
    assert capture(project, path)["turns_captured"] == 6
    write(path, lines[: prompt_line(lines, "now edit it")])  # shorter than the cursor: a new file
    report = capture(project, path)
    assert report["turns_captured"] == 0 and report["offset"] == path.stat().st_size
    assert len(anchors(project)) == 6


def test_codex_stop_hook_finishes_the_turn(project: Path, tmp_path: Path) -> None:
    path, lines = codex_file(project, tmp_path)
    done = index_of(lines, '"task_complete"')  # Codex runs the Stop hook before writing this line
    write(path, lines[:done])
    assert capture(project, path)["turns_captured"] == 0
    turn_id = "01a2085a-01a2-7503-8518-3cecaa098167"
    report = capture(project, path, finished=[turn_id])
    assert report["turns_captured"] == 1 and report["offset"] == path.stat().st_size
    write(path, lines[done:], "a")
    assert capture(project, path)["turns_captured"] == 2
    _, full = read_session(path, root=str(project))
    assert captured(project, "codex") == [(t.turn_id, t.seq) for t in full]
    assert len(anchors(project)) == 3
    log = log_text(project)
    assert "- Codex: Added hello.py." in log and "- Files: greet.py" in log
    assert "- [Tool: exec_command `python3 hello.py && exit 3`] failed (exit 3)" in log


def test_session_end_takes_the_unfinished_turn(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    last = prompt_line(lines, "anything else?")
    write(path, lines[: last + 1])  # the last prompt, never answered
    first = capture(project, path)
    assert first["turns_captured"] == 5 and first["turns_pending"] == 1
    report = capture(project, path, final=True)
    assert report["turns_captured"] == 1 and report["turns_pending"] == 0
    assert "- User: anything else?" in log_text(project)


def test_secrets_and_private_spans_never_stored(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    deploy = {"type": "tool_use", "id": "t9", "name": "Bash", "input": {"command": f"deploy --key {SECRET_KEY}"}}
    result = {"type": "tool_result", "tool_use_id": "t9", "content": f"ok {PRIVATE}"}
    prompt = f"deploy with {SECRET_KEY} <private>{PRIVATE}</private> please"
    extra = [
        user(prompt, "sec1", "2026-11-23T12:30:00Z", sessionId=CLAUDE_SESSION),
        answer([{"type": "text", "text": f"Using {SECRET_KEY}"}, deploy], "tool_use", "2026-11-23T12:30:01Z"),
        user([result], at="2026-11-23T12:30:02Z"),
        answer([{"type": "text", "text": "Deployed."}], "end_turn", "2026-11-23T12:30:03Z"),
    ]
    write(path, lines + [json.dumps(r) + "\n" for r in extra])
    assert capture(project, path)["turns_captured"] == 7
    log = log_text(project)
    assert "- User: deploy with [REDACTED" in log and "please" in log
    folder = store_dir(project)
    stored = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    for secret in (SECRET_KEY, PRIVATE, "PRIVATE-RECORDED-TOKEN"):  # the recorded prompts had <private> spans
        assert secret.encode() not in stored


def test_injected_context_is_not_captured(project: Path, tmp_path: Path) -> None:
    claude, claude_lines = claude_file(project, tmp_path)
    codex, codex_lines = codex_file(project, tmp_path)
    write(claude, claude_lines)
    write(codex, codex_lines)
    assert sum("## codememory:" in x for x in claude_lines + codex_lines) >= 8  # what our hooks injected
    capture(project, claude)
    capture(project, codex)
    log = log_text(project)
    assert len(anchors(project)) == 9
    assert "codememory" not in log and "mem_" not in log and "environment_context" not in log


def test_read_session_feeds_extraction(project: Path, tmp_path: Path) -> None:
    from codememory.extract import extract_session

    path, lines = claude_file(project, tmp_path)
    write(path, lines)
    info, turns = read_session(path)
    with Store.open(project) as store:
        report = extract_session(store, info, turns, provider=None).to_dict()
        texts = [m.text for m in store.list(limit=20)]
    assert report["status"] == "ok" and report["last_seq"] == 6
    assert "greetings live in hello.py." in texts  # the `*Remember*:` note of turn 1


def test_bounded_captures_catch_up_in_order(project: Path, tmp_path: Path) -> None:
    path, lines = claude_file(project, tmp_path)
    write(path, lines)
    first = capture(project, path, max_turns=4)
    assert (first["turns_captured"], first["turns_pending"]) == (4, 2)
    # 1 KB is less than any turn: the capture still reads (and takes) whole turns
    assert capture(project, path, max_bytes=1000, max_turns=1)["turns_captured"] == 1
    assert capture(project, path, max_bytes=1000)["turns_captured"] == 1
    _, full = read_session(path, root=str(project))
    assert captured(project, "claude-code") == [(t.turn_id, t.seq) for t in full]


def test_stop_hint_ignored_for_a_turn_cut_by_the_read(project: Path, tmp_path: Path) -> None:
    path, lines = codex_file(project, tmp_path)
    write(path, lines[: index_of(lines, '"task_complete"')])
    turn_id = "01a2085a-01a2-7503-8518-3cecaa098167"
    size = path.stat().st_size
    cut = capture(project, path, finished=[turn_id], max_bytes=size - 2000)
    assert cut["turns_captured"] == 1  # re-read whole: the hinted turn was cut by the first read
    with Store.open(project) as store:
        [row] = CaptureTables(store.db).turns("codex")
    assert "Added hello.py" in row.summary  # its last answer, which the cut read had not reached


def test_idle_claude_and_codex_sessions_are_extracted_by_the_pass(project: Path, tmp_path: Path) -> None:
    """The hooks capture; the daemon's (or `codememory capture`'s) pass finds the sessions through the
    per-file cursors and extracts them once idle, reading each transcript only then."""
    from codememory.extract.capture_and_extract import run_pass

    for path, lines in (claude_file(project, tmp_path), codex_file(project, tmp_path)):
        write(path, lines)
        assert capture(project, path, final=True)["turns_captured"] > 0
    no_opencode = str(tmp_path / "no-opencode.db")
    # a minute after the recording's last line, with the default idle_after (an hour): nothing is idle yet
    minute_later = datetime(2026, 11, 23, 12, 22, 6, tzinfo=UTC)
    waiting = run_pass(opencode_db=no_opencode, roots={str(project)}, now=lambda: minute_later)
    assert waiting.capture.db.state == "missing" and waiting.memories_created == 0
    report = run_pass(opencode_db=no_opencode, roots={str(project)}, idle_after=0)
    sessions = {s.source: s for p in report.extraction for s in p.sessions}
    assert set(sessions) == {"claude-code", "codex"}
    assert all(s.status in ("ok", "empty") for s in sessions.values())
    assert report.memories_created > 0
    with Store.open(project) as store:
        sources = {m.source.split(" ")[0] for m in store.list(limit=500) if m.source}
    # the codex recording states nothing new (its *Remember* note repeats the claude one; files touched are
    # no memory), so its session is extracted but adds nothing
    assert sources == {"claude-code"}, sources
    again = run_pass(opencode_db=no_opencode, roots={str(project)}, idle_after=0)
    assert again.memories_created == 0 and [s for p in again.extraction for s in p.sessions] == []
