"""A small client for the local daemon, standard library only (hooks import it; it must stay cheap).

    from codememory.daemon.client import Client
    client = Client()                      # port from daemon.json, token from the token file
    client.health()                        # {"status": "ok", ...}
    client.retrieve(["add retries to the webhook worker"], "/path/to/project", entities=["httpx"])

The daemon writes `$XDG_STATE_HOME/codememory/daemon.json` ({pid, host, port, started_at, version}) when it
starts listening and removes it when it stops; the token lives next to it in `token` (mode 0600).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codememory.core.paths import state_dir
from codememory.errors import DaemonRequestError, DaemonUnavailable
from codememory.web.listen import HOST
from codememory.web.token import TOKEN_NAME

INFO_NAME = "daemon.json"


def info_path() -> Path:
    return state_dir() / INFO_NAME


def token_path() -> Path:
    return state_dir() / TOKEN_NAME


def read_info() -> dict[str, Any] | None:
    """What the running daemon wrote about itself ({pid, host, port, started_at, version}), or None."""
    try:
        data = json.loads(info_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("port"), int) or not isinstance(data.get("pid"), int):
        return None
    return data


def read_token() -> str | None:
    try:
        token = token_path().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


@dataclass
class Response:
    status: int
    data: Any  # the parsed JSON body (None when the body is not JSON)
    headers: dict[str, str]


# No proxy, ever: the daemon is on loopback and the token must not travel through an HTTP_PROXY.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Client:
    def __init__(
        self, port: int | None = None, token: str | None = None, *, timeout: float = 2.0, host: str = HOST
    ) -> None:
        if port is None:
            info = read_info()
            if info is None:
                raise DaemonUnavailable("the codememory daemon is not running (start it: `codememory daemon start`)")
            port = int(info["port"])
        self.port = port
        self.host = host
        self.token = token if token is not None else read_token()
        self.timeout = timeout

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        auth: bool = True,
        raw: bytes | None = None,
    ) -> Response:
        """One HTTP request; any status comes back as a Response. DaemonUnavailable when nothing answers."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf-8"))
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if auth and self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:
                return _response(resp.status, resp.read(), dict(resp.headers.items()))
        except urllib.error.HTTPError as exc:
            with exc:
                return _response(exc.code, exc.read(), dict(exc.headers.items()))
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DaemonUnavailable(f"the codememory daemon at {self.base_url} is not reachable: {reason}") from None

    def health(self) -> dict[str, Any]:
        resp = self.request("GET", "/health", auth=False)
        if resp.status != 200 or not isinstance(resp.data, dict):
            raise DaemonUnavailable(f"the codememory daemon's /health answered {resp.status}")
        return resp.data

    def retrieve(
        self,
        query_expansion: str | Sequence[str],
        project_root: str | Path,
        *,
        entities: Sequence[str] = (),
        pinned_memory_ids: Sequence[str] = (),
        **options: int,
    ) -> dict[str, Any]:
        """POST /retrieve. `options`: max_memories, max_new, token_budget."""
        body: dict[str, Any] = {
            "query_expansion": query_expansion if isinstance(query_expansion, str) else list(query_expansion),
            "entities": list(entities),
            "pinned_memory_ids": list(pinned_memory_ids),
            "project_root": str(project_root),
            **options,
        }
        resp = self.request("POST", "/retrieve", body)
        if resp.status != 200 or not isinstance(resp.data, dict):
            message = resp.data.get("error") if isinstance(resp.data, dict) else None
            raise DaemonRequestError(resp.status, str(message or "unexpected answer"))
        return resp.data


def _response(status: int, raw: bytes, headers: dict[str, str]) -> Response:
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        data = None
    return Response(status, data, {k.lower(): v for k, v in headers.items()})
