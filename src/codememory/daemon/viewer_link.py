"""`codememory viewer`: a one-time login link to the daemon's web viewer, starting the daemon when it is not running.

The CLI can read the token file, a browser cannot: the daemon hands the CLI a ticket (POST /viewer/login-link, bearer
token) and the printed link trades it once for a session cookie (see codememory.web.viewer_session)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codememory.core.result import Result
from codememory.errors import DaemonRequestError


@dataclass(frozen=True)
class ViewerLink(Result):
    """`viewer --json`: the login link (it works once, for `expires_in_seconds`), the viewer's address, whether this
    command started the daemon, and whether a browser was opened on the link."""

    url: str
    address: str
    expires_in_seconds: int
    daemon_started: bool
    opened: bool


def login_link(project: Path | None = None, *, open_browser: bool = False) -> ViewerLink:
    """A login link whose page opens on `project` (when it is registered; else the last one chosen)."""
    from codememory.daemon import lifecycle
    from codememory.daemon.client import Client

    started = False
    if not lifecycle.status(with_health=False).running:
        lifecycle.start()
        started = True
    client = Client(timeout=10.0)
    resp = client.request("POST", "/viewer/login-link", {"project_root": str(project) if project else None})
    if resp.status == 404:
        raise DaemonRequestError(
            404, "the running daemon has no web viewer (an older version): restart it with `codememory daemon stop`"
        )
    data = resp.data if isinstance(resp.data, dict) else {}
    if resp.status != 200 or not isinstance(data.get("url"), str):
        raise DaemonRequestError(resp.status, str(data.get("error") or "unexpected answer"))
    opened = False
    if open_browser:
        import webbrowser

        try:
            opened = webbrowser.open(data["url"])
        except webbrowser.Error:
            opened = False
    return ViewerLink(data["url"], client.base_url + "/", int(data.get("expires_in_seconds", 0)), started, opened)
