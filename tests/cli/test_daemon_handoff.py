"""With the daemon up, `codememory search` and `store` hand their work to it (its store is open, its model warm) and
print what the daemon answered; without it, or when it will not serve the project, they do the work themselves.
The daemon's /health counts the stores it has open: that is how a test sees who did the work."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support.daemon import PY, Daemon, isolated_env, spawn

pytestmark = pytest.mark.slow  # a real daemon and real CLI processes


def _env(tmp_path: Path) -> dict[str, str]:
    """A user with no CODEMEMORY_* setting in the environment (those would keep the work in the CLI's process):
    keyword search only, set in the user's config file, which the daemon and the CLI both read."""
    env = isolated_env(tmp_path, CODEMEMORY_EMBEDDING_PROVIDER=None, CODEMEMORY_DAEMON_MAX_BODY_BYTES=None)
    config = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    return env


def run(env: dict[str, str], *args: Any, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    script = Path(PY).parent / "codememory"
    return subprocess.run(
        [str(script), *map(str, args)], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


# A daemon without background tasks: nothing but a request opens a store (the tasks open registered projects' stores
# on their own schedule).
NO_TASKS = "from codememory.daemon import run_loop; run_loop.run(foreground=True, port=0, tasks=[])"


def open_stores(daemon: Daemon) -> int:
    return int(daemon.client().health()["projects_open"])


@pytest.fixture
def daemon(tmp_path: Path) -> Any:
    env = _env(tmp_path)
    started = spawn(env, script=NO_TASKS)
    yield started
    started.terminate()


def test_search_and_store_are_done_by_the_daemon(daemon: Daemon, tmp_path: Path) -> None:
    env, project = daemon.env, tmp_path / "shop"
    project.mkdir()
    ok(run(env, "--project", project, "init", "--assistants", "none"))
    assert open_stores(daemon) == 0

    stored = json.loads(ok(run(env, "--project", project, "store", "--json", stdin="Use httpx, not requests\n")))
    assert stored["created"] is True and stored["memory"]["text"] == "Use httpx, not requests"
    assert open_stores(daemon) == 1  # the daemon opened the store to write the memory

    found = json.loads(ok(run(env, "--project", project, "search", "why did we choose httpx?", "--json")))
    assert [r["id"] for r in found["results"]] == [stored["memory"]["id"]]
    text = ok(run(env, "--project", project, "search", "httpx"))
    assert stored["memory"]["id"] in text and "Use httpx, not requests" in text

    # The same answer as the CLI's own search (the daemon switched off for this process).
    alone = dict(env, CODEMEMORY_HOOK_NO_DAEMON="1")
    own = json.loads(ok(run(alone, "--project", project, "search", "why did we choose httpx?", "--json")))
    assert [(r["id"], r["score"], r["match"]) for r in own["results"]] == [
        (r["id"], r["score"], r["match"]) for r in found["results"]
    ]
    assert {k: v for k, v in own.items() if k != "results"} == {k: v for k, v in found.items() if k != "results"}


def test_the_cli_does_the_work_itself_when_the_daemon_will_not(daemon: Daemon, tmp_path: Path) -> None:
    env = daemon.env
    unregistered = tmp_path / "private"
    unregistered.mkdir()
    ok(run(env, "--project", unregistered, "init", "--assistants", "none", "--no-global"))
    stored = json.loads(
        ok(run(env, "--project", unregistered, "store", "Deploys go through the staging queue", "--json"))
    )
    found = json.loads(ok(run(env, "--project", unregistered, "search", "staging", "--json")))
    assert [r["id"] for r in found["results"]] == [stored["memory"]["id"]]
    assert open_stores(daemon) == 0  # never served: the project is not in the registry

    # A setting in this process's environment that the daemon does not have keeps the work here too.
    registered = tmp_path / "shop"
    registered.mkdir()
    ok(run(env, "--project", registered, "init", "--assistants", "none"))
    ok(run(dict(env, CODEMEMORY_SEARCH_NEIGHBOUR_WEIGHT="0"), "--project", registered, "search", "staging"))
    assert open_stores(daemon) == 0

    # Errors are the CLI's own, whoever tried first.
    bad = run(env, "--project", registered, "search", "staging", "--after", "not a date")
    assert bad.returncode == 2 and bad.stderr.startswith("codememory: error: ") and "Traceback" not in bad.stderr


def test_the_cli_works_when_the_daemon_is_gone(tmp_path: Path) -> None:
    env = _env(tmp_path)
    daemon = spawn(env, script=NO_TASKS)
    project = tmp_path / "shop"
    project.mkdir()
    ok(run(env, "--project", project, "init", "--assistants", "none"))
    assert daemon.terminate() == 0
    stored = json.loads(ok(run(env, "--project", project, "store", "Nightly backups at 02:00", "--json")))
    found = json.loads(ok(run(env, "--project", project, "search", "backups", "--json")))
    assert [r["id"] for r in found["results"]] == [stored["memory"]["id"]]


def test_a_query_over_the_cap_is_refused_before_the_daemon_and_one_at_the_cap_is_answered(
    daemon: Daemon, tmp_path: Path
) -> None:
    from codememory.core.bounded_input import QUERY_MAX_CHARS

    env, project = daemon.env, tmp_path / "shop"
    project.mkdir()
    ok(run(env, "--project", project, "init", "--assistants", "none"))
    for length in (QUERY_MAX_CHARS + 1, 100_000):
        huge = run(env, "--project", project, "search", "a" * length, "--json")
        assert huge.returncode == 2 and "Traceback" not in huge.stderr, huge.stderr
        assert huge.stderr.count("\n") == 1 and f"the limit is {QUERY_MAX_CHARS:,}" in huge.stderr
    assert open_stores(daemon) == 0  # refused here: nothing was sent

    at_cap = json.loads(ok(run(env, "--project", project, "search", "a" * QUERY_MAX_CHARS, "--json")))
    assert at_cap["results"] == []
    assert open_stores(daemon) == 1  # the daemon answered it


def test_a_store_the_daemon_is_slow_to_answer_is_waited_for_not_done_twice(tmp_path: Path) -> None:
    """A user trial: an 8.8k-character store with the daemon busy embedding it took 38 s, the CLI having given up
    after 10 s and loaded the model to embed and store the text itself, then reporting the daemon's copy as "Already
    stored". A daemon (here a real HTTP server on 127.0.0.1 that answers /cli/store after 12 s) is waited for."""
    import http.server
    import os
    import threading

    from codememory.cli.daemon_handoff import TIMEOUT_SECONDS

    env = _env(tmp_path)
    project = tmp_path / "shop"
    project.mkdir()
    ok(run(dict(env, CODEMEMORY_HOOK_NO_DAEMON="1"), "--project", project, "init", "--assistants", "none"))
    answer = {
        "created": True,
        "duplicate_of": None,
        "duplicate_reason": None,
        "embedded": True,
        "links": [],
        "memory": {"id": "mem_5107da11"},
    }
    asked = []

    class SlowDaemon(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            asked.append(self.path)
            threading.Event().wait(TIMEOUT_SECONDS + 2)  # the daemon embedding a long text on a busy machine
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowDaemon)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state = Path(env["XDG_STATE_HOME"]) / "codememory"
    state.mkdir(parents=True, exist_ok=True)
    (state / "daemon.json").write_text(json.dumps({"port": server.server_address[1], "pid": os.getpid()}))
    (state / "token").write_text("t0ken")
    try:
        done = run(env, "--project", project, "store", "a long note " * 800)
    finally:
        server.shutdown()
    assert asked == ["/cli/store"]
    assert done.returncode == 0 and done.stdout == "Stored mem_5107da11\n", done
    assert "waiting for the daemon" in done.stderr
    alone = dict(env, CODEMEMORY_HOOK_NO_DAEMON="1")
    assert json.loads(ok(run(alone, "--project", project, "list", "--json")))["total"] == 0  # not stored here too


def test_a_store_is_not_waited_for_by_a_daemon_that_answers_nothing_at_all(tmp_path: Path) -> None:
    """A daemon that is stopped or hung still has its port taken by the kernel: the request is sent and no answer
    comes, nor to /health. The CLI waited the five minutes a slow embedding gets; it stores the text itself once
    /health does not answer either (the run's 120 s limit is well under those five minutes)."""
    import os
    import socket

    env = _env(tmp_path)
    project = tmp_path / "shop"
    project.mkdir()
    ok(run(dict(env, CODEMEMORY_HOOK_NO_DAEMON="1"), "--project", project, "init", "--assistants", "none"))
    with socket.socket() as hung:  # listens, never accepts: what a stopped daemon's port is
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        state = Path(env["XDG_STATE_HOME"]) / "codememory"
        state.mkdir(parents=True, exist_ok=True)
        (state / "daemon.json").write_text(json.dumps({"port": hung.getsockname()[1], "pid": os.getpid()}))
        (state / "token").write_text("t0ken")
        done = run(env, "--project", project, "store", "the pool holds 20 connections")
    assert done.returncode == 0 and done.stdout.startswith("Stored mem_"), done
    alone = dict(env, CODEMEMORY_HOOK_NO_DAEMON="1")
    assert json.loads(ok(run(alone, "--project", project, "list", "--json")))["total"] == 1
