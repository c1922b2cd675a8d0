"""The web viewer's access and JSON endpoints over HTTP, against a real daemon: the one-time login link, the session
cookie's flags, the CSRF token (handed out once, in the login redirect's fragment) on every request, so that a
cookie replayed by another server on 127.0.0.1 reaches nothing, the Content-Security-Policy on every answer, the
Host and Origin checks, and the curation endpoints (edit, archive, forget, link) seen from the CLI. The pages
themselves are driven in a real browser by tests/viewer/test_viewer_browser.py."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from codememory.core.result import json_keys
from codememory.daemon.viewer_api import render_markdown
from codememory.operations.get import MemoryDetail
from codememory.retrieval.search import SearchResult
from support.daemon import PY, Daemon, codememory, isolated_env, make_project, spawn

pytestmark = pytest.mark.slow  # a daemon subprocess

CSRF = "X-CSRF-Token"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path, list[str]]]:
    base = tmp_path_factory.mktemp("viewer-api")
    env = isolated_env(base)
    project = base / "project"
    ids = make_project(
        env,
        project,
        "Use httpx, not requests: we need HTTP/2",
        "The CI runners have two cores; keep test parallelism at 2",
        "Deploys go through the staging cluster first",
    )
    daemon = spawn(env)
    try:
        yield daemon, project.resolve(), ids
    finally:
        daemon.terminate()


def log_in(daemon: Daemon, project: Path | None = None) -> tuple[str, str]:
    """(session cookie, CSRF token) of a fresh browser session: the token comes only in the redirect's fragment,
    with the project the link was made in."""
    link = urlsplit(daemon.login_link(project))
    status, headers, _ = daemon.raw("GET", f"{link.path}?{link.query}", headers=daemon.host_headers())
    assert status == 303 and headers["location"].startswith("/#login=")
    fragment = parse_qs(headers["location"].removeprefix("/#"))
    (csrf,) = fragment["login"]
    assert len(csrf) >= 40
    if project is not None:
        assert fragment["project"] == [str(project)]
    cookie = headers["set-cookie"].split(";")[0]
    assert csrf not in headers["set-cookie"]
    status, _, data = daemon.raw("GET", "/viewer/session", headers=daemon.host_headers(Cookie=cookie, **{CSRF: csrf}))
    assert status == 200, data
    return cookie, csrf


def post(daemon: Daemon, path: str, body: dict[str, Any], **headers: str) -> tuple[int, dict[str, str], Any]:
    raw = json.dumps(body).encode()
    return daemon.raw("POST", path, raw, daemon.host_headers(**{"Content-Type": "application/json", **headers}))


def test_the_login_link_works_once_and_sets_a_strict_cookie(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, _project, _ids = world
    link = urlsplit(daemon.login_link())
    assert link.netloc == f"127.0.0.1:{daemon.port}" and link.path == "/login"
    status, headers, _ = daemon.raw("GET", f"{link.path}?{link.query}", headers=daemon.host_headers())
    assert status == 303
    flags = [f.strip() for f in headers["set-cookie"].split(";")]
    assert flags[0].startswith("codememory_viewer=") and {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(flags)
    again, _, page = daemon.raw("GET", f"{link.path}?{link.query}", headers=daemon.host_headers())
    assert again == 403 and "works once" in page
    assert daemon.raw("GET", "/login?ticket=made-up", headers=daemon.host_headers())[0] == 403


def test_without_the_cookie_or_the_csrf_token_the_api_refuses(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, project, _ids = world
    cookie, csrf = log_in(daemon, project)
    body = {"project_root": str(project), "query": "httpx"}
    assert post(daemon, "/viewer/search", body)[0] == 401  # neither cookie nor token
    assert post(daemon, "/viewer/search", body, Cookie="codememory_viewer=forged")[0] == 401
    assert post(daemon, "/viewer/search", body, Cookie=cookie)[0] == 401  # no CSRF token
    assert post(daemon, "/viewer/search", body, Cookie=cookie, **{"X-CSRF-Token": "wrong"})[0] == 401
    other_cookie, other_csrf = log_in(daemon)  # a token is good only with its own session
    assert post(daemon, "/viewer/search", body, Cookie=cookie, **{"X-CSRF-Token": other_csrf})[0] == 401
    assert post(daemon, "/viewer/search", body, Cookie=other_cookie, **{"X-CSRF-Token": other_csrf})[0] == 200
    status, _, found = post(daemon, "/viewer/search", body, Cookie=cookie, **{"X-CSRF-Token": csrf})
    assert status == 200 and found["results"][0]["text"].startswith("Use httpx")
    keys = json_keys(SearchResult)  # every key but the ones left out when empty (optional)
    assert {k for k, v in keys.items() if not v.optional} <= set(found) <= set(keys)
    # the few agents' endpoints the pages reuse take the session too
    listed = post(daemon, "/sessions/list", {"project_root": str(project)}, Cookie=cookie, **{"X-CSRF-Token": csrf})
    assert listed[0] == 200
    # a browser session cannot mint login links
    assert post(daemon, "/viewer/login-link", {}, Cookie=cookie, **{"X-CSRF-Token": csrf})[0] == 403
    # another site's page, even with the cookie and the token
    foreign = {"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": "http://127.0.0.1:1"}
    assert post(daemon, "/viewer/search", body, **foreign)[0] == 403
    site = {"Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"}
    assert post(daemon, "/viewer/search", body, **site)[0] == 403
    rebound = daemon.raw("GET", "/", headers={"Host": f"evil.example:{daemon.port}"})
    assert rebound[0] == 421


def test_the_viewers_search_counts_what_was_held_back_and_lists_it_when_asked(
    world: tuple[Daemon, Path, list[str]],
) -> None:
    daemon, project, ids = world
    cookie, csrf = log_in(daemon, project)
    question = {"project_root": str(project), "query": "who gets alerted when the staging site goes down?"}
    status, _, found = post(daemon, "/viewer/search", question, Cookie=cookie, **{CSRF: csrf})
    assert status == 200 and found["results"] == [] and found["held_back"] == 1  # shares only "staging"
    status, _, everything = post(daemon, "/viewer/search", {**question, "all": True}, Cookie=cookie, **{CSRF: csrf})
    assert status == 200 and [(r["id"], r["held_back"]) for r in everything["results"]] == [(ids[2], True)]


# Every endpoint the viewer's session cookie opens, with a body that passes validation where that is harmless (the
# writes name an unknown memory: refused by the operation, not by the guard).
SESSION_ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/viewer/session", {}),
    ("POST", "/viewer/overview", {}),
    ("POST", "/viewer/search", {"query": "httpx"}),
    ("POST", "/viewer/list", {}),
    ("POST", "/viewer/memory", {"id": "mem_00000000"}),
    ("POST", "/viewer/memory/edit", {"id": "mem_00000000", "text": "replayed"}),
    ("POST", "/viewer/memory/archive", {"ids": ["mem_00000000"]}),
    ("POST", "/viewer/memory/forget", {"ids": ["mem_00000000"]}),
    ("POST", "/viewer/memory/link", {"from_id": "mem_00000000", "to_id": "mem_00000001"}),
    ("POST", "/viewer/session-detail", {"session_id": "2020-01-01-none"}),
    ("POST", "/viewer/injections", {}),
    ("POST", "/viewer/runs", {}),
    ("POST", "/viewer/report", {}),
    ("POST", "/memory/transcript", {"reference": "mem_00000000"}),
    ("POST", "/sessions/list", {}),
    ("POST", "/sessions/search", {"query": "httpx"}),
    ("GET", "/viewer/overview", {}),  # a GET where a POST belongs: still refused before routing
    ("GET", "/sessions/list", {}),
]


def call(
    daemon: Daemon, method: str, path: str, body: dict[str, Any], **headers: str
) -> tuple[int, dict[str, str], Any]:
    if method == "GET":
        return daemon.raw("GET", path, headers=daemon.host_headers(**headers))
    return post(daemon, path, body, **headers)


@pytest.mark.parametrize(
    ("method", "path", "body"), SESSION_ENDPOINTS, ids=[f"{m} {p}" for m, p, _ in SESSION_ENDPOINTS]
)
def test_a_replayed_cookie_without_its_token_reaches_nothing(
    world: tuple[Daemon, Path, list[str]], method: str, path: str, body: dict[str, Any]
) -> None:
    """Browsers send the session cookie to every port of 127.0.0.1, so another local web server the browser visits
    gets it and can replay it with the daemon's Host header. Without the CSRF token (which only the daemon's own
    page holds) every data endpoint refuses it, GET or POST, /viewer/session included; with the token it passes the
    guard."""
    daemon, project, _ids = world
    cookie, csrf = log_in(daemon)
    full = {"project_root": str(project), **body}
    status, _, answer = call(daemon, method, path, full, Cookie=cookie)
    assert status == 401, answer
    assert csrf not in json.dumps(answer)
    assert call(daemon, method, path, full, Cookie=cookie, **{CSRF: ""})[0] == 401
    status, _, answer = call(daemon, method, path, full, Cookie=cookie, **{CSRF: csrf})
    assert status not in (401, 403), answer


def test_the_token_is_handed_out_only_in_the_login_redirect(world: tuple[Daemon, Path, list[str]]) -> None:
    """After the redirect's fragment, no answer to the session (with or without its token) carries the token: a
    server replaying the cookie has no endpoint to read it from."""
    daemon, project, (httpx_id, _ci, _deploy) = world
    cookie, csrf = log_in(daemon)
    root = str(project)
    answers = [
        call(daemon, m, p, {"project_root": root, **b}, Cookie=cookie, **{CSRF: csrf}) for m, p, b in SESSION_ENDPOINTS
    ]
    answers += [call(daemon, m, p, {"project_root": root, **b}, Cookie=cookie) for m, p, b in SESSION_ENDPOINTS]
    answers.append(
        post(daemon, "/viewer/memory", {"project_root": root, "id": httpx_id}, Cookie=cookie, **{CSRF: csrf})
    )
    for path in ("/", "/static/app.js", "/static/api.js", "/health", "/openapi.json", "/login"):
        answers.append(daemon.raw("GET", path, headers=daemon.host_headers(Cookie=cookie)))
    assert any(a[0] == 200 and isinstance(a[2], dict) and "projects" in a[2] for a in answers)
    for status, headers, data in answers:
        assert csrf not in json.dumps(data) and csrf not in json.dumps(headers), status
    # a bearer caller (the CLI) still reads /viewer/session, which has no token field at all
    status, _, data = daemon.raw("GET", "/viewer/session", headers=daemon.auth_headers())
    assert status == 200 and "csrf_token" not in data and data["projects"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/hook", {"event": "UserPromptSubmit", "payload": {"prompt": "x"}}),
        ("/api/raw-events", {"events": []}),
        ("/memory/store", {"text": "planted through the browser session"}),
        ("/memory/search", {"query": "httpx"}),
        ("/sessions/checkpoint", {"session_id": "s1"}),
        ("/retrieve", {"phrases": ["httpx"]}),
        ("/embed", {"texts": ["x"]}),
    ],
)
def test_a_browser_session_reaches_only_what_the_viewer_uses(
    world: tuple[Daemon, Path, list[str]], path: str, body: dict[str, Any]
) -> None:
    """The cookie stands for the token only on the viewer's own endpoints: a script that got into the page (or a
    page that got hold of a session) cannot feed hooks, raw events or new memories to the agents' side."""
    daemon, project, _ids = world
    cookie, csrf = log_in(daemon)
    status, _, answer = post(
        daemon, path, {"project_root": str(project), **body}, Cookie=cookie, **{"X-CSRF-Token": csrf}
    )
    assert status == 401, (path, answer)
    listed = json.loads(codememory(daemon.env, "--project", project, "search", "planted", "--json"))
    assert listed["results"] == []


