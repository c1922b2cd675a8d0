"""A scripted Anthropic Messages API on 127.0.0.1 for tests: the model behind the real `claude` CLI.

    write = ToolUse("Write", {"file_path": "/abs/hello.py", "content": "print('hi')\n"})
    script = Script([Reply("I'll write it.", tool_uses=[write]), Reply("done")])
    with ScriptedAnthropic(script) as api:
        ...  # run claude with ANTHROPIC_BASE_URL=api.base_url
        api.requests  # every JSON body received at /v1/messages, in order

Answers `POST /v1/messages` (Claude Code adds `?beta=true`) as JSON, or as server-sent events when the
body has `"stream": true`: `message_start`, per content block `content_block_start` /
`content_block_delta` (`text_delta` or `input_json_delta`) / `content_block_stop`, `message_delta` with
the stop reason (`tool_use` when the reply has tool uses, else `end_turn`) and `message_stop` — the
sequence Claude Code's streaming client needs. `POST /v1/messages/count_tokens` gets a rough count;
anything else is answered `404` and recorded in `other_requests`.

Claude Code also sends side requests without tools (a session title, a quota probe, a small-model
summary): `Script` answers those with `side_reply` and keeps its scripted replies for the conversation.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from support.scripted_llm import ScriptedHandler, ScriptedServer


@dataclass
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str | None = None  # default: a fresh `toolu_scripted_N`


@dataclass
class Reply:
    text: str = ""  # a text block before the tool uses (none when empty and there are tool uses)
    tool_uses: list[ToolUse] = field(default_factory=list)
    usage: dict[str, int] | None = None  # default: a rough count from the request and the reply
    status: int = 200  # anything else answers with an Anthropic error body


Handler = Callable[[dict[str, Any]], Reply]


def block_text(content: Any) -> str:
    """The text of a message's or a system prompt's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def is_side_request(body: dict[str, Any]) -> bool:
    """Claude Code's requests besides the conversation (title, quota probe, summaries) offer no tools."""
    return not body.get("tools")


def has_tool_result(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def last_prompt(body: dict[str, Any]) -> str:
    """The text of the last user message that is not a tool result (the prompt of the current turn,
    with any `<system-reminder>` blocks Claude Code put in the same message)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user" and not has_tool_result(message):
            return block_text(message.get("content"))
    return ""


class Script:
    """Serves the replies in order to the conversation's requests; side requests get `side_reply`;
    when the script is exhausted, every further request gets `fallback`."""

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


class _MessagesHandler(ScriptedHandler):
    def _not_found(self) -> None:
        api: ScriptedAnthropic = self.server.api  # type: ignore[attr-defined]
        with api._lock:
            api.other_requests.append((self.command, self.path))
        self.send_json(404, _error("not_found_error", f"{self.command} {self.path} is not scripted"))

    def do_GET(self) -> None:
        self._not_found()

    def do_HEAD(self) -> None:
        api: ScriptedAnthropic = self.server.api  # type: ignore[attr-defined]
        with api._lock:
            api.other_requests.append((self.command, self.path))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        api: ScriptedAnthropic = self.server.api  # type: ignore[attr-defined]
        raw = self.read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._not_found()
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self.send_json(400, _error("invalid_request_error", "invalid JSON"))
            return
        if not isinstance(body, dict):
            self.send_json(400, _error("invalid_request_error", "the body is not an object"))
            return
        if path.endswith("/count_tokens"):
            self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
            return
        api.record(body)
        reply = api.handler(body)
        if reply.status != 200:
            self.send_json(reply.status, _error("api_error", reply.text or "scripted error"))
            return
        usage = reply.usage or {
            "input_tokens": max(1, len(raw) // 4),
            "output_tokens": max(1, (len(reply.text) + 40 * len(reply.tool_uses)) // 4),
        }
        model = str(body.get("model") or "claude-scripted")
        blocks = _blocks(reply)
        if body.get("stream"):
            events = _events(model, blocks, usage)
            self.send_stream(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
        else:
            self.send_json(200, {**_message(model, [], usage), "content": blocks, **_stop(blocks)})


class ScriptedAnthropic(ScriptedServer):
    handler: Handler
    request_handler = _MessagesHandler

    def __init__(self, handler: Handler) -> None:
        super().__init__(handler)
        self.other_requests: list[tuple[str, str]] = []  # (method, path) of everything else asked

    @property
    def base_url(self) -> str:
        """What ANTHROPIC_BASE_URL takes: the SDK appends `/v1/messages` itself."""
        return f"http://127.0.0.1:{self.port}"

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests that were not side requests."""
        return self._requests_where(lambda r: not is_side_request(r))


_ids = itertools.count(1)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text or not reply.tool_uses:
        blocks.append({"type": "text", "text": reply.text})
    for use in reply.tool_uses:
        blocks.append(
            {"type": "tool_use", "id": use.id or f"toolu_scripted_{next(_ids)}", "name": use.name, "input": use.input}
        )
    return blocks


def _stop(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    tool = any(b["type"] == "tool_use" for b in blocks)
    return {"stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None}


def _message(model: str, content: list[dict[str, Any]], usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }


def _events(model: str, blocks: list[dict[str, Any]], usage: dict[str, int]) -> list[tuple[str, dict[str, Any]]]:
    start_usage = {**usage, "output_tokens": 1}
    out: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": _message(model, [], start_usage)})
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            empty: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty}))
        out.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": _stop(blocks), "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    out.append(("message_stop", {"type": "message_stop"}))
    return out
