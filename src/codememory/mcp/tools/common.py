"""What the MCP tool adapters share: argument types (with the descriptions agents read), tool annotations, the
caller's name, and the tool result (a typed result as compact JSON text and as structured content)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.fastmcp import Context
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from codememory.core.model import CATEGORIES, ID_RE
from codememory.core.result import Result
from codememory.sessions.markdown import SESSION_ID_RE

if TYPE_CHECKING:
    from codememory.service.project_store import Store

StoreOf = Callable[[], "Store"]  # the server's project store, opened on first use

CATEGORY_LIST = ", ".join(CATEGORIES)
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)

MemoryId = Annotated[
    str, Field(pattern=ID_RE.pattern, description="A memory id: mem_ followed by 8 hex digits, e.g. mem_1a2b3c4d.")
]
SessionId = Annotated[
    str,
    Field(
        pattern=SESSION_ID_RE.pattern,
        description="A session id: YYYY-MM-DD_HH-MM_<tool>_<slug>, e.g. 2026-02-23_14-32_cursor_tei-migration.",
    ),
]
Bullets = Annotated[list[str] | None, Field(max_length=100)]


class PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: Annotated[str, Field(description="Path of the plan/design file, relative to the project root.")]
    header: Annotated[
        str | None, Field(description="The file's first heading, copied exactly (read from the file if omitted).")
    ] = None


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: Annotated[str, Field(description="https://... URL, or a path in the project.")]
    title: Annotated[str | None, Field(description="Short (3-5 word) descriptive title.")] = None


DateText = Annotated[
    str | None,
    Field(description="ISO date/time (2026-04-01, 2026-04-01T09:30) or words ('2 weeks ago', 'yesterday')."),
]


def result(data: Result) -> CallToolResult:
    """The result as compact JSON text (what the model reads) and as structured content."""
    plain = data.to_dict()
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(plain, ensure_ascii=False))], structuredContent=plain
    )


def client_name(ctx: Context[ServerSession, None, Any]) -> str:
    """Who is storing: the MCP client's name from its initialize request (e.g. "claude-code")."""
    params = ctx.session.client_params
    name = params.clientInfo.name.strip() if params is not None else ""
    return name or "mcp"
