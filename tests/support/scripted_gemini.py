"""A scripted Gemini API on 127.0.0.1 for tests: the model behind the real `gemini` CLI, which its `@google/genai`
client reaches at GOOGLE_GEMINI_BASE_URL (plain http is allowed for localhost) with an API key from GEMINI_API_KEY.

    write = ToolCallSpec("write_file", {"file_path": "/abs/hello.py", "content": "print('hi')\n"})
    with ScriptedGemini(Script([Reply("I'll write it.", tool_calls=[write]), Reply("done")])) as api:
        ...  # run gemini with GOOGLE_GEMINI_BASE_URL=api.base_url
        api.requests  # every JSON body received at models/<m>:generateContent / :streamGenerateContent, in order

Answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with one server-sent event holding the whole
candidate (`content.parts`: a `text` part, then one `functionCall` part per tool call; `finishReason` STOP) and
`:generateContent` with the same candidate as JSON; `:countTokens` gets a rough count. Anything else is answered
`404` and recorded in `other_requests`.

Gemini CLI also asks its model things besides the conversation, without tools (whether the model or the user
speaks next, a session summary): `Script` answers those with `side_reply`, or, when the request asks for JSON,
with `side_json`, and keeps its scripted replies for the conversation.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from support.scripted_llm import Reply, ScriptedHandler, ScriptedServer, ToolCallSpec

__all__ = ["Reply", "Script", "ScriptedGemini", "ToolCallSpec", "contents_text", "function_responses"]

Handler = Callable[[dict[str, Any]], Reply]


def is_side_request(body: dict[str, Any]) -> bool:
    """Gemini CLI's requests besides the conversation offer no tools."""
    return not any((t or {}).get("functionDeclarations") for t in body.get("tools") or [] if isinstance(t, dict))


def wants_json(body: dict[str, Any]) -> bool:
    config = body.get("generationConfig") or {}
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


def contents_text(body: dict[str, Any]) -> str:
    """Everything the model was shown in one request: the system instruction and every content's text and function
    responses."""
    system = body.get("systemInstruction")
    out = [parts_text(system.get("parts")) if isinstance(system, dict) else str(system or "")]
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        out.append(parts_text(content.get("parts")))
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                out.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
    return "\n".join(out)


def function_responses(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """function call id (or name, when the call had none) -> the functionResponse Gemini CLI sent back for it."""
    out: dict[str, dict[str, Any]] = {}
    for body in requests:
        for content in body.get("contents") or []:
            for part in (content or {}).get("parts") or []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict):
                    out[str(response.get("id") or response.get("name"))] = response
    return out


class Script:
    """Serves the replies in order to the conversation's requests; side requests get `side_reply` (or `side_json`
    when they ask for JSON); when the script is exhausted, every further request gets `fallback`."""

    def __init__(
        self,
        replies: Sequence[Reply],
        *,
        side_reply: str = "Scripted session",
        side_json: dict[str, Any] | None = None,
        fallback: str = "OK.",
    ) -> None:
        self.replies = list(replies)
        self.side_reply = side_reply
        # the next-speaker check: the user speaks next, so the CLI never asks the model to carry on by itself
        self.side_json = side_json or {"next_speaker": "user", "reasoning": "scripted"}
        self.fallback = fallback
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_side_request(body):
            return Reply(json.dumps(self.side_json) if wants_json(body) else self.side_reply)
        with self._lock:
            return self.replies.pop(0) if self.replies else Reply(self.fallback)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.replies)


class _GeminiHandler(ScriptedHandler):
    def _other(self, status: int = 404) -> None:
        api: ScriptedGemini = self.server.api  # type: ignore[attr-defined]
        with api._lock:
            api.other_requests.append((self.command, self.path))
        self.send_json(status, _error(status, f"{self.command} {self.path} is not scripted"))

    def do_GET(self) -> None:
        self._other()

    def do_POST(self) -> None:
        api: ScriptedGemini = self.server.api  # type: ignore[attr-defined]
        raw = self.read_body()
        path = self.path.split("?", 1)[0]
        method = path.rsplit(":", 1)[-1] if ":" in path else ""
        if method not in ("generateContent", "streamGenerateContent", "countTokens"):
            self._other()
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self.send_json(400, _error(400, "invalid JSON"))
            return
        if not isinstance(body, dict):
            self.send_json(400, _error(400, "the body is not an object"))
            return
        if method == "countTokens":
            self.send_json(200, {"totalTokens": max(1, len(raw) // 4)})
            return
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        api.record({**body, "model": model})
        reply = api.handler(body)
        if reply.status != 200:
            self.send_json(reply.status, _error(reply.status, reply.text or "scripted error"))
            return
        usage = reply.usage or {
            "prompt_tokens": max(1, len(raw) // 4),
            "completion_tokens": max(1, len(reply.text) // 4),
        }
        response = _response(model, reply, usage)
        if method == "streamGenerateContent":
            self.send_stream([b"data: " + json.dumps(response).encode() + b"\r\n\r\n"])
        else:
            self.send_json(200, response)


class ScriptedGemini(ScriptedServer):
    handler: Handler
    request_handler = _GeminiHandler

    def __init__(self, handler: Handler) -> None:
        super().__init__(handler)
        self.other_requests: list[tuple[str, str]] = []  # (method, path) of everything else asked

    @property
    def base_url(self) -> str:
        """What GOOGLE_GEMINI_BASE_URL takes: the client appends `/v1beta/models/…` itself."""
        return f"http://127.0.0.1:{self.port}"

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests that were not side requests."""
        return self._requests_where(lambda r: not is_side_request(r))


_ids = itertools.count(1)


def _error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT" if status == 400 else "ERROR"}}


def _response(model: str, reply: Reply, usage: dict[str, int]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        parts.append({"functionCall": {"id": f"scripted_call_{next(_ids)}", "name": call.name, "args": call.arguments}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": usage["prompt_tokens"],
            "candidatesTokenCount": usage["completion_tokens"],
            "totalTokenCount": usage["prompt_tokens"] + usage["completion_tokens"],
        },
        "modelVersion": model,
        "responseId": f"scripted_{next(_ids)}",
    }
