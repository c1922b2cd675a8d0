"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests: the model behind the real `opencode`
binary and behind our own LLM providers.

    with ScriptedLLM(Script([Reply(tool_calls=[ToolCallSpec("bash", {"command": "ls"})]), Reply("done")])) as llm:
        ...  # point the client at llm.base_url
        llm.requests  # every JSON body received at /v1/chat/completions, in order

Answers `POST /v1/chat/completions` as JSON, or as server-sent events when the body has `"stream": true`
(the shape the AI SDK's openai-compatible provider parses), and `GET /v1/models`.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    usage: dict[str, int] | None = None  # default: a rough count from the request and the reply
    status: int = 200  # anything else answers with an error body


Handler = Callable[[dict[str, Any]], Reply]


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def request_text(body: dict[str, Any]) -> str:
    """Everything the model was shown in one request: every message's text (system, user, assistant, tool results)."""
    return "\n".join(message_text(m) for m in body.get("messages") or [] if isinstance(m, dict))


def tool_outputs(requests: list[dict[str, Any]]) -> dict[str, str]:
    """tool_call_id -> the result the client sent back to the model for that call."""
    out: dict[str, str] = {}
    for body in requests:
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "tool":
                out[str(m.get("tool_call_id"))] = message_text(m)
    return out


def is_title_request(body: dict[str, Any]) -> bool:
    """OpenCode asks its model for a session title in a separate request without tools."""
    system = " ".join(message_text(m) for m in body.get("messages", []) if m.get("role") == "system").lower()
    return "title" in system and not body.get("tools")


class Script:
    """Serves the replies in order to the conversation's requests; title requests get a fixed title;
    when the script is exhausted, every further request gets `fallback`. A reply may be a function of the
    request, for a step that acts on an earlier tool's result."""

    def __init__(
        self,
        replies: Sequence[Reply | Callable[[dict[str, Any]], Reply]],
        *,
        title: str = "Scripted session",
        fallback: str = "ok",
    ) -> None:
        self.replies = list(replies)
        self.title = title
        self.fallback = fallback
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_title_request(body):
            return Reply(self.title)
        with self._lock:
            reply = self.replies.pop(0) if self.replies else Reply(self.fallback)
        return reply(body) if callable(reply) else reply


class QuietServer(ThreadingHTTPServer):
    """A client that hangs up before the answer (a timeout test does) is not an error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedHandler(BaseHTTPRequestHandler):
    """What every scripted API's request handler shares: quiet, JSON answers, server-sent event streams."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_stream(self, events: Iterable[bytes]) -> None:
        """A `text/event-stream` answer of these (already framed) events; the connection closes after it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(event)
        self.wfile.flush()
        self.close_connection = True


class ScriptedServer:
    """A scripted API on 127.0.0.1 (a context manager): `handler` turns each request body into a reply;
    `requests` records the bodies (under `_lock`). Subclasses name their `ScriptedHandler` subclass in
    `request_handler`; it reaches this object as `self.server.api`."""

    request_handler: type[ScriptedHandler] = ScriptedHandler

    def __init__(self, handler: Callable[[dict[str, Any]], Any]) -> None:
        self.handler = handler
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: QuietServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def _requests_where(self, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if keep(r)]

    def __enter__(self) -> Self:
        self._server = QuietServer(("127.0.0.1", 0), self.request_handler)
        self._server.daemon_threads = True
        self._server.api = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _ChatHandler(ScriptedHandler):
    def do_GET(self) -> None:
        llm: ScriptedLLM = self.server.api  # type: ignore[attr-defined]
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": llm.model, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        llm: ScriptedLLM = self.server.api  # type: ignore[attr-defined]
        raw = self.read_body()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": "not found"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self.send_json(400, {"error": {"message": "invalid JSON"}})
            return
        llm.record(body)
        reply = llm.handler(body)
        if reply.status != 200:
            self.send_json(reply.status, {"error": {"message": reply.text or "scripted error"}})
            return
        usage = reply.usage or {
            "prompt_tokens": max(1, len(raw) // 4),
            "completion_tokens": max(1, len(reply.text) // 4),
        }
        usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        if body.get("stream"):
            chunks = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in _chunks(llm.model, reply, usage, body)]
            self.send_stream([*chunks, b"data: [DONE]\n\n"])
        else:
            self.send_json(200, _completion(llm.model, reply, usage))


class ScriptedLLM(ScriptedServer):
    handler: Handler
    request_handler = _ChatHandler

    def __init__(self, handler: Handler, *, model: str = "scripted-model") -> None:
        super().__init__(handler)
        self.model = model

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests that were not title requests."""
        return self._requests_where(lambda r: not is_title_request(r))


_call_ids = itertools.count(1)


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{next(_call_ids)}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in reply.tool_calls
    ]


def _completion(model: str, reply: Reply, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": usage,
    }


def _chunks(model: str, reply: Reply, usage: dict[str, int], body: dict[str, Any]) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        out.append(chunk({"content": reply.text}))
    for i, call in enumerate(_tool_calls(reply)):
        out.append(chunk({"tool_calls": [{"index": i, **call}]}))
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage", True):
        out.append({**chunk({}), "choices": [], "usage": usage})
    return out
