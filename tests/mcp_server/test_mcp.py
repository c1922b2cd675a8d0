"""The MCP server end to end: the installed `codememory mcp` runs in a subprocess and the MCP SDK's own
client talks to it over stdio, against real stores in tmp dirs (no embedding model configured there,
so search is keyword-only and says it is degraded)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import codememory
from codememory import Store
from codememory.mcp.server import INSTRUCTIONS
from codememory.text.tokens import estimate_tokens
from conftest import MEMORY_KEYS
from support.mcp import CLIENT, call, call_error, session_with

T = TypeVar("T")
TOOLS = {"memory_search", "memory_get", "memory_store", "memory_forget", "memory_retrieve", "memory_transcript"}
SESSION_TOOLS = {"checkpoint", "search_sessions", "list_sessions", "get_session_files"}
HIT_KEYS = {
    *("id", "text", "category", "importance", "tags", "created_at", "source", "match", "score", "why"),
    *("origin", "provenance"),  # where it came from, and the same in a few words
}


def _keys(node: Any, inside_properties: bool = False) -> set[str]:
    """Every JSON-schema keyword in `node` (property names are not keywords)."""
    if isinstance(node, list):
        return set().union(*(_keys(n) for n in node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = set() if inside_properties else set(node)
    for key, value in node.items():
        found |= _keys(value, inside_properties=key == "properties" and not inside_properties)
    return found


@pytest.mark.slow
def test_the_server_lists_its_tools_short_and_exact(console_script: Path, project: Path) -> None:
    """What every call of an assistant carries (benchmarks/bench_tool_defs.py): one-line descriptions, schemas with
    nothing a model cannot use (no titles, null branches, size caps); the arguments an agent seldom needs are
    accepted but not listed (see test_unlisted_arguments_are_still_accepted)."""

    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools_list = session_with(console_script, ["--project", project, "mcp"], body)
    tools = {t.name: t for t in tools_list}
    assert set(tools) == TOOLS | SESSION_TOOLS
    for tool in tools.values():
        assert tool.description and "\n" not in tool.description and len(tool.description) <= 200, tool.name
        assert tool.inputSchema["type"] == "object"
        assert not _keys(tool.inputSchema) & {"title", "anyOf", "$defs", "$ref", "maxItems", "maxLength"} - (
            {"anyOf"} if tool.name == "memory_transcript" else set()  # turn: a number or a turn id
        ), tool.name
    required = {name: tool.inputSchema.get("required", []) for name, tool in tools.items()}
    assert required == {
        "memory_search": ["query"],
        "memory_get": ["ids"],
        "memory_store": ["text"],
        "memory_forget": ["ids"],
        "memory_retrieve": ["query_expansion"],
        "memory_transcript": ["reference"],
        "checkpoint": [],
        "search_sessions": ["query"],
        "list_sessions": [],
        "get_session_files": ["session_id"],
    }
    search = tools["memory_search"].inputSchema["properties"]
    assert set(search) == {"query", "limit", "category"}
    assert (search["limit"]["default"], search["limit"]["minimum"], search["limit"]["maximum"]) == (5, 1, 50)
    store = tools["memory_store"].inputSchema["properties"]
    assert set(store) == {"text", "category", "tags", "importance", "supersedes"}  # no context argument
    assert (store["importance"]["minimum"], store["importance"]["maximum"]) == (0, 1)
    assert "rejected_alternative" in store["category"]["description"]
    ids = tools["memory_get"].inputSchema["properties"]["ids"]
    assert ids["items"]["pattern"] == "^mem_[0-9a-f]{8}$"
    checkpoint = tools["checkpoint"].inputSchema["properties"]
    assert set(checkpoint) == {"slug", "session_id", "goal", "work_completed", "work_pending", "decisions",
                               "plan_files", "status"}  # fmt: skip
    assert checkpoint["plan_files"]["items"]["required"] == ["path"]
    # the whole set, as an assistant hands it to its model (measured: benchmarks/README.md "Tool definitions")
    listed = "".join(
        json.dumps({"name": t.name, "description": t.description, "input_schema": t.inputSchema}, separators=(",", ":"))
        for t in tools_list
    )
    assert estimate_tokens(listed) <= 1100, estimate_tokens(listed)
    assert len(INSTRUCTIONS) <= 400  # Claude Code puts them in its system prompt


@pytest.mark.slow
def test_the_server_names_itself_with_codememorys_version(console_script: Path, project: Path) -> None:
    """A client logs which server it talks to from `serverInfo`: codememory and its version, not the SDK's."""

    async def main() -> Any:
        params = StdioServerParameters(command=str(console_script), args=["--project", str(project), "mcp"])
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                return await session.initialize()

    info = anyio.run(main).serverInfo
    assert (info.name, info.version) == ("codememory", codememory.__version__)


