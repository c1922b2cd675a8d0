"""What the MCP tool adapters share: argument types (with the descriptions agents read), tool annotations, the
caller's name, the tool result (a typed result as compact JSON text and as structured content), and the lean form
of the argument schemas the server lists.

Every word here reaches the model on every call of an assistant that has the server (benchmarks/bench_tool_defs.py
measures it): descriptions say what the name and type do not, once."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.fastmcp import Context
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from codememory.core.model import CATEGORIES, ID_RE
from codememory.core.result import Result
from codememory.sessions.markdown import SESSION_ID_RE

if TYPE_CHECKING:
    from codememory.service.project_store import Store

StoreOf = Callable[[], "Store"]  # the server's project store, opened on first use

CATEGORY_LIST = ", ".join(CATEGORIES)
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)

MemoryId = Annotated[str, Field(pattern=ID_RE.pattern)]
# The pattern is checked, not listed (a 95-character regex on every call): a model copies ids from search results.
SessionId = Annotated[str, Field(pattern=SESSION_ID_RE.pattern), WithJsonSchema({"type": "string"})]
Bullets = Annotated[list[str] | None, Field(max_length=100)]


class PlanFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    header: Annotated[str | None, Field(description="Its first heading, exactly.")] = None


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: Annotated[str, Field(description="A URL or a path in the project.")]
    title: Annotated[str | None, Field(description="3-5 words.")] = None


DateText = Annotated[str | None, Field(description="ISO date or words ('2 weeks ago').")]


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


_NULL = {"type": "null"}
# Size caps guard the server (it checks them on every call); a model writing a sentence or a few ids never meets them.
_CAPS = {"maxItems", "minItems", "maxLength", "minLength", "additionalProperties"}


def lean_schema(schema: dict[str, Any], unlisted: tuple[str, ...] = ()) -> dict[str, Any]:
    """An argument schema as a model needs it: types, enums, patterns, numeric ranges, defaults and the words
    that say what the name does not. Left out: pydantic's titles, the null branch and the empty default of an
    optional argument (leaving it out is how it is omitted), size caps and `additionalProperties` (the server
    rejects an unknown argument itself, naming the ones it takes), `$defs` (each is used once: inlined), and the
    tool's `unlisted` arguments (rarely worth their place in every call; still accepted).
    Only the listing changes: every call is still validated against the full model."""
    defs = schema.get("$defs", {})
    if unlisted:
        schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in unlisted}}

    def lean(node: Any) -> Any:
        if isinstance(node, list):
            return [lean(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            return lean(defs[ref.removeprefix("#/$defs/")])
        options = node.get("anyOf")
        if isinstance(options, list) and _NULL in options and node.get("default", 0) is None:
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            kept = [o for o in options if o != _NULL]
            node = {**kept[0], **rest} if len(kept) == 1 else {"anyOf": kept, **rest}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _CAPS or key == "$defs" or (key == "title" and isinstance(value, str)):
                continue
            if key == "default" and value in ([], None):
                continue
            out[key] = {name: lean(v) for name, v in value.items()} if key == "properties" else lean(value)
        return out

    return lean(schema)  # type: ignore[no-any-return]
