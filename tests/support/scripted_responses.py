"""A scripted OpenAI Responses API on 127.0.0.1 for tests: the model behind the real `codex` CLI, which speaks only
the Responses API to a custom provider (`wire_api = "responses"`, the one value Codex still accepts).

    with ScriptedResponses(Script([Reply(tool_calls=[ToolCallSpec("exec_command", {"cmd": "ls"})]), Reply("done")])):
        ...  # a model_providers entry whose base_url is api.base_url
        api.requests  # every JSON body received at /v1/responses, in order

Answers `POST /v1/responses` with the server-sent events Codex's client reads (`response.created`, one
`response.output_item.done` per output item: an assistant `message` with `output_text`, or a `function_call` with
`name`, `arguments` and `call_id`, and `response.completed` with the usage), as JSON when `stream` is false, and
`GET /v1/models` with an empty list (Codex asks its provider for the models it serves). Anything else is answered
`404` and recorded in `other_requests`.

A reply's tool call that names a namespaced tool (`mcp__codememory__memory_search`, Codex's MCP tools) is sent as
a `function_call` with that `namespace` and the tool's own `name`, the shape Codex offers them in.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from support.scripted_llm import Reply, ScriptedHandler, ScriptedServer, ToolCallSpec

__all__ = ["Reply", "Script", "ScriptedResponses", "ToolCallSpec", "function_outputs", "input_text"]

Handler = Callable[[dict[str, Any]], Reply]


def is_side_request(body: dict[str, Any]) -> bool:
    """Codex's requests besides the conversation (a title, a memory summary) offer no tools."""
    return not body.get("tools")


def item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def input_text(body: dict[str, Any]) -> str:
    """Everything the model was shown in one request: the instructions and every input item's text."""
    parts = [str(body.get("instructions") or "")]
    for item in body.get("input") or []:
        if isinstance(item, dict):
            parts.append(item_text(item))
            if item.get("type") == "function_call_output":
                parts.append(output_of(item))
    return "\n".join(parts)


def output_of(item: dict[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    if isinstance(output, dict):  # {"content": …, "success": …} in some versions
        return str(output.get("content", ""))
    return ""


def function_outputs(requests: list[dict[str, Any]]) -> dict[str, str]:
    """call_id -> the output Codex sent back to the model for that tool call."""
    out: dict[str, str] = {}
    for body in requests:
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                out[str(item.get("call_id"))] = output_of(item)
    return out


class Script:
    """Serves the replies in order to the conversation's requests; side requests get `side_reply`; when the script
    is exhausted, every further request gets `fallback`."""

    def __init__(
        self, replies: Sequence[Reply], *, side_reply: str = "Scripted session", fallback: str = "OK."
    ) -> None:
        self.replies = list(replies)
        self.side_reply = side_reply
        self.fallback = fallback
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_side_request(body):
            return Reply(self.side_reply)
        with self._lock:
            return self.replies.pop(0) if self.replies else Reply(self.fallback)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.replies)


class _ResponsesHandler(ScriptedHandler):
    def _other(self) -> None:
        api: ScriptedResponses = self.server.api  # type: ignore[attr-defined]
        with api._lock:
            api.other_requests.append((self.command, self.path))

    def do_GET(self) -> None:
        self._other()
        if self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        api: ScriptedResponses = self.server.api  # type: ignore[attr-defined]
        raw = self.read_body()
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/responses"):
            self._other()
            self.send_json(404, {"error": {"message": f"{self.path} is not scripted"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self.send_json(400, {"error": {"message": "invalid JSON"}})
            return
        if not isinstance(body, dict):
            self.send_json(400, {"error": {"message": "the body is not an object"}})
            return
        api.record(body)
        reply = api.handler(body)
        if reply.status != 200:
            self.send_json(reply.status, {"error": {"message": reply.text or "scripted error", "type": "api_error"}})
            return
        usage = reply.usage or {
            "prompt_tokens": max(1, len(raw) // 4),
            "completion_tokens": max(1, len(reply.text) // 4),
        }
        response = _response(str(body.get("model") or "scripted-model"), _items(reply, api.namespaces(body)), usage)
        if body.get("stream", True):
            self.send_stream(_sse(name, data) for name, data in _events(response))
        else:
            self.send_json(200, response)


class ScriptedResponses(ScriptedServer):
    handler: Handler
    request_handler = _ResponsesHandler

    def __init__(self, handler: Handler) -> None:
        super().__init__(handler)
        self.other_requests: list[tuple[str, str]] = []  # (method, path) of everything else asked

    @property
    def base_url(self) -> str:
        """A provider's `base_url`: Codex appends `/responses` to it."""
        return f"http://127.0.0.1:{self.port}/v1"

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests that were not side requests."""
        return self._requests_where(lambda r: not is_side_request(r))

    @staticmethod
    def namespaces(body: dict[str, Any]) -> dict[str, tuple[str, str]]:
        """`<namespace>__<tool>` (and `<namespace><tool>`) -> (namespace, tool) for every tool the request offers inside
        a namespace: `mcp__codememory__memory_search` -> ("mcp__codememory", "memory_search")."""
        out: dict[str, tuple[str, str]] = {}
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                space = str(tool.get("name") or "")
                for inner in tool.get("tools") or []:
                    if isinstance(inner, dict) and inner.get("name"):
                        name = str(inner["name"])
                        out[f"{space}__{name}"] = out[f"{space}{name}"] = (space, name)
        return out


_ids = itertools.count(1)


def _items(reply: Reply, namespaces: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        items.append(
            {
                "type": "message",
                "id": f"msg_scripted_{next(_ids)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_scripted_{next(_ids)}",
            "call_id": f"call_scripted_{next(_ids)}",
            "name": call.name,
            "arguments": json.dumps(call.arguments),
            "status": "completed",
        }
        if call.name in namespaces:
            item["namespace"], item["name"] = namespaces[call.name]
        items.append(item)
    return items


def _response(model: str, output: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": f"resp_scripted_{next(_ids)}",
        "object": "response",
        "status": "completed",
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        },
    }


def _events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    created = {**response, "status": "in_progress", "output": []}
    out: list[tuple[str, dict[str, Any]]] = [("response.created", {"type": "response.created", "response": created})]
    for index, item in enumerate(response["output"]):
        for name in ("response.output_item.added", "response.output_item.done"):
            out.append((name, {"type": name, "output_index": index, "item": item}))
    out.append(("response.completed", {"type": "response.completed", "response": response}))
    return out


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