@pytest.mark.slow
def test_unlisted_arguments_are_still_accepted(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> list[Any]:
        return [
            await call(session, "memory_search", {"query": "x", "mode": "lexical", "tags": ["a"], "after": "2020-1-1"}),
            await call(session, "search_sessions", {"query": "x", "limit": 2, "tool": "cursor"}),
            await call(session, "memory_retrieve", {"query_expansion": ["x"], "pinned_memory_ids": ["mem_00000000"]}),
            await call(session, "memory_store", {"text": "Staging is frozen", "expires": "in 2 weeks"}),
        ]

    found = session_with(console_script, ["--project", project, "mcp"], body)
    assert found[0]["results"] == [] and found[1]["results"] == [] and found[2]["memories"] == []
    assert found[3]["memory"]["expires_at"]


@pytest.mark.slow
def test_store_search_get_retrieve_forget_round_trip(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["stored"] = await call(
            session,
            "memory_store",
            {
                "text": "Use httpx, not requests: we need HTTP/2",
                "category": "decision",
                "tags": ["HTTP", "Deps"],
                "importance": 0.8,
            },
        )
        out["again"] = await call(session, "memory_store", {"text": "Use httpx, not requests: we need HTTP/2"})
        out["other"] = await call(
            session, "memory_store", {"text": "The staging database is reset every night", "category": "gotcha"}
        )
        out["search"] = await call(session, "memory_search", {"query": "httpx"})
        first = out["stored"]["memory"]["id"]
        out["get"] = await call(session, "memory_get", {"ids": [first, "mem_00000000", first]})
        out["by_category"] = await call(session, "memory_search", {"query": "httpx OR staging", "category": "gotcha"})
        out["by_tag"] = await call(session, "memory_search", {"query": "httpx OR staging", "tags": ["http"]})
        out["typo"] = await call(session, "memory_search", {"query": "htpx", "mode": "lexical"})
        out["retrieve"] = await call(
            session, "memory_retrieve", {"query_expansion": ["which HTTP client library to use"], "entities": ["httpx"]}
        )
        out["forget"] = await call(session, "memory_forget", {"ids": [first, "mem_00000000"]})
        out["after_forget"] = await call(session, "memory_search", {"query": "httpx"})
        out["get_forgotten"] = await call(session, "memory_get", {"ids": [first]})
        return out

    # Started in the project folder without --project: the store is found from the working directory.
    out = session_with(console_script, ["mcp"], body, cwd=project)

    stored = out["stored"]
    assert stored["created"] is True and stored["duplicate_of"] is None
    memory = stored["memory"]
    assert set(memory) == MEMORY_KEYS
    assert (memory["category"], memory["importance"], memory["tags"]) == ("decision", 0.8, ["http", "deps"])
    assert memory["entered_by"] == CLIENT  # the client's name from its initialize request
    first = memory["id"]
    assert (out["again"]["created"], out["again"]["duplicate_of"]) == (False, first)

    search = out["search"]
    assert set(search) == {"results", "degraded", "degraded_reason", "held_back"}  # and "note" when nothing is found
    # the server runs with the SDK's default environment: a fresh install's default model, so hybrid search
    assert search["degraded"] is False and search["degraded_reason"] is None
    [hit] = search["results"]
    assert set(hit) == HIT_KEYS
    assert (hit["origin"], hit["provenance"]) == ("local", f"stored by {CLIENT}")  # an agent, through a tool
    assert (hit["id"], hit["match"], hit["category"]) == (first, "exact", "decision")
    assert hit["why"].startswith("bm25 ")

    get = out["get"]
    assert get["missing"] == ["mem_00000000"]
    [record] = get["memories"]  # asked twice, returned once
    assert set(record) == MEMORY_KEYS | {"links", "entities", "staleness", "usefulness", "personal"}
    assert record["id"] == first and record["links"] == []
    assert {"name": "httpx", "type": "library"} in record["entities"]
    assert record["access_count"] == 3  # the duplicate store, the search and this get each count as an access

    assert [h["category"] for h in out["by_category"]["results"]] == ["gotcha"]
    assert [h["id"] for h in out["by_tag"]["results"]] == [first]
    [typo] = out["typo"]["results"]
    assert typo["match"] == "fuzzy" and "htpx~httpx" in typo["why"]

    retrieve = out["retrieve"]
    assert first in [m["id"] for m in retrieve["memories"]]
    assert retrieve["degraded"] is False and retrieve["degraded_reason"] is None  # the default model
    assert retrieve["tokens"] > 0

    assert out["forget"] == {"forgotten": [first], "unknown": ["mem_00000000"]}
    assert out["after_forget"]["results"] == []
    assert out["get_forgotten"] == {"memories": [], "missing": [first]}
    with Store.open(project) as store:  # what the agent did is in the real file
        [left] = store.list()
        assert left.id == out["other"]["memory"]["id"] and left.entered_by == CLIENT


@pytest.mark.slow
def test_supersedes_and_expiry(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> tuple[Any, Any, Any]:
        old = await call(session, "memory_store", {"text": "Deploys go through Jenkins", "category": "fact"})
        new = await call(
            session,
            "memory_store",
            {
                "text": "Deploys go through GitHub Actions since the migration",
                "category": "fact",
                "supersedes": [old["memory"]["id"]],
                "expires": "in 2 weeks",
            },
        )
        found = await call(session, "memory_search", {"query": "deploys"})
        return old, new, found

    old, new, found = session_with(console_script, ["--project", project, "mcp"], body)
    assert {"id": old["memory"]["id"], "type": "supersedes", "score": None} in new["links"]
    assert new["memory"]["expires_at"] is not None
    assert [h["id"] for h in found["results"]] == [new["memory"]["id"]]  # the replaced one dropped out


ERROR_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("memory_get", {"ids": ["bogus"]}, "ids[0]: 'bogus' is not a memory id (expected mem_ followed by 8 hex"),
    ("memory_forget", {"ids": ["mem_1", "mem_0000000g"]}, "ids[1]: 'mem_0000000g' is not a memory id"),
    ("memory_get", {"ids": []}, "ids: List should have at least 1 item"),
    ("memory_get", {"ids": [f"mem_{i:08x}" for i in range(21)]}, "ids: List should have at most 20 items"),
    ("memory_get", {}, "ids: required"),
    ("memory_store", {"text": ""}, "memory text is empty"),
    ("memory_store", {"text": "   \n"}, "memory text is empty"),
    ("memory_store", {"text": "x" * 10_001}, "the limit is 10,000"),
    ("memory_store", {"text": "ok", "category": "nope"}, "unknown category 'nope'; choose one of: decision"),
    ("memory_store", {"text": "ok", "importance": 2}, "importance: Input should be less than or equal to 1 (got 2)"),
    ("memory_store", {"text": "ok", "expires": "yesterday"}, "is in the past"),
    ("memory_store", {"text": "ok", "expires": "someday"}, "cannot understand date 'someday'"),
    ("memory_store", {"text": "ok", "supersedes": ["mem_00000000"]}, "no memory with id mem_00000000"),
    ("memory_store", {"text": "ok", "tag": ["a"]}, "unknown argument 'tag' for memory_store; it takes: text, category"),
    ("memory_search", {"query": "x", "limit": 0}, "limit: Input should be greater than or equal to 1 (got 0)"),
    ("memory_search", {"query": "x", "limit": 51}, "limit: Input should be less than or equal to 50 (got 51)"),
    ("memory_search", {"query": "x", "bogus": 1, "other": 2}, "unknown arguments 'bogus', 'other' for memory_search"),
    ("memory_search", {"query": "x", "mode": "fast"}, "mode: Input should be 'hybrid', 'lexical' or 'semantic'"),
    ("memory_search", {"query": "x", "tags": "a,b"}, "tags: Input should be a valid list (got 'a,b')"),
    ("memory_search", {"query": "x", "after": "not a date"}, "after: cannot understand date 'not a date'"),
    ("memory_search", {"limit": 3}, "query: required"),
    ("memory_search", {"query": "  "}, "the query is empty"),  # the CLI's usage error, not "Nothing relevant found"
    ("memory_retrieve", {"query_expansion": []}, "give at least one query_expansion phrase or entity"),
    ("memory_retrieve", {"query_expansion": ["x"], "max_memories": 0}, "max_memories: Input should be greater"),
    ("memory_retrieve", {"query_expansion": ["x"], "pinned_memory_ids": ["nope"]}, "'nope' is not a memory id"),
]


@pytest.mark.slow
def test_user_mistakes_come_back_as_clear_tool_errors(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> tuple[list[tuple[str, dict[str, Any], str, str]], Any]:
        seen = [(tool, args, want, await call_error(session, tool, args)) for tool, args, want in ERROR_CASES]
        still_alive = await call(session, "memory_store", {"text": "the server survived every mistake"})
        return seen, still_alive

    seen, still_alive = session_with(console_script, ["--project", project, "mcp"], body)
    wrong = [
        f"{tool}({str(args)[:80]}): wanted {want!r}, got {got!r}" for tool, args, want, got in seen if want not in got
    ]
    assert not wrong, "\n".join(wrong)
    assert still_alive["created"] is True
    with Store.open(project) as store:
        assert [m.text for m in store.list()] == ["the server survived every mistake"]  # no mistake stored anything


@pytest.mark.slow
def test_missing_store_is_a_tool_error_and_the_server_keeps_serving(console_script: Path, tmp_path: Path) -> None:
    folder = tmp_path / "no-store-yet"
    folder.mkdir()

    async def body(session: ClientSession) -> tuple[str, str, Any, Any]:
        search_error = await call_error(session, "memory_search", {"query": "anything"})
        store_error = await call_error(session, "memory_store", {"text": "too early"})
        subprocess.run([str(console_script), "--project", str(folder), "init"], check=True, capture_output=True)
        stored = await call(session, "memory_store", {"text": "stored once the store exists"})
        found = await call(session, "memory_search", {"query": "stored"})
        return search_error, store_error, stored, found

    search_error, store_error, stored, found = session_with(console_script, ["--project", folder, "mcp"], body)
    for message in (search_error, store_error):
        assert "no codememory store at" in message and "run `codememory init`" in message
    assert stored["created"] is True
    assert [h["id"] for h in found["results"]] == [stored["memory"]["id"]]


def test_stray_output_goes_to_stderr_not_into_the_protocol(project: Path, tmp_path: Path) -> None:
    """A tool that prints, or native code writing to file descriptor 1, must not corrupt the protocol."""
    script = tmp_path / "noisy_server.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys
            from codememory.mcp.server import create_server, run_stdio

            server = create_server(sys.argv[1])

            @server.tool()
            def noisy() -> str:
                print("printed by a tool")
                os.write(1, b"written to fd 1 by native code\\n")
                return "still fine"

            run_stdio(server)
            """
        ),
        encoding="utf-8",
    )

    async def body(session: ClientSession) -> tuple[Any, Any]:
        result = await session.call_tool("noisy", {})
        return result.content[0].text, await call(session, "memory_search", {"query": "anything"})  # type: ignore[union-attr]

    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w", encoding="utf-8") as errlog:
        noisy, search = session_with(sys.executable, [script, project], body, errlog=errlog)
    assert noisy == "still fine"
    assert search["results"] == []
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "printed by a tool" in stderr and "written to fd 1 by native code" in stderr


def test_mcp_command_help_and_lazy_import(console_script: Path) -> None:
    shown = subprocess.run([str(console_script), "mcp", "--help"], capture_output=True, text=True, check=True).stdout
    assert "claude mcp add --scope project codememory -- codememory mcp" in shown
    assert '"command": ["codememory", "mcp"]' in shown  # OpenCode
    # The MCP SDK is imported only by `codememory mcp`, so the other commands start fast.
    probe = "import sys, codememory.cli.main; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


# ------------------------------------------------------------------------------ sessions
@pytest.mark.slow
def test_checkpoint_markdown_search_rebuild_round_trip(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["first"] = await call(
            session,
            "checkpoint",
            {
                "slug": "tei-migration",
                "goal": "Migrate the embedding endpoint from vLLM to TEI.",
                "work_completed": ["Replaced the vLLM client"],
                "work_pending": ["Tune batch size", "Fix p99 OOM"],
                "decisions": ["**TEI over Infinity:** native BGE-M3 support"],
                "plan_files": [{"path": "docs/tei-plan.md", "header": "## TEI Migration Plan"}],
                "references": [{"url": "https://huggingface.co/docs/tei", "title": "TEI Documentation"}],
            },
        )
        out["second"] = await call(
            session,
            "checkpoint",
            {
                "slug": "tei-migration",
                "work_completed": ["Tuned batch size to 64"],
                "work_pending": ["Fix p99 OOM"],
                "work_summary": ["Batch 64 fits on A10G"],
                "status": "closed",
            },
        )
        out["list"] = await call(session, "list_sessions", {})
        out["search"] = await call(session, "search_sessions", {"query": "TEI migration OOM"})
        out["files"] = await call(session, "get_session_files", {"session_id": out["first"]["session_id"]})
        out["none"] = await call(session, "search_sessions", {"query": "quantum gravity"})
        conn = sqlite3.connect(project / ".codememory" / "memory.db")
        with conn:
            conn.execute("DELETE FROM sessions")  # the rows are lost; the markdown file is not
            conn.execute("DELETE FROM sessions_fts")
        conn.close()
        out["lost"] = await call(session, "search_sessions", {"query": "TEI migration"})
        rebuilt = subprocess.run(
            [str(console_script), "--project", str(project), "sessions", "rebuild", "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        out["rebuild"] = json.loads(rebuilt.stdout)
        out["again"] = await call(session, "search_sessions", {"query": "TEI migration"})
        return out

    out = session_with(console_script, ["--project", project, "mcp"], body)
    first, second = out["first"], out["second"]
    session_id = first["session_id"]
    assert session_id.endswith(f"_{CLIENT}_tei-migration")  # the tool is the client's name
    assert (first["created"], first["status"], second["created"], second["status"]) == (True, "open", False, "closed")
    path = Path(first["markdown_path"])
    assert path == project / ".codememory" / "sessions" / f"{session_id}.md" == Path(second["markdown_path"])
    [listed] = out["list"]["sessions"]
    assert listed["session_id"] == session_id and listed["status"] == "closed"
    assert path.read_text(encoding="utf-8") == textwrap.dedent(
        f"""\
        ---
        session_id: {session_id}
        tool: {CLIENT}
        project: {project.name}
        started_at: {listed["started_at"]}
        git_sha_start:
        git_sha_end:
        trigger: session_end
        slug: tei-migration
        status: closed
        ended_at: {listed["updated_at"]}
        updated_at: {listed["updated_at"]}
        ---

        ## Goal
        Migrate the embedding endpoint from vLLM to TEI.

        ---

        ## Todos

        ### ✅ Work Completed
        - Replaced the vLLM client
        - Tuned batch size to 64

        ### 🔲 Work To Be Completed
        - Fix p99 OOM

        ---

        ## Files Touched

        _None._

        ---

        ## Git Diff Summary
        _None._

        ---

        ## Work Done

        - Batch 64 fits on A10G

        ---

        ## Plan Files

        | File | Description |
        |------|-------------|
        | `docs/tei-plan.md` | ## TEI Migration Plan |

        ---

        ## Architecture Decisions

        - **TEI over Infinity:** native BGE-M3 support

        ---

        ## References

        - [TEI Documentation](https://huggingface.co/docs/tei)
        """
    )
    [hit] = out["search"]["results"]
    assert hit["session_id"] == session_id and hit["markdown_path"] == str(path) and hit["rank"] == 1
    assert "markdown" not in hit and hit["goal"] == "Migrate the embedding endpoint from vLLM to TEI."
    assert out["search"]["query"]["terms"] == ["tei", "migration", "oom"]
    assert out["files"] == {"session_id": session_id, "files": []}
    assert out["none"]["results"] == []
    assert out["lost"]["results"] == []
    assert out["rebuild"] == {"sessions": 1, "errors": []}
    assert [h["session_id"] for h in out["again"]["results"]] == [session_id]


SESSION_ERROR_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("checkpoint", {"goal": "no slug yet"}, "slug is required to start a session"),
    ("checkpoint", {"slug": "x", "status": "done"}, "status: Input should be 'open', 'frozen' or 'closed'"),
    ("checkpoint", {"slug": "x", "plan_files": [{"path": "../../etc/passwd"}]}, "is outside the project root"),
    ("checkpoint", {"slug": "x", "plan_files": [{"path": "/etc/passwd"}]}, "plan_files[0].path '/etc/passwd' is"),
    ("checkpoint", {"slug": "x", "references": [{"url": "../secret.md"}]}, "references[0].url '../secret.md' is"),
    ("checkpoint", {"slug": "x", "plan_files": [{"file": "a.md"}]}, "plan_files[0].path: required"),
    ("checkpoint", {"slug": "one two three four five"}, "more than 4 words"),
    ("checkpoint", {"session_id": "../etc"}, "session_id: '../etc' is not a session id"),
    ("checkpoint", {"session_id": "2026-01-01_09-00_cursor_gone"}, "no session with id 2026-01-01_09-00_cursor_gone"),
    ("checkpoint", {"slug": "x", "work_pending": "a"}, "work_pending: Input should be a valid list"),
    ("checkpoint", {"slug": "x", "goals": "a"}, "unknown argument 'goals' for checkpoint"),
    ("get_session_files", {"session_id": "2026-01-01_09-00_cursor_gone"}, "no session with id"),
    ("get_session_files", {}, "session_id: required"),
    ("search_sessions", {"query": "x", "limit": 6}, "limit: Input should be less than or equal to 5 (got 6)"),
    ("list_sessions", {"status": "gone"}, "status: Input should be 'open', 'frozen' or 'closed'"),
]


def test_session_tool_mistakes_are_clear_tool_errors(console_script: Path, project: Path) -> None:
    async def body(session: ClientSession) -> tuple[list[tuple[str, dict[str, Any], str, str]], Any]:
        seen = [(tool, args, want, await call_error(session, tool, args)) for tool, args, want in SESSION_ERROR_CASES]
        return seen, await call(session, "list_sessions", {})

    seen, listed = session_with(console_script, ["--project", project, "mcp"], body)
    wrong = [
        f"{tool}({str(args)[:80]}): wanted {want!r}, got {got!r}" for tool, args, want, got in seen if want not in got
    ]
    assert not wrong, "\n".join(wrong)
    assert listed == {"sessions": []}  # no mistake created a session
    assert not list((project / ".codememory").glob("sessions/*.md"))


@pytest.mark.slow
def test_search_sessions_in_every_registered_project(console_script: Path, make_project: Callable[[str], Path]) -> None:
    alpha, beta, gone = make_project("alpha"), make_project("beta"), make_project("gone")
    with Store.open(alpha) as store:
        store.checkpoint(tool="cursor", slug="tei-migration", goal="Migrate the vector endpoint to TEI.")
    with Store.open(beta) as store:
        store.checkpoint(
            tool="claude-code",
            slug="tei-rollout",
            goal="Roll out the TEI embedding server in production.",
            decisions=["**TEI over vLLM:** native embedding support"],
        )
        store.checkpoint(tool="claude-code", slug="auth-fix", goal="Fix the login redirect.")
    shutil.rmtree(gone)
    env = {"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}  # the registry the projects were added to

    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "project": await call(session, "search_sessions", {"query": "TEI embedding"}),
            "global": await call(session, "search_sessions", {"query": "TEI embedding", "scope": "global"}),
            "one": await call(session, "search_sessions", {"query": "TEI embedding", "scope": "global", "limit": 1}),
            "bad": await call_error(session, "search_sessions", {"query": "TEI", "scope": "everywhere"}),
        }

    out = session_with(console_script, ["--project", alpha, "mcp"], body, env=env)
    [local] = out["project"]["results"]
    assert local["goal"].startswith("Migrate") and "project" not in local and "project" not in out["project"]
    found = out["global"]
    assert set(found) == {"scope", "results", "query", "projects"} and found["scope"] == "global"
    assert [(r["project_name"], r["project"], r["rank"]) for r in found["results"]] == [
        ("beta", str(beta), 1),  # both words in its goal: the higher score, though alpha is registered first
        ("alpha", str(alpha), 2),
    ]
    assert found["results"][0]["score"] > found["results"][1]["score"]
    assert Path(found["results"][0]["markdown_path"]).is_relative_to(beta)
    assert [(p["name"], p["hits"], p["error"]) for p in found["projects"]] == [
        ("alpha", 1, None),
        ("beta", 1, None),
        ("gone", 0, f"project directory does not exist: {gone}"),
    ]
    assert [r["project_name"] for r in out["one"]["results"]] == ["beta"]
    assert out["bad"].startswith("invalid arguments: scope: Input should be 'project' or 'global'")


@pytest.mark.slow
def test_memory_transcript_errors_are_clear_tool_errors(console_script: Path, project: Path) -> None:
    with Store.open(project) as store:
        plain = store.add("Use ruff for linting").memory.id

    async def body(session: ClientSession) -> list[str]:
        return [
            await call_error(session, "memory_transcript", {"reference": plain}),
            await call_error(session, "memory_transcript", {"reference": "mem_00000000"}),
            await call_error(session, "memory_transcript", {"reference": "two words"}),
            await call_error(session, "memory_transcript", {"reference": "ses_x", "turn": 0}),
            await call_error(session, "memory_transcript", {"reference": "ses_x", "max_turns": 0}),
            await call_error(session, "memory_transcript", {}),
        ]

    errors = session_with(console_script, ["--project", project, "mcp"], body)
    assert errors == [
        f"memory {plain} does not come from a captured session turn (its source is none)",
        "no memory with id mem_00000000",
        "not a memory id (mem_ and 8 hex digits), a daily-log anchor (<!-- session:ID turn:ID -->) "
        "or a session id: 'two words'",
        "turn numbers start at 1, got 0",
        "invalid arguments: max_turns: Input should be greater than or equal to 1 (got 0)",
        "invalid arguments: reference: required",
    ]
