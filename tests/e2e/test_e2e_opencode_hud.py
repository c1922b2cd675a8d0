"""The HUD follows the relevance decision in a real OpenCode session (the real binary, a scripted model, the plugin
talking to a real daemon with the default embedding model): a step that needs no memory gets no block at all, and a
step about something the memory holds gets that memory in front of the model, also when it is one part of a request
that asks for two things."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from codememory.retrieval.proactive import LATER_MAX
from support.daemon import spawn
from support.opencode import OpenCodeHome, make_git_project
from support.request_parts import opencode_view
from support.scripted_llm import Reply, Script, ScriptedLLM, ToolCallSpec, is_title_request

pytestmark = pytest.mark.slow  # the real OpenCode binary

CODEMEMORY = str(Path(sys.executable).with_name("codememory"))
MEMORIES = (
    "Use httpx, not requests, for outbound HTTP calls in the webhook worker: we need HTTP/2",
    "The Postgres connection pool is capped at 20 in production (config/db.toml)",
    "Deploys go out on Tuesdays after the billing batch finishes",
    "Alembic migrations live in db/migrations; run them before the integration tests",
)
CHORE = "Rename the file notes.txt to NOTES.md, nothing else."
# a chore whose only words the store holds are the text it hands over to be written (a memory's own words)
WRITE_CHORE = "In NOTES.md, write 'Deploys go out on Tuesdays after the billing batch finishes' at the top."
NEEDS_MEMORY = "Which HTTP client should the webhook worker use for its outbound calls?"
# two asks; the memory answers the second only (asked as a whole, the request holds it back)
TWO_PARTS = "Add a healthcheck endpoint to the admin app, then check which HTTP client the webhook worker uses."


def run(env: dict[str, str], cwd: Path, *args: str) -> Any:
    done = subprocess.run([CODEMEMORY, *args, "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


@contextmanager
def opencode_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Path, script: Script, memories: tuple[str, ...]
) -> Iterator[tuple[OpenCodeHome, ScriptedLLM, dict[str, str]]]:
    """A fresh install (the default embedding model, no configuration) with `init`, `memories` stored (their ids by
    text) and a warm daemon; OpenCode talks to the scripted model."""
    with ScriptedLLM(script) as llm:
        oc = OpenCodeHome(tmp_path / "home", llm.base_url)
        # the plugin waits 300 ms for the HUD, which a loaded machine misses: what the HUD shows is tested, not speed
        opencode_env = oc.env
        monkeypatch.setattr(oc, "env", lambda: {**opencode_env(), "CODEMEMORY_PLUGIN_TIMEOUT_MS": "20000"})
        env = oc.env()
        run(env, project, "init", "--assistants", "opencode")
        ids = {text: run(env, project, "store", text)["memory"]["id"] for text in memories}
        daemon = spawn(env)
        try:
            # a daemon that has served before: its first retrieval loads the model, longer than the plugin waits
            warm = daemon.client(timeout=300).request(
                "POST", "/retrieve", {"project_root": str(project), "query_expansion": ["warm up"]}
            )
            assert warm.status == 200, warm.data
            yield oc, llm, ids
        finally:
            daemon.terminate()


def test_a_step_needing_nothing_gets_no_hud_block_and_one_needing_a_memory_gets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_git_project(tmp_path / "api")
    (project / "notes.txt").write_text("scratch\n", encoding="utf-8")
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "mv notes.txt NOTES.md", "description": "rename"})]),
            Reply("Renamed notes.txt to NOTES.md."),
            Reply(
                tool_calls=[ToolCallSpec("bash", {"command": "sed -i '1i Deploys' NOTES.md", "description": "edit"})]
            ),
            Reply("Added the line at the top of NOTES.md."),
            Reply("httpx: the webhook worker needs HTTP/2, which requests cannot do."),
            Reply("Added /healthz to the admin app; the webhook worker uses httpx."),
        ]
    )
    with opencode_session(tmp_path, monkeypatch, project, script, MEMORIES) as (oc, llm, ids):
        chore = oc.run(project, CHORE, timeout=300)
        chore_calls = len(llm.requests)
        oc.run(project, WRITE_CHORE, timeout=300)
        write_calls = len(llm.requests)
        oc.run(project, NEEDS_MEMORY, timeout=300)
        answer_calls = len(llm.requests)
        oc.run(project, TWO_PARTS, timeout=300)
    requests = list(llm.requests)
    assert chore.returncode == 0 and (project / "NOTES.md").exists()

    def views(bodies: list[dict[str, Any]]) -> list[Any]:  # the model's calls, not OpenCode's title requests
        return [opencode_view(b) for b in bodies if not is_title_request(b)]

    chore_views = views(requests[:chore_calls])
    assert len(chore_views) >= 2  # the tool call and the answer after it
    for view in chore_views:
        assert view.hud == [] and view.cold == [], (view.hud_ids(), view.cold_ids())
    write_views = views(requests[chore_calls:write_calls])
    assert len(write_views) >= 2  # the edit and the answer after it
    for view in write_views:  # the memory's words are the text to write, not what the chore is about
        assert view.hud == [], view.hud_ids()
    answer_views = views(requests[write_calls:answer_calls])
    assert answer_views and ids[MEMORIES[0]] in answer_views[0].hud_ids()
    assert set(answer_views[0].hud_ids()) <= {ids[MEMORIES[0]]}  # and nothing unrelated beside it
    two_part_views = views(requests[answer_calls:])
    assert two_part_views and ids[MEMORIES[0]] in two_part_views[0].hud_ids()
    assert set(two_part_views[0].hud_ids()) <= {ids[MEMORIES[0]]}


GOTCHA = "reports/render.py draws with Helvetica, which is Latin-1 only: Polish letters come out as '?'"
UNRELATED_REQUEST = "Put the customer's city on its own line under the street on the invoice."
# names the file the gotcha is about, and asks what the file itself answers
NAMING_REQUEST = "How many lines does reports/render.py have?"
# names the file the gotcha is about, and says what goes wrong with it
FAULT_REQUEST = "Polish letters come out wrong in the invoices reports/render.py draws. Fix it."


def test_a_step_opening_the_file_a_gotcha_is_about_gets_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent opening the file a gotcha names gets the gotcha; not when the user named the file and asked what
    it says (the file answers that): then neither the request nor the step calls for the gotcha. A request that
    names the file and says what goes wrong with it gets the gotcha at once."""
    project = make_git_project(tmp_path / "billing")
    (project / "reports").mkdir()
    (project / "reports" / "render.py").write_text("def render(invoice):\n    return invoice.street\n", "utf-8")
    read = ToolCallSpec("read", {"filePath": str(project / "reports" / "render.py")})
    script = Script(
        [
            Reply(tool_calls=[read]),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "git status --short", "description": "status"})]),
            Reply("The city goes on its own line in reports/render.py."),
            Reply(tool_calls=[read]),
            Reply("reports/render.py has 2 lines."),
            Reply("It needs a Unicode font instead of Helvetica."),
        ]
    )
    with opencode_session(tmp_path, monkeypatch, project, script, (GOTCHA, *MEMORIES)) as (oc, llm, ids):
        done = oc.run(project, UNRELATED_REQUEST, timeout=300)
        first_calls = len(llm.requests)
        named = oc.run(project, NAMING_REQUEST, timeout=300)
        named_calls = len(llm.requests)
        fault = oc.run(project, FAULT_REQUEST, timeout=300)
    requests = list(llm.requests)
    gotcha = ids[GOTCHA]
    assert done.returncode == 0 and named.returncode == 0, done.stderr + named.stderr
    views = [opencode_view(b) for b in requests[:first_calls] if not is_title_request(b)]
    assert len(views) == 3  # before the read, after it, after git status
    assert gotcha not in views[0].hud_ids()  # the request's words alone do not call for it
    assert views[1].hud_ids() == [gotcha]  # the agent has just opened the file the gotcha is about
    assert gotcha not in views[2].hud_ids()  # git status touches no file: nothing calls for it any more
    named_views = [opencode_view(b) for b in requests[first_calls:named_calls] if not is_title_request(b)]
    assert len(named_views) == 2  # before the read, after it
    for view in named_views:
        assert view.hud == [], view.hud_ids()
    assert fault.returncode == 0, fault.stderr
    fault_views = [opencode_view(b) for b in requests[named_calls:] if not is_title_request(b)]
    assert len(fault_views) == 1 and gotcha in fault_views[0].hud_ids()  # the request names the gotcha's file


