"""The model path's contract, checked on what reaches the scripted model servers: a real `opencode` session
(with failing tool calls) captured and extracted by `codememory capture`, configured like a user would, with a
separate compression model. Also: the daily log of those failed tool calls, and prompt-file errors.

What each request must carry: the system prompt read from the prompt files, the transcript with every tool
call compressed (by the compression model for commands, deterministically for reads), the stored memories
with their ids, and the answer's JSON schema as the response format; an answer that breaks the schema gets one
repair request, then is rejected with its reason recorded and nothing of it stored.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory.capture.opencode_db import OpenCodeDB
from codememory.core.project import store_dir
from codememory.extract.output import answer_schema
from codememory.extract.prompt_templates import PROMPTS_DIR
from codememory.service.project_store import Store
from codememory.text.tokens import estimate_tokens
from support.daemon import isolated_env
from support.opencode import OpenCodeHome, make_git_project, require_opencode
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, message_text

pytestmark = pytest.mark.slow  # a session of the real OpenCode binary (the module's `world`)

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
FAILING_TESTS = "echo 'E sqlite3.OperationalError: no such table: links'; exit 1"  # under 80 characters
PROMPT = "We decided to use plain sqlite3 instead of SQLAlchemy: the project stays dependency-free. Run the tests."
MARKER = "HOUSE-RULES-7Q"  # in our own copy of the system prompt: proves the request's prompt is the file's
COMPRESSED = "Ran the test suite: 1 failed (exit 1), sqlite3.OperationalError no such table: links."
LESSON = "An in-memory SQLite database exists per connection: tests must share one connection."
DECISION = "Use plain sqlite3 instead of SQLAlchemy, because the project stays dependency-free."


@dataclass
class World:
    oc: OpenCodeHome
    project: Path
    session: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_opencode()
    base = tmp_path_factory.mktemp("contract")
    project = make_git_project(base / "links")
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("bash", {"command": FAILING_TESTS, "description": "run the tests"})]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "echo ok", "description": "check"})]),
            Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(project / "missing.py")})]),
            Reply("The in-memory database is per connection; the tests now share one connection."),
        ]
    )
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(base / "oc-home", llm.base_url)
        session = oc.run(project, PROMPT).check().session_id
    assert session
    yield World(oc, project, session)


@pytest.fixture
def env(world: World, tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh store in the world's project, and the environment of a codememory process using it."""
    shutil.rmtree(store_dir(world.project), ignore_errors=True)
    Store.init(world.project)[0].close()
    yield isolated_env(tmp_path, OPENCODE_DB=str(world.oc.db_path))
    shutil.rmtree(store_dir(world.project), ignore_errors=True)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CODEMEMORY, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def configure(world: World, env: dict[str, str], llm: str, **settings: Any) -> None:
    """The project's config (trusted by its user: settings that send data apply only then)."""
    lines = ["[capture]", "idle_after = 0", "min_messages = 1", "", "[llm]", 'provider = "openai"']
    lines += [f'base_url = "{llm}"', 'model = "extractor"'] + [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    (store_dir(world.project) / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run(env, "--project", str(world.project), "trust")
    assert done.returncode == 0, done.stderr


def capture(env: dict[str, str], *args: str, status: int = 0) -> dict[str, Any]:
    done = run(env, "capture", "--json", *args)
    assert done.returncode == status, done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def session_report(report: dict[str, Any]) -> dict[str, Any]:
    (session,) = [s for p in report["extraction"] for s in p["sessions"]]
    return session  # type: ignore[no-any-return]


def memories(project: Path) -> list[dict[str, Any]]:
    with Store.open(project) as store:
        return [m.to_dict() for m in store.list(limit=100, include_superseded=True)]


def extraction_details(project: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(store_dir(project) / "memory.db")
    try:
        rows = db.execute("SELECT method, status, detail FROM extractions ORDER BY id").fetchall()
    finally:
        db.close()
    return [{"method": m, "status": s, **json.loads(d)} for m, s, d in rows]


def memory(text: str, category: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, "category": category, "importance": 0.9, "entities": [], **extra}


class Model:
    """Extraction answers in order (the last repeats); title requests (OpenCode's) never reach it here."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)

    def __call__(self, body: dict[str, Any]) -> Reply:
        return Reply(self.answers.pop(0) if len(self.answers) > 1 else self.answers[0])


def prompts_copy(folder: Path) -> Path:
    shutil.copytree(PROMPTS_DIR, folder)
    system = folder / "extraction_system.txt"
    system.write_text(system.read_text(encoding="utf-8") + f"\nHouse rule {MARKER}: be brief.\n", encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- the daily log (issue 15, item 4)
def test_failed_tool_calls_are_captured_failed_with_their_exit_status(world: World, env: dict[str, str]) -> None:
    with OpenCodeDB(world.oc.db_path) as reader:
        (turn,) = reader.turns(world.session)
    failing, fine, read = turn.tool_calls
    # OpenCode ends a bash part "completed" whatever the exit status; it is in state.metadata.exit
    assert (failing.status, failing.failed, failing.exit_code) == ("error", True, 1)
    assert (fine.status, fine.failed, fine.exit_code) == ("completed", False, 0)
    assert (read.status, read.exit_code) == ("error", None) and "missing.py" in (read.error or "")

    report = capture(env, "--no-extract")
    assert report["turns_captured"] == 1
    log = "".join(p.read_text() for p in (store_dir(world.project) / "memory").glob("*.md"))
    assert f"- [Tool: bash `{FAILING_TESTS}`] failed (exit 1)\n" in log
    assert "- [Tool: bash `echo ok`] completed\n" in log
    assert "- [Tool: read `missing.py`] failed: " in log and "File not found" in log


# --------------------------------------------------------------------------- the model's contract (item 3)
def test_requests_carry_the_prompt_files_the_compressed_transcript_known_memories_and_the_schema(
    world: World, env: dict[str, str], tmp_path: Path
) -> None:
    with Store.open(world.project) as store:
        known = store.add("Storage uses plain sqlite3, no ORM.", category="decision").memory.id
        old = store.add("Tests run against a fresh in-memory SQLite database per connection.", category="fact")
        unrelated = store.add("The release notes live in CHANGELOG.md.", category="fact").memory.id
    lines = [f"- {known} [decision] Storage uses plain sqlite3, no ORM.", f"- {old.memory.id} [fact] {old.memory.text}"]
    room = sum(estimate_tokens(line) + 1 for line in lines)  # the two relevant memories, not the third
    answer = {
        "memories": [memory(LESSON, "gotcha", turn=1, supersedes=[old.memory.id])],
        "already_known": [known],
    }
    prompts = prompts_copy(tmp_path / "prompts")
    with (
        ScriptedLLM(Model(json.dumps(answer))) as extractor,
        ScriptedLLM(Script([Reply(COMPRESSED)], fallback="Ran a command."), model="tiny-compressor") as compressor,
    ):
        configure(
            world,
            env,
            extractor.base_url,
            compress_model="tiny",
            compress_base_url=compressor.base_url,
            prompts_dir=str(prompts),
            known_memories_tokens=room,
        )
        report = capture(env)
        asked, compressed = list(extractor.requests), list(compressor.requests)

    # The compression model: the compression prompt file, each command with its status; reads are exact already.
    assert len(compressed) == 2
    system_text = (prompts / "compression_system.txt").read_text(encoding="utf-8")
    assert all(r["model"] == "tiny" and r["messages"][0]["content"] == system_text for r in compressed)
    first_call = message_text(compressed[0]["messages"][1])
    assert "Status: error (exit 1)" in first_call and "no such table: links" in first_call
    assert "Status: completed (exit 0)" in message_text(compressed[1]["messages"][1])

    # The extraction model: our prompt file, the compressed transcript, the known memories, the schema.
    (request,) = asked
    assert request["model"] == "extractor" and request["temperature"] == 0
    system, user = request["messages"]
    assert system["content"] == (prompts / "extraction_system.txt").read_text(encoding="utf-8")
    assert MARKER in system["content"]
    text = message_text(user)
    assert f'[turn 1]\nUser: "{PROMPT}"' in text  # `opencode run` stores its prompt argument quoted
    assert f"Tool: {COMPRESSED}" in text  # the compression model's sentence replaces the tool's I/O
    assert "Tool: Ran `echo ok`." not in text and "Tool: Ran a command." in text
    assert "Tool: Failed to read missing.py" in text  # deterministic: no model call for a read
    # the most relevant first (in-memory, database, per, connection are in the transcript), within the budget
    assert f"{lines[1]}\n{lines[0]}\n" in text and unrelated not in text
    assert "Assistant: The in-memory database is per connection" in text
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": answer_schema(), "strict": False},
    }

    # The answer: stored, superseding the old memory; the restated one counted as a duplicate.
    session = session_report(report)
    assert session["status"] == "ok" and session["llm_calls"] == 3 and known in session["duplicate_ids"]
    by_text = {m["text"]: m for m in memories(world.project)}
    assert by_text[LESSON]["entered_by"] == "codememory-extract:llm" and by_text[LESSON]["category"] == "gotcha"
    assert by_text[old.memory.text]["superseded_by"] == by_text[LESSON]["id"]
    stats = json.loads(run(env, "--project", str(world.project), "stats", "--json").stdout)["llm_spend"]
    assert {(m["model"], m["calls"]) for m in stats["per_model"]} == {("tiny-compressor", 2), ("scripted-model", 1)}


def test_a_schema_violating_answer_is_repaired_once(world: World, env: dict[str, str]) -> None:
    bad = json.dumps({"memories": [memory(DECISION, "lesson")]})  # not a category
    good = json.dumps({"memories": [memory(DECISION, "decision", turn=1)]})
    with ScriptedLLM(Model(bad, good)) as llm:
        configure(world, env, llm.base_url)
        report = capture(env)
        asked = list(llm.requests)
    assert len(asked) == 2
    repair = message_text(asked[1]["messages"][1])
    assert repair.startswith(message_text(asked[0]["messages"][1]))  # the same request, then the repair
    assert "could not be used: memories[0].category: Input should be 'decision'" in repair
    assert '"category": "lesson"' in repair  # the previous answer, quoted back
    assert session_report(report)["status"] == "ok"
    assert [m["text"] for m in memories(world.project) if m["entered_by"] == "codememory-extract:llm"] == [DECISION]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (json.dumps({"memories": [memory("x" * 600, "decision")]}), "text: String should have at most 500"),
        (json.dumps({"memories": [{"text": DECISION, "category": "decision"}]}), "importance: Field required"),
        (json.dumps({"memories": [memory(DECISION, "decision", supersedes=["mem_0000dead"])]}), "is not the id"),
        ("Sure! Here are the memories you asked for.", "holds no JSON"),
    ],
)
def test_an_answer_invalid_twice_is_rejected_with_its_reason_and_nothing_of_it_is_stored(
    world: World, env: dict[str, str], answer: str, reason: str
) -> None:
    with ScriptedLLM(Model(answer)) as llm:
        configure(world, env, llm.base_url)
        report = capture(env, status=1)  # the rejection is reported as the session's error
        assert len(llm.requests) == 2  # the request and one repair, no more
    session = session_report(report)
    assert any(reason in e for e in session["errors"]), session["errors"]
    (detail,) = extraction_details(world.project)
    assert detail["method"] == "heuristic" and detail["reason"].startswith("model output invalid twice")
    assert reason in detail["reason"]
    assert not [m for m in memories(world.project) if m["entered_by"] == "codememory-extract:llm"]
    assert not [m for m in memories(world.project) if "x" * 100 in m["text"]]


# --------------------------------------------------------------------------- prompt files
def test_a_missing_or_empty_prompt_file_is_a_clear_error(world: World, env: dict[str, str], tmp_path: Path) -> None:
    prompts = prompts_copy(tmp_path / "prompts")
    (prompts / "extraction_repair.txt").unlink()
    user_config = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(
        f'[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nprompts_dir = "{prompts}"\n',
        encoding="utf-8",
    )
    done = run(env, "capture")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"codememory: error: extraction prompt file missing: {prompts}/extraction_repair.txt"
    (prompts / "extraction_repair.txt").write_text("\n", encoding="utf-8")
    done = run(env, "capture")
    assert done.returncode == 2 and "extraction prompt file is empty" in done.stderr and "Traceback" not in done.stderr

    # A project's own (relative) prompts folder is the project's error: the pass goes on, exit status 1.
    user_config.unlink()
    with ScriptedLLM(Model('{"memories": []}')) as llm:
        configure(world, env, llm.base_url, prompts_dir="prompts")
        report = capture(env, status=1)
        assert llm.requests == []
    assert report["turns_captured"] == 1
    (error,) = report["errors"]
    assert f"extraction prompt file missing: {world.project}/prompts/extraction_system.txt" in error
