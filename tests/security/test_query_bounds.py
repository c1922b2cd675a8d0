"""A query's cost is bounded: every entry point refuses a query over QUERY_MAX_CHARS with one clear line, and a query
at the cap costs bounded memory even against a hostile repository whose memories hold long runs of one letter (the
keyword and typo passes' work grows with the query's phrases and substrings, not only its length).

Peak memory is read off real processes: `ru_maxrss` of a child the test waits for (the CLI, the hook), and the
daemon's own high-water mark (VmHWM in /proc/<pid>/status) around the requests. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory.core.bounded_input import QUERY_MAX_CHARS
from support.daemon import Daemon, isolated_env, make_project, spawn
from support.mcp import project_session
from support.pulled import put, record

BIN = Path(sys.executable).parent
MiB = 1024 * 1024
RUN = "a" * 9000  # a memory holding a 9,000-character run of one letter
AT_CAP = "a" * QUERY_MAX_CHARS
PHRASE_AT_CAP = '"' + ("a " * (QUERY_MAX_CHARS // 2 - 1)).strip() + '"'
DOTTED_AT_CAP = ".".join("a" * (QUERY_MAX_CHARS // 2))[:QUERY_MAX_CHARS]  # one chunk the index splits in 2,000 words
HUGE = "a" * 100_000
LIMIT_SAID = f"the limit is {QUERY_MAX_CHARS:,}"
# Headroom over the same process answering a one-word query: before the bounds, a query at the cap took 230 MB more
# against this repository, and 100,000 characters 2.2 GB.
HEADROOM = 64 * MiB


def hostile_repository(root: Path) -> None:
    """Ten pulled memories of one long run each, and ten of one word repeated (4,500 words)."""
    for i in range(10):
        put(root, f"mem_a11ce{i:03x}", record(f"mem_a11ce{i:03x}", f"{RUN} run{i}", category="note"))
        put(root, f"mem_b0b00{i:03x}", record(f"mem_b0b00{i:03x}", ("a " * 4500) + f"words{i}", category="note"))


@pytest.fixture
def world(tmp_path: Path) -> tuple[dict[str, str], Path]:
    env = isolated_env(tmp_path / "env", CODEMEMORY_DAEMON_MAX_BODY_BYTES=None)  # the default cap: 8 phrases fit
    root = tmp_path / "proj"
    make_project(env, root, "Deploys go through make deploy-staging")
    hostile_repository(root)
    return env, root


_MEASURE = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode  # standard input, output and error passed through
with open(sys.argv[1], "w") as report:
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code, file=report)
sys.exit(code)
"""


