"""The web viewer's pages and login: `GET /` (the page), `GET /static/<file>` (its script and style, shipped in the
package under codememory/data/viewer: no CDN, works offline), `GET /login?ticket=...` (a one-time link that sets the
session cookie and hands the page its CSRF token in the redirect's fragment), `POST /viewer/login-link` (for
`codememory viewer`, with the bearer token), `GET /viewer/session` (the registered projects) and `GET /favicon.ico`.

The page and its files need no token: they hold no data, and everything they show comes from the JSON endpoints,
which want the token or the viewer's session cookie with its CSRF token (`web.security`, `web.viewer_session`).
The security middleware puts a strict Content-Security-Policy on every answer: the page runs only these files,
never inline script.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Security
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.security import HTTPBearer
from pydantic import BaseModel, Field

from codememory.core.model import CATEGORIES, LINK_TYPES
from codememory.daemon.state import DaemonState
from codememory.errors import ProjectNotAllowed
from codememory.web.viewer_session import ViewerSessions, set_cookie_header

STATIC_PREFIX = "/static/"
FAVICON = "favicon.svg"
# Public: the page, the login, and the icon a browser asks for on its own (without it every page view was a 401 and
# a line in the log).
PAGE_PATHS = frozenset({"/", "/login", "/favicon.ico"})
# What the pages call (api.js, app.js, memories.js): the viewer session's cookie is taken there and nowhere else.
SESSION_PREFIXES = ("/viewer/",)
SESSION_PATHS = frozenset({"/memory/transcript", "/sessions/list", "/sessions/search"})
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_LOGIN_FAILED = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>codememory</title>
<link rel="icon" href="/static/favicon.svg"><link rel="stylesheet" href="/static/style.css"></head><body>
<main class="login-failed"><h1>This login link does not work</h1><p>A login link works once, for five minutes. Run
<code>codememory viewer</code> again for a new one.</p></main></body></html>"""


def static_files() -> dict[str, tuple[bytes, str]]:
    """The viewer's files by name, read once from the package: only these names are ever served."""
    folder = resources.files("codememory").joinpath("data", "viewer")
    out: dict[str, tuple[bytes, str]] = {}
    for item in folder.iterdir():
        suffix = "." + item.name.rsplit(".", 1)[-1]
        if item.is_file() and suffix in _TYPES:
            out[item.name] = (item.read_bytes(), _TYPES[suffix])
    return out


class LoginLinkBody(BaseModel):
    project_root: Annotated[
        str | None,
        Field(max_length=4096, description="The project the page opens on (where `codememory viewer` was run)."),
    ] = None


class LoginLink(BaseModel):
    url: str = Field(description="Open it in a browser: it logs in once, within `expires_in_seconds`.")
    expires_in_seconds: int


class ViewerProject(BaseModel):
    root: str
    name: str
    exists: bool = Field(description="Its store is still there.")


class ViewerSession(BaseModel):
    projects: list[ViewerProject] = Field(description="The projects registered on this machine.")
    version: str
    categories: list[str]
    link_types: list[str]


def create_router(state: DaemonState, sessions: ViewerSessions) -> APIRouter:
    files = static_files()
    bearer = HTTPBearer(auto_error=False, description="The per-install token, or the viewer's session cookie.")
    router = APIRouter()

    def file_response(name: str) -> Response:
        found = files.get(name)
        if found is None:
            return Response(b'{"error": "not found"}', status_code=404, media_type="application/json")
        return Response(found[0], media_type=found[1])

    @router.get("/", include_in_schema=False)
    def page() -> Response:
        return file_response("index.html")

    @router.get(STATIC_PREFIX + "{name}", include_in_schema=False)
    def static(name: str) -> Response:
        return file_response(name)

    @router.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return file_response(FAVICON)

    @router.get("/login", tags=["viewer"], response_class=HTMLResponse, responses={403: {"description": "Bad link"}})
    def login(ticket: str = "", project: str = "") -> Response:
        """Redeem a one-time login ticket (from `codememory viewer`): sets the session cookie (HttpOnly,
        SameSite=Strict) and redirects to `/#login=<CSRF token>`, the only time the token is handed out: a
        fragment never reaches a server, and the page keeps it in its own origin's storage. Send it as
        X-CSRF-Token with the cookie on every request. `project` (the folder `codememory viewer` ran in) goes on
        in the fragment: the page opens on it when it is registered. A used, expired or unknown ticket is a 403
        page."""
        done = sessions.redeem(ticket[:200]) if ticket else None
        if done is None:
            return HTMLResponse(_LOGIN_FAILED, status_code=403)
        chosen = f"&project={quote(project[:4096], safe='')}" if project else ""
        response = RedirectResponse(f"/#login={done.csrf}{chosen}", status_code=303)
        response.headers["set-cookie"] = set_cookie_header(done)
        return response

    @router.post("/viewer/login-link", tags=["viewer"], dependencies=[Security(bearer)], response_model=LoginLink)
    def login_link(request: Request, body: LoginLinkBody | None = None) -> dict[str, Any]:
        """A one-time login link for the viewer (`codememory viewer` asks for it), opening on `project_root` when
        given. Bearer token only: a browser session cannot mint more sessions."""
        if getattr(request.state, "auth", None) != "bearer":
            raise ProjectNotAllowed("a login link needs the bearer token")
        ticket, seconds = sessions.new_ticket()
        url = f"http://{state.host}:{state.port}/login?ticket={ticket}"
        if body is not None and body.project_root:
            url += f"&project={quote(body.project_root, safe='')}"
        return {"url": url, "expires_in_seconds": int(seconds)}

    @router.get("/viewer/session", tags=["viewer"], dependencies=[Security(bearer)], response_model=ViewerSession)
    def session() -> dict[str, Any]:
        """The projects the page may show (the registry's), the version, the categories and link types. Never the
        CSRF token: the cookie alone, which the browser also sends to other servers on 127.0.0.1, must not get it."""
        from codememory.operations.projects import list_projects

        projects = [
            {"root": str(p.get("root", "")), "name": str(p.get("name") or p.get("root", "")), "exists": p["exists"]}
            for p in list_projects().projects
        ]
        return {
            "projects": projects,
            "version": state.version,
            "categories": list(CATEGORIES),
            "link_types": list(LINK_TYPES),
        }

    return router
