"""The MCP tools, one adapter module each (named like its tool): a tool's name, description and argument schema,
the arguments it accepts but does not list (`UNLISTED`), and a call to the operation behind it
(codememory.operations). `register_all` adds them in the order agents see them listed."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

from codememory.mcp.tools import (
    checkpoint,
    get_session_files,
    list_sessions,
    memory_forget,
    memory_get,
    memory_retrieve,
    memory_search,
    memory_store,
    memory_transcript,
    search_sessions,
)
from codememory.mcp.tools.common import StoreOf

_IN_ORDER = (
    memory_search,
    memory_get,
    memory_store,
    memory_forget,
    memory_retrieve,
    checkpoint,
    search_sessions,
    memory_transcript,
    list_sessions,
    get_session_files,
)


# Arguments each tool accepts but leaves out of its listing (see common.lean_schema).
UNLISTED: dict[str, tuple[str, ...]] = {
    tool.__name__.rsplit(".", 1)[1]: getattr(tool, "UNLISTED", ()) for tool in _IN_ORDER
}


def register_all(server: FastMCP[None], store: StoreOf) -> None:
    for tool in _IN_ORDER:
        tool.register(server, store)