def measured(
    tmp: Path, argv: list[str], env: dict[str, str], stdin: str | None = None
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `argv` as the only child of a small Python process that reports the child's peak resident memory (bytes)."""
    report = tmp / "rusage.txt"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(report), *argv],
        input=stdin or "",
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert report.exists(), done.stderr
    peak_kib, code = map(int, report.read_text().split())
    assert code == done.returncode
    return done, peak_kib * 1024


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_cli_refuses_a_huge_query_and_a_query_at_the_cap_costs_bounded_memory(
    world: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, root = world
    search = [str(BIN / "codememory"), "--project", str(root), "search", "--json"]
    done, baseline = measured(tmp_path, [*search, "deploy"], env)
    assert done.returncode == 0, done.stderr
    for query in (AT_CAP, PHRASE_AT_CAP, DOTTED_AT_CAP):
        done, peak = measured(tmp_path, [*search, query], env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"] is not None
        assert peak - baseline < HEADROOM, f"{query[:20]}...: {peak / MiB:.0f} MiB vs {baseline / MiB:.0f} MiB"
    done, peak = measured(tmp_path, [*search, HUGE], env)
    assert LIMIT_SAID in one_line(done) and "100,000 characters" in done.stderr
    assert peak - baseline < HEADROOM
    done, _ = measured(tmp_path, [str(BIN / "codememory"), "--project", str(root), "sessions", "search", HUGE], env)
    assert LIMIT_SAID in one_line(done)


def test_a_huge_prompt_costs_the_hook_bounded_memory(world: tuple[dict[str, str], Path], tmp_path: Path) -> None:
    """The hooks take the prompt as the query (its first characters): a pasted megabyte is not refused, and costs
    no more than a short prompt."""
    env, root = world
    hook_env = {**env, "CODEMEMORY_HOOK_NO_DAEMON": "1"}
    argv = [str(BIN / "codememory-hook"), "claude", "UserPromptSubmit"]

    def payload(prompt: str, session: str) -> str:
        event = {"session_id": session, "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        return json.dumps(event)

    done, baseline = measured(tmp_path, argv, hook_env, payload("how do deploys work", "s-1"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    for n, prompt in enumerate(("a" * 1_000_000, ("a " * 500_000), '"' + "a " * 5000 + '"')):
        done, peak = measured(tmp_path, argv, hook_env, payload(prompt, f"s-{n + 2}"))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert peak - baseline < HEADROOM, f"{peak / MiB:.0f} MiB vs {baseline / MiB:.0f} MiB"


def high_water(pid: int) -> int:
    """A live process's peak resident memory so far, in bytes (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def daemon(world: tuple[dict[str, str], Path]) -> Iterator[tuple[Daemon, Path]]:
    env, root = world
    d = spawn(env)
    try:
        yield d, root
    finally:
        d.terminate()


def post(d: Daemon, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    status, _, data = d.raw(
        "POST", path, json.dumps(body).encode(), d.auth_headers(**{"Content-Type": "application/json"})
    )
    return status, data


def test_the_daemon_refuses_a_huge_query_and_answers_one_at_the_cap_in_bounded_memory(
    daemon: tuple[Daemon, Path],
) -> None:
    d, root = daemon
    project = str(root)
    status, _ = post(d, "/memory/search", {"project_root": project, "query": "deploy"})
    assert status == 200
    before = high_water(d.proc.pid)
    for query in (AT_CAP, PHRASE_AT_CAP, DOTTED_AT_CAP):
        status, data = post(d, "/memory/search", {"project_root": project, "query": query})
        assert status == 200, data
    status, data = post(d, "/retrieve", {"project_root": project, "query_expansion": [AT_CAP] * 8})
    assert status == 200, data
    status, data = post(d, "/retrieve", {"project_root": project, "query_expansion": AT_CAP + ";" + PHRASE_AT_CAP})
    assert status == 200, data
    grew = high_water(d.proc.pid) - before
    assert grew < HEADROOM, f"the daemon's peak grew by {grew / MiB:.0f} MiB"

    for path, body in (
        ("/memory/search", {"project_root": project, "query": HUGE}),
        ("/retrieve", {"project_root": project, "query_expansion": [HUGE]}),
        ("/retrieve", {"project_root": project, "query_expansion": "a" * (QUERY_MAX_CHARS + 1)}),
        ("/sessions/search", {"project_root": project, "query": HUGE}),
    ):
        status, data = post(d, path, body)
        assert status in (400, 413, 422), (path, status)
        said = json.dumps(data)
        assert "Traceback" not in said and ("4000" in said or "4,000" in said), (path, said[:300])


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await session.call_tool(name, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    return bool(result.isError), text


def test_mcp_tools_refuse_a_huge_query_with_a_clear_error(world: tuple[dict[str, str], Path]) -> None:
    _env, root = world

    async def body(session: ClientSession) -> list[tuple[bool, str]]:
        return [
            await call(session, "memory_search", {"query": HUGE}),
            await call(session, "memory_retrieve", {"query_expansion": ["deploys", HUGE]}),
            await call(session, "search_sessions", {"query": HUGE}),
            await call(session, "memory_search", {"query": AT_CAP}),
        ]

    *refused, at_cap = project_session(root, body)
    for is_error, text in refused:
        assert is_error and LIMIT_SAID in text and "\n" not in text and "Traceback" not in text, text
    assert not at_cap[0] and json.loads(at_cap[1])["results"] is not None