def test_every_answer_carries_a_strict_content_security_policy(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, _project, _ids = world
    answers = [
        daemon.raw("GET", "/", headers=daemon.host_headers()),
        daemon.raw("GET", "/static/app.js", headers=daemon.host_headers()),
        daemon.raw("GET", "/health", headers=daemon.host_headers()),
        daemon.raw("POST", "/viewer/overview", b"{}", daemon.host_headers()),  # refused: 401
        daemon.raw("GET", "/static/../server.py", headers=daemon.host_headers()),
    ]
    assert [a[0] for a in answers] == [200, 200, 200, 401, 404]
    for _status, headers, _data in answers:
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    page = answers[0][2]
    assert '<script type="module" src="/static/app.js"></script>' in page and "<script>" not in page
    assert answers[1][1]["content-type"].startswith("text/javascript")


def test_curating_through_the_api_shows_in_the_cli(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, project, (httpx_id, ci_id, deploy_id) = world
    cookie, csrf = log_in(daemon)
    auth = {"Cookie": cookie, "X-CSRF-Token": csrf}
    root = {"project_root": str(project)}
    edit = {**root, "id": ci_id, "text": "The CI runners have four cores now", "tags": ["ci"], "importance": 0.9}
    status, _, edited = post(daemon, "/viewer/memory/edit", {**edit, "category": "fact"}, **auth)
    assert status == 200, edited
    assert set(edited) == set(json_keys(MemoryDetail))
    shown = json.loads(codememory(daemon.env, "--project", project, "show", ci_id, "--json"))
    assert (shown["text"], shown["category"], shown["tags"], shown["importance"]) == (
        "The CI runners have four cores now",
        "fact",
        ["ci"],
        0.9,
    )
    found = json.loads(codememory(daemon.env, "--project", project, "search", "four cores", "--json"))
    assert [r["id"] for r in found["results"]] == [ci_id]  # re-indexed
    assert json.loads(codememory(daemon.env, "--project", project, "search", "parallelism", "--json"))["results"] == []

    seen = [post(daemon, "/viewer/memory", {**root, "id": ci_id}, **auth)[2]["access_count"] for _ in range(2)]
    assert seen[0] == seen[1]  # a person looking is not an agent's access

    bad = post(daemon, "/viewer/memory/edit", {**root, "id": ci_id, "category": "nonsense"}, **auth)
    assert bad[0] == 400 and "unknown category" in bad[2]["error"]

    link = {**root, "from_id": httpx_id, "to_id": deploy_id, "type": "conflicts"}
    assert post(daemon, "/viewer/memory/link", link, **auth)[0] == 200
    links = json.loads(codememory(daemon.env, "--project", project, "show", httpx_id, "--json"))["links"]
    assert {"direction": "out", "id": deploy_id, "type": "conflicts", "score": None} in links

    assert post(daemon, "/viewer/memory/archive", {**root, "ids": [deploy_id]}, **auth)[2]["archived"] == [deploy_id]
    assert json.loads(codememory(daemon.env, "--project", project, "show", deploy_id, "--json"))["archived"] is True
    assert post(daemon, "/viewer/memory/forget", {**root, "ids": [deploy_id]}, **auth)[2]["forgotten"] == [deploy_id]
    listed = json.loads(codememory(daemon.env, "--project", project, "list", "--include-archived", "--json"))
    assert deploy_id not in [m["id"] for m in listed["memories"]]


def test_the_overview_and_the_injections_answer(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, project, _ids = world
    client = daemon.client()
    client.retrieve(["which HTTP client do we use?"], project, entities=["httpx"])
    overview = client.request("POST", "/viewer/overview", {"project_root": str(project)}).data
    assert overview["stats"]["live"] >= 1 and "llm_spend" in overview["stats"] and overview["health"]["status"] == "ok"
    assert overview["recent_injections"] and overview["recent_memories"]["memories"]
    ledger = client.request("POST", "/viewer/injections", {"project_root": str(project)}).data
    first = ledger["explained"]["injections"][-1]
    assert first["kind"] == "hud" and first["memories"][0]["text"].startswith("Use httpx") and first["tokens"] > 0
    report = client.request("POST", "/viewer/report", {"project_root": str(project), "since": "7d"})
    assert report.status == 200 and report.data["tokens"] > 0 and report.data["since"], report.data
    bad = client.request("POST", "/viewer/report", {"project_root": str(project), "since": "the other day"})
    assert bad.status in (400, 422) and "since" in json.dumps(bad.data), bad.data


def test_session_markdown_is_rendered_without_raw_html_or_unsafe_links() -> None:
    html = render_markdown(
        "# Goal\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n"
        "[a](javascript:alert(1)) [b](https://example.com) ![c](https://example.com/x.png)"
    )
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html and '<a href="https://example.com">b</a>' in html


def test_the_openapi_schema_documents_the_viewer_endpoints(world: tuple[Daemon, Path, list[str]]) -> None:
    daemon, _project, _ids = world
    schema = daemon.client().request("GET", "/openapi.json", auth=False).data
    paths = set(schema["paths"])
    viewer = ["login-link", "session", "overview", "search", "list", "memory", "memory/edit", "memory/archive"]
    viewer += ["memory/forget", "memory/link", "session-detail", "injections"]
    for path in ["/login", *(f"/viewer/{p}" for p in viewer)]:
        assert path in paths, path
    assert "X-CSRF-Token" in schema["info"]["description"]


def test_viewer_starts_the_daemon_and_opens_the_browser_it_is_given(tmp_path: Path) -> None:
    """No daemon running: `codememory viewer --open` starts one, and hands the link to $BROWSER (here a script
    that writes down what it was given, as a browser would be started)."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{opened}"\n')
    browser.chmod(0o755)
    env = isolated_env(tmp_path, BROWSER=f"{browser} %s", DISPLAY=None, WAYLAND_DISPLAY=None)
    make_project(env, tmp_path / "project", "Use httpx, not requests")
    script = str(Path(PY).parent / "codememory")
    try:
        done = subprocess.run([script, "viewer", "--open"], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Started the codememory daemon." in done.stderr
        url = done.stdout.split()[-1]
        assert url.startswith("http://127.0.0.1:") and "/login?ticket=" in url
        assert opened.read_text() == url
        again = subprocess.run([script, "viewer", "--json"], env=env, capture_output=True, text=True, timeout=60)
        data = json.loads(again.stdout)
        assert data["daemon_started"] is False and data["url"] != url  # a fresh ticket each time
    finally:
        subprocess.run([script, "daemon", "stop"], env=env, capture_output=True, timeout=60, check=False)


def test_the_icon_a_browser_asks_for_is_served_to_anyone(world: tuple[Daemon, Path, list[str]]) -> None:
    """Browsers fetch /favicon.ico on their own, without the session: it is public, like the page (it holds no
    data), so a page view is not a 401 and a line in the daemon's log."""
    daemon, _project, _ids = world
    status, headers, _ = daemon.raw("GET", "/favicon.ico", headers=daemon.host_headers())
    assert status == 200 and headers["content-type"] == "image/svg+xml"
    status, headers, _ = daemon.raw("GET", "/static/favicon.svg", headers=daemon.host_headers())
    assert status == 200 and headers["content-type"] == "image/svg+xml"
