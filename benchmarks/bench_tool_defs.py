"""What codememory's tool definitions cost an assistant on every LLM call, in characters and estimated tokens
(codememory.text.tokens: ⌈characters / 4⌉), per assistant:

- Claude Code, Codex, Cursor: the MCP server's tools, listed with the official MCP client from a real
  `codememory mcp` process. Each tool counts as the compact JSON of {name, description, input_schema} (the shape an
  assistant hands its model; the prefix an assistant adds to the name, `mcp__codememory__` in Claude Code, is left
  out), plus the server's `instructions` (Claude Code puts them in the system prompt) on their own line.
- OpenCode: what the real `opencode` binary (pinned in integrations/opencode) sends a scripted model on the first
  call of a session after `codememory init --assistants opencode`: every entry of the request's `tools` that is
  codememory's (the plugin's tools, any `codememory_*` MCP tool, and the three MCP resource tools OpenCode adds
  once an MCP server is registered), as compact JSON. Measured twice: as init installs it now, and with the MCP
  server registered as well, as an older init left it.

    python benchmarks/bench_tool_defs.py [--out results.json]

Target (issue 14): the whole tool set ≤ ~1,000 tokens per assistant. Prints a markdown table and writes
benchmarks/results-tool-defs.json; the projects and OpenCode's HOME go to benchmarks/.work/tool_defs/.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from bench_core import log, machine  # noqa: E402
from codememory.text.tokens import estimate_tokens  # noqa: E402
from support.opencode import OpenCodeHome, make_git_project  # noqa: E402
from support.scripted_llm import Reply, Script, ScriptedLLM, is_title_request  # noqa: E402

WORK = HERE / ".work" / "tool_defs"
CODEMEMORY = Path(sys.executable).with_name("codememory")
TARGET_TOKENS = 1000
# Every name codememory has ever given a tool (the plugin's, and the MCP server's without OpenCode's prefix).
OURS = {
    "memory_search",
    "memory_get",
    "memory_store",
    "memory_forget",
    "memory_retrieve",
    "memory_transcript",
    "checkpoint",
    "search_sessions",
    "list_sessions",
    "get_session_files",
}
# Tools OpenCode adds once any MCP server is registered (in the benchmark's projects, ours is the only one).
MCP_RESOURCE_TOOLS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sized(rows: list[tuple[str, str]]) -> dict[str, Any]:
    """{tools: [{name, chars, tokens}], chars, tokens} for (name, definition text) rows."""
    tools = [{"name": name, "chars": len(text), "tokens": estimate_tokens(text)} for name, text in rows]
    chars = sum(len(text) for _, text in rows)
    return {"tools": tools, "count": len(tools), "chars": chars, "tokens": estimate_tokens("x" * chars) if chars else 0}


# ---------------------------------------------------------------------------------------------- MCP
def mcp_definitions(project: Path) -> tuple[list[tuple[str, str]], str]:
    async def main() -> tuple[list[tuple[str, str]], str]:
        params = StdioServerParameters(command=str(CODEMEMORY), args=["--project", str(project), "mcp"])
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                init = await session.initialize()
                listed = await session.list_tools()
        rows = [
            (t.name, compact({"name": t.name, "description": t.description or "", "input_schema": t.inputSchema}))
            for t in listed.tools
        ]
        return rows, init.instructions or ""

    return anyio.run(main)


def measure_mcp() -> dict[str, Any]:
    project = WORK / "mcp-project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    from codememory.service.project_store import Store

    Store.init(project)[0].close()
    rows, instructions = mcp_definitions(project)
    result = sized(rows)
    result["instructions_chars"] = len(instructions)
    result["instructions_tokens"] = estimate_tokens(instructions) if instructions else 0
    return result


# ---------------------------------------------------------------------------------------------- OpenCode
def opencode_request(base: Path, *, old_install: bool) -> dict[str, Any]:
    """The first conversation request the real OpenCode sends after init (and, for `old_install`, after adding the
    MCP server to opencode.json the way an older init did)."""
    shutil.rmtree(base, ignore_errors=True)
    with ScriptedLLM(Script([Reply("ok")])) as llm:
        oc = OpenCodeHome(base / "home", llm.base_url)
        project = make_git_project(base / "project")
        env = oc.env()  # codememory's registry and state go to OpenCode's throwaway HOME too
        done = subprocess.run(
            [str(CODEMEMORY), "--project", str(project), "init", "--assistants", "opencode", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if done.returncode != 0:
            raise SystemExit(f"codememory init failed: {done.stderr}")
        if old_install:
            config_path = project / "opencode.json"
            config = json.loads(config_path.read_text()) if config_path.exists() else {}
            config.setdefault("mcp", {})["codememory"] = {"type": "local", "command": [str(CODEMEMORY), "mcp"]}
            config_path.write_text(json.dumps(config, indent=2) + "\n")
        oc.run(project, "hello", timeout=180)
        calls = [r for r in llm.requests if not is_title_request(r)]
    if not calls:
        raise SystemExit("OpenCode sent no conversation request")
    return calls[0]


def measure_opencode(old_install: bool) -> dict[str, Any]:
    request = opencode_request(WORK / ("opencode-old" if old_install else "opencode"), old_install=old_install)
    tools = request.get("tools") or []
    rows = []
    for entry in tools:
        name = (entry.get("function") or {}).get("name", "")
        if name in OURS or name in MCP_RESOURCE_TOOLS or name.startswith("codememory_"):
            rows.append((name, compact(entry)))
    result = sized(rows)
    result["all_tools_chars"] = len(compact(tools))
    result["all_tools_count"] = len(tools)
    return result


# ---------------------------------------------------------------------------------------------- report
def table(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| assistant | what it receives | tools | characters | est. tokens | of the 1,000-token target |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    rows = [
        ("OpenCode", "the plugin's tools (as `init` installs it now)", results["opencode"]),
        ("OpenCode, an older install", "the plugin's and the MCP server's tools", results["opencode_old_install"]),
        ("Claude Code / Codex / Cursor", "the MCP server's tools", results["mcp"]),
    ]
    for who, what, r in rows:
        share = f"{r['tokens'] / TARGET_TOKENS:.0%}"
        lines.append(f"| {who} | {what} | {r['count']} | {r['chars']:,} | {r['tokens']:,} | {share} |")
    mcp = results["mcp"]
    lines.append(
        f"| Claude Code | + the MCP server's instructions (system prompt) | | {mcp['instructions_chars']:,} "
        f"| {mcp['instructions_tokens']:,} | |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "results-tool-defs.json")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    log("MCP: listing the tools of a real `codememory mcp`")
    results = {"mcp": measure_mcp()}
    log("OpenCode: the first request after init")
    results["opencode"] = measure_opencode(old_install=False)
    log("OpenCode: the first request on an install with both the plugin and the MCP server")
    results["opencode_old_install"] = measure_opencode(old_install=True)
    report = table(results)
    print(report)
    args.out.write_text(json.dumps({"machine": machine(), "results": results}, indent=2) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
