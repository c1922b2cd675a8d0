"""A real codememory daemon for tests: an isolated environment (its own HOME and XDG folders), the daemon
as a subprocess on port 0, and polling waits with deadlines (no sleeping for timing)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codememory.daemon.client import Client

PY = sys.executable
MAX_BODY = 20_000
START_DEADLINE = 60.0


def wait_for(what: str, check: Callable[[], Any], timeout: float = START_DEADLINE) -> Any:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


def isolated_env(base: Path, **extra: str | None) -> dict[str, str]:
    """The environment of a daemon (or CLI) that may touch nothing outside `base`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEMEMORY_", "XDG_"))}
    env.update(
        HOME=str(base / "home"),
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_STATE_HOME=str(base / "state"),
        XDG_DATA_HOME=str(base / "data"),
        CODEMEMORY_EMBEDDING_PROVIDER="none",
        CODEMEMORY_NO_SERVICE_MANAGER="1",
        CODEMEMORY_DAEMON_MAX_BODY_BYTES=str(MAX_BODY),
    )
    (base / "home").mkdir(parents=True, exist_ok=True)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def state_of(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "codememory"


def cli(env: dict[str, str], *args: Any, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`codememory daemon ARGS` in a subprocess (through `python -m codememory.daemon`)."""
    return subprocess.run(
        [PY, "-m", "codememory.daemon", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def codememory(env: dict[str, str], *args: Any) -> str:
    """The installed `codememory` console script (init, store, ...)."""
    script = Path(PY).parent / "codememory"
    done = subprocess.run(
        [str(script), *map(str, args)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_project(env: dict[str, str], root: Path, *memories: str) -> list[str]:
    """`codememory init` (which registers the project in `env`'s registry: the daemon serves only registered
    projects), then `store` each memory; returns their ids."""
    root.mkdir(parents=True, exist_ok=True)
    codememory(env, "--project", root, "init", "--assistants", "none")
    return [codememory(env, "--project", root, "store", text, "--quiet").strip() for text in memories]


def register(env: dict[str, str], root: Path) -> None:
    """Add `root` to the registry of `env` without `init` (for a store made another way, or a broken one)."""
    from codememory.core import registry

    resolved = root.resolve()
    registry.register(
        resolved, resolved / ".codememory", path=Path(env["XDG_CONFIG_HOME"]) / "codememory" / "registry.json"
    )


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    env: dict[str, str]
    port: int
    token: str

    @property
    def state(self) -> Path:
        return state_of(self.env)

    def client(self, token: str | None = None, timeout: float = 10.0) -> Client:
        return Client(port=self.port, token=self.token if token is None else token, timeout=timeout)

    def raw(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        """One request over http.client, headers exactly as given (Host included)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for name, value in (headers or {}).items():
                conn.putheader(name, value)
            if body is not None and "Content-Length" not in (headers or {}):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            raw = resp.read()
            try:
                data = json.loads(raw) if raw else None
            except ValueError:
                data = raw.decode(errors="replace")
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def host_headers(self, **more: str) -> dict[str, str]:
        return {"Host": f"127.0.0.1:{self.port}", **more}

    def auth_headers(self, **more: str) -> dict[str, str]:
        return self.host_headers(Authorization=f"Bearer {self.token}", **more)

    def login_link(self, project: Path | str | None = None) -> str:
        """What `codememory viewer --json` prints (in `project`, with --project), from the CLI against this daemon
        (which it must not start or open a browser for)."""
        where = ["--project", str(project)] if project is not None else []
        data = json.loads(codememory(self.env, *where, "viewer", "--json"))
        assert data["daemon_started"] is False and data["opened"] is False
        assert data["address"] == f"http://127.0.0.1:{self.port}/"
        return str(data["url"])

    def terminate(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=10)


def spawn(env: dict[str, str], *argv: str, script: str | None = None) -> Daemon:
    """`daemon run --port 0` (or a Python script that calls run_loop.run) as a subprocess; waits for /health."""
    args = [PY, "-c", script] if script else [PY, "-m", "codememory.daemon", "run", "--port", "0", *argv]
    out = open(Path(env["HOME"]).parent / "daemon-stderr.txt", "ab")  # noqa: SIM115 (the child keeps it)
    proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    out.close()
    info_file = state_of(env) / "daemon.json"

    def ready() -> dict[str, Any] | None:
        if proc.poll() is not None:
            err = (Path(env["HOME"]).parent / "daemon-stderr.txt").read_text(errors="replace")
            pytest.fail(f"daemon exited with {proc.returncode}: {err[-2000:]}")
        try:
            info = json.loads(info_file.read_text())
        except (OSError, ValueError):
            return None
        if info.get("pid") != proc.pid:
            return None
        try:
            Client(port=info["port"], token="", timeout=1).health()
        except Exception:
            return None
        return info

    info = wait_for("the daemon's /health", ready)
    token = (state_of(env) / "token").read_text().strip()
    return Daemon(proc, env, info["port"], token)