WORKER_GOTCHA = "hooks/sender.py is imported by the cron container too: nothing at its module level may open a socket"
SMALL_CHORE = "Rename notes.txt to NOTES.md, nothing else."


def test_a_turns_later_steps_show_the_request_and_the_touched_file_and_a_chore_turn_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's first call shows the request's memory; the step that opens the file a gotcha names gets the gotcha
    (a later call shows at most LATER_MAX memories); the routine step after it no longer does. A chore turn (its request
    calls for nothing) gets no block at any call, its working step (a rename) and its routine one (git status)."""
    project = make_git_project(tmp_path / "webhooks")
    (project / "hooks").mkdir()
    (project / "hooks" / "sender.py").write_text("import requests\n\ndef send(url, body):\n    ...\n", "utf-8")
    (project / "notes.txt").write_text("scratch\n", encoding="utf-8")
    status = ToolCallSpec("bash", {"command": "git status --short", "description": "status"})
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(project / "hooks" / "sender.py")})]),
            Reply(tool_calls=[status]),
            Reply("httpx: the webhook worker needs HTTP/2; hooks/sender.py still imports requests."),
            Reply(tool_calls=[ToolCallSpec("bash", {"command": "mv notes.txt NOTES.md", "description": "rename"})]),
            Reply(tool_calls=[status]),
            Reply("Renamed notes.txt to NOTES.md."),
        ]
    )
    with opencode_session(tmp_path, monkeypatch, project, script, (WORKER_GOTCHA, *MEMORIES)) as (oc, llm, ids):
        first = oc.run(project, NEEDS_MEMORY, timeout=300)
        turn_calls = len(llm.requests)
        chore = oc.run(project, SMALL_CHORE, timeout=300)
    requests = list(llm.requests)
    gotcha = ids[WORKER_GOTCHA]
    assert first.returncode == 0 and chore.returncode == 0 and (project / "NOTES.md").exists()
    turn = [opencode_view(b) for b in requests[:turn_calls] if not is_title_request(b)]
    assert len(turn) == 3  # before the read, after it, after git status
    assert ids[MEMORIES[0]] in turn[0].hud_ids()  # the turn's first call: the request's memory
    assert gotcha in turn[1].hud_ids() and len(turn[1].hud_ids()) <= LATER_MAX  # the file the gotcha names was opened
    assert gotcha not in turn[2].hud_ids()  # git status touches no file
    chores = [opencode_view(b) for b in requests[turn_calls:] if not is_title_request(b)]
    assert len(chores) == 3
    for view in chores:
        assert view.hud == [], view.hud_ids()


# four sentences: the plugin sends the first three as one phrase and the fourth as the next, both the request's
LONG_REQUEST = (
    "Add a healthcheck endpoint to the admin app. Return 200 with the build version. Keep the handler small. "
    "Then run the Alembic database migrations before the integration tests."
)


def test_a_later_step_keeps_what_a_long_requests_later_sentences_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory only the request's fourth sentence calls for (the migrations) is the request's: the turn's later
    call, after the agent opened a file it does not name, still shows it."""
    project = make_git_project(tmp_path / "admin")
    (project / "admin").mkdir()
    (project / "admin" / "app.py").write_text("def create_app():\n    return None\n", "utf-8")
    script = Script(
        [
            Reply(tool_calls=[ToolCallSpec("read", {"filePath": str(project / "admin" / "app.py")})]),
            Reply("The healthcheck goes into admin/app.py; migrations run before the integration tests."),
        ]
    )
    with opencode_session(tmp_path, monkeypatch, project, script, MEMORIES) as (oc, llm, ids):
        done = oc.run(project, LONG_REQUEST, timeout=300)
    assert done.returncode == 0, done.stderr
    views = [opencode_view(b) for b in llm.requests if not is_title_request(b)]
    assert len(views) == 2  # before the read, after it
    migrations = ids[MEMORIES[3]]
    assert migrations in views[0].hud_ids()  # the turn's first call
    assert migrations in views[1].hud_ids()  # a later call: still the request's
