"""The official MCP client against a real `codememory mcp` process (stdio), for the tests of several folders."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

T = TypeVar("T")
CODEMEMORY = Path(sys.executable).with_name("codememory")


def run_stdio(params: StdioServerParameters, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Start the server `params` describes, initialise a session, run `body` (bounded: 60 s in all)."""

    async def main() -> T:
        with anyio.fail_after(60):
            async with (
                stdio_client(params, errlog=sys.stderr) as (read, write),
                ClientSession(read, write, read_timeout_seconds=timedelta(seconds=30)) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def project_session(project: Path, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """`codememory --project PROJECT mcp`, with the SDK's default environment."""
    return run_stdio(StdioServerParameters(command=str(CODEMEMORY), args=["--project", str(project), "mcp"]), body)
