"""`codememory mcp`: serve the memory tools over MCP (the server itself is codememory.mcp; imported only here, so
the MCP SDK does not slow the other commands)."""

from __future__ import annotations

import click


@click.command("mcp")
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve over MCP streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (needs the token).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="With --http: the port on 127.0.0.1 (default 9474; 0: any free port).",
)
@click.pass_context
def mcp_cmd(ctx: click.Context, http: bool, port: int | None) -> None:
    """Serve the memory tools to AI agents over MCP (stdio; streamable HTTP with --http): memory_search, memory_get,
    memory_store, memory_forget, memory_retrieve, memory_transcript, and the session tools checkpoint,
    search_sessions, list_sessions, get_session_files. Your agent starts it; run it by hand only to test.

    \b
    Register it once per project (the agent starts it in the project folder):
      Claude Code:  claude mcp add --scope project codememory -- codememory mcp
      OpenCode:     opencode.json  {"mcp": {"codememory": {"type": "local", "command": ["codememory", "mcp"]}}}
      Cursor:       .cursor/mcp.json  {"mcpServers": {"codememory": {"command": "codememory", "args": ["mcp"]}}}
      Codex:        ~/.codex/config.toml  [mcp_servers.codememory]  command = "codememory"  args = ["mcp"]
    Add `--project DIR` before `mcp` (or set CODEMEMORY_PROJECT) to serve another project's store.

    \b
    --http: keep one server running yourself and point clients at its URL (streamable HTTP):
      codememory mcp --http [--port N]    prints "listening on http://127.0.0.1:PORT/mcp" to stderr
    It listens on 127.0.0.1 only and every request needs the daemon's token,
    `Authorization: Bearer <token>`, from the file `token` in $XDG_STATE_HOME/codememory/
    (~/.local/state/codememory/; created if missing). Requests with a foreign Host or Origin header,
    or a body over [daemon] max_body_bytes, are refused. Stop it with Ctrl-C.
    """
    if port is not None and not http:
        raise click.UsageError("--port needs --http")
    if http:
        from codememory.mcp.http import DEFAULT_PORT, serve_http  # imported here: the SDK must not slow other commands

        serve_http(ctx.obj["project"], DEFAULT_PORT if port is None else port)
        return
    from codememory.mcp.server import serve  # imported here: the MCP SDK must not slow the other commands

    serve(ctx.obj["project"])
