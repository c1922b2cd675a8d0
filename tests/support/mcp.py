"""The official MCP client against a real `codememory mcp` process (stdio), for the tests of several folders."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

T = TypeVar("T")
CODEMEMORY = Path(sys.executable).with_name("codememory")
CLIENT = "pytest-agent"  # the client name the server sees (entered_by of what the tests store)


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


def session_with(
    command: Path | str,
    args: Sequence[str | Path],
    body: Callable[[ClientSession], Awaitable[T]],
    *,
    cwd: Path | None = None,
    errlog: IO[str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
) -> T:
    """Start the server, initialize a client session, run `body` (within `timeout` seconds in all), and check that
    every line the server wrote to stdout was a protocol message (the client reports anything else as an
    exception)."""
    stray: list[Exception] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async def main() -> T:
        params = StdioServerParameters(command=str(command), args=[str(a) for a in args], cwd=cwd, env=env)
        with anyio.fail_after(timeout):
            async with (
                stdio_client(params, errlog=errlog or sys.stderr) as (read, write),
                ClientSession(
                    read,
                    write,
                    read_timeout_seconds=timedelta(seconds=max(20, timeout - 10)),
                    message_handler=on_message,
                    client_info=Implementation(name=CLIENT, version="1.0"),
                ) as session,
            ):
                await session.initialize()
                return await body(session)

    result = anyio.run(main)
    assert not stray, f"the server wrote something other than protocol messages to stdout: {stray}"
    return result


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    """A successful tool call: its JSON text, which is also its structured content."""
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.isError, f"{tool}({arguments}) failed: {text}"
    data = json.loads(text)
    assert data == result.structuredContent
    return data


async def call_error(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """A tool call that must fail as a tool error (not a protocol error): its one-line message."""
    result = await session.call_tool(tool, arguments)
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert result.isError, f"{tool}({arguments}) should have failed, got: {text}"
    assert "Traceback" not in text
    assert "\n" not in text, text
    return text
