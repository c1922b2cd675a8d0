"""The web viewer in a real browser: Debian's Chromium (/usr/bin/chromium, or $CODEMEMORY_TEST_CHROMIUM) driven by
Playwright, which never downloads a browser here (`executable_path`), against a real daemon on a temporary project.

One walk through every page: log in through the link `codememory viewer` prints, search and find a memory, edit it
and see the change in the CLI, forget one after confirming, open a session, read the injections after a /retrieve,
the Runs page (a consolidation run) and the Usefulness page (one agent session shown two memories, one cited); a
hostile memory (`<script>`, an `onerror` attribute) shows as text and runs nothing; a second tab works; a browser
without the cookie, a request without the CSRF token, the session cookie as the browser hands it to another server
on 127.0.0.1 (replayed from there) and a used login link are refused. A screenshot of each page is kept in
tests/artifacts/viewer/ (git-ignored)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from codememory.capture.turns import ToolCall, Turn
from codememory.capture.usage import observe_turn
from codememory.operations.explain import record_injection
from codememory.service.project_store import Store
from support.capture import capture_by_hand
from support.daemon import Daemon, codememory, isolated_env, make_project, spawn

pytestmark = pytest.mark.slow  # a daemon and a browser

CHROMIUM = Path(os.environ.get("CODEMEMORY_TEST_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "viewer"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = '<script>window.__pwned = 1; alert("script")</script><img src=x onerror="window.__pwned = 2; alert(1)"> evil'
TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    assert CHROMIUM.is_file(), f"no Chromium at {CHROMIUM}: apt-get install -y chromium (see .ci/run)"
    base = tmp_path_factory.mktemp("viewer-browser")
    env = isolated_env(base)
    # registered first: the page must still open on the project `codememory viewer` was run for
    make_project(env, base / "other", "A memory of another project")
    project = base / "project"
    httpx_id, ci_id, deploy_id, hostile_id = make_project(
        env,
        project,
        "Use httpx, not requests: we need HTTP/2",
        "The CI runners have two cores; keep test parallelism at 2",
        "Deploys go through the staging cluster first",
        HOSTILE,
    )
    turns = capture_by_hand(project, "codex", "codex-xyz", ["fix the flaky login test in the signup flow"])
    flaky_id = codememory(
        env, "--project", project, "store", "The login test is flaky", "--source", turns[0].memory_source, "-q"
    ).strip()
    codememory(env, "--project", project, "consolidate", "--no-model")  # a recorded run for the Runs page
    codememory(env, "--project", project, "link", flaky_id, ci_id, "--type", "contextualizes")
    show_and_cite(project, shown=[ci_id, hostile_id], cited=ci_id)  # for the Usefulness page
    daemon = spawn(env)
    try:
        root = str(project.resolve())
        saved = daemon.client().request(
            "POST",
            "/sessions/checkpoint",
            {
                "project_root": root,
                "slug": "http-client",
                "goal": "Move the webhook worker to httpx",
                "decisions": ["**httpx** for HTTP/2 <img src=x onerror=alert(3)>"],
                "work_completed": ["Swapped the client"],
            },
        )
        assert saved.status == 200, saved.data
        retrieved = daemon.client().retrieve(["which HTTP client for the webhook worker"], root, entities=["httpx"])
        assert retrieved["memories"], retrieved
        yield {
            "daemon": daemon,
            "project": root,
            "ids": {"httpx": httpx_id, "ci": ci_id, "deploy": deploy_id, "hostile": hostile_id, "flaky": flaky_id},
            "session_id": saved.data["session_id"],
        }
    finally:
        daemon.terminate()


def show_and_cite(project: Path, shown: list[str], cited: str) -> None:
    """An agent session is shown these memories by the HUD, then a tool call of its next turn names `cited`."""
    with Store.open(project) as store:
        memories = [{"id": i, "text": store.get(i, touch=False).text, "why": {}} for i in shown]
        record_injection(store, kind="hud", memories=memories, query=["ci"], session_id="ses_viewer")
        call = ToolCall("bash", "c1", "completed", {"command": f"echo {cited}"}, started_at="2099-01-01T00:00:01.000Z")
        observe_turn(
            store.db, Turn("opencode", "ses_viewer", "t1", 1, "2099-01-01T00:00:00.000Z", None, "x", (), (call,))
        )


def show(daemon: Daemon, project: str, memory_id: str) -> dict[str, Any]:
    return dict(json.loads(codememory(daemon.env, "--project", project, "show", memory_id, "--json")))


def exists(daemon: Daemon, project: str, memory_id: str) -> bool:
    listed = json.loads(codememory(daemon.env, "--project", project, "list", "--include-archived", "--json"))
    return memory_id in [m["id"] for m in listed["memories"]]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        # launch() gives each context a fresh profile in a temporary user-data-dir of its own
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_every_page_in_a_real_browser(world: dict[str, Any], browser: Any) -> None:
    daemon: Daemon = world["daemon"]
    project: str = world["project"]
    ids: dict[str, str] = world["ids"]
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    dialogs: list[str] = []
    console: list[str] = []
    errors: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: console.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    refused: list[str] = []
    page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)

    def shot(name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def on(page_name: str) -> None:
        page.wait_for_selector(f'main[data-page="{page_name}"]')

    # log in through the link: redirected to the overview of the project the link was made in (not the first
    # registered), the token moved from the address bar into storage
    link = daemon.login_link(project)
    page.goto(link)
    on("overview")
    assert page.url == f"http://127.0.0.1:{daemon.port}/"
    token = page.evaluate("localStorage.getItem('codememory.viewer.csrf')")
    assert token and len(token) >= 40
    assert page.input_value("#project") == project
    assert page.inner_text("#count-live .n").strip() == "5"
    # no LLM is the default, not a fault: said plainly, not listed in red with what is degraded
    assert "LLM" not in page.inner_text("#degraded")
    assert "the default" in page.inner_text("#llm-none")
    # a capture that never ran is said plainly, not as "— behind, last run never"
    assert page.inner_text("#capture-never") == "capture has not run yet"
    assert page.evaluate("getComputedStyle(document.querySelector('#llm-none')).color") != "rgb(180, 35, 24)"  # --bad
    # the browser's own request for an icon is answered: no 401 (nor a log line) on every page
    assert refused == [], refused
    favicon = page.evaluate(
        "async () => { const r = await fetch('/favicon.ico'); return [r.status, r.headers.get('content-type')]; }"
    )
    assert favicon == [200, "image/svg+xml"]
    shot("overview")

    # search and find a memory, with its score explanation
    page.goto(f"{page.url}#/memories")
    on("memories")
    page.fill("input[name=q]", "httpx HTTP/2")
    page.click("#memory-filters button[type=submit]")
    page.wait_for_selector(f'tr.hit[data-id="{ids["httpx"]}"]')
    row = page.inner_text(f'tr.hit[data-id="{ids["httpx"]}"]')
    assert "Use httpx" in row and "exact" in row
    shot("memories")

    # open it, edit it, and the CLI sees the change
    page.click(f'a[href="#/memory/{ids["httpx"]}"]')
    on("memory")
    page.fill("#edit-text", "Use httpx everywhere: HTTP/2 and one client API")
    page.fill("#edit-tags", "http, deps")
    page.select_option("#edit-category", "decision")
    page.fill("#edit-importance", "0.8")
    page.click("#edit-save")
    page.wait_for_selector("#status .notice")
    assert page.inner_text("#memory-text") == "Use httpx everywhere: HTTP/2 and one client API"
    shot("memory")
    edited = show(daemon, project, ids["httpx"])
    assert (edited["text"], edited["tags"], edited["category"], edited["importance"]) == (
        "Use httpx everywhere: HTTP/2 and one client API",
        ["deps", "http"],
        "decision",
        0.8,
    )

    # a memory's source leads to the turn it came from
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memory/{ids['flaky']}")
    page.click("#show-transcript")
    page.wait_for_selector("#transcript pre")
    assert "fix the flaky login test in the signup flow" in page.inner_text("#transcript")
    # a link names the memory it points to by its text (its id is the link's target and title)
    link_row = page.inner_text("tr.link")
    assert "The CI runners have two cores" in link_row and ids["ci"] not in link_row
    assert page.get_attribute("tr.link a", "href") == f"#/memory/{ids['ci']}"
    shot("memory-transcript")

    # forget one: nothing happens before the confirmation
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memory/{ids['deploy']}")
    page.wait_for_selector("#forget")
    page.click("#forget")
    page.wait_for_selector("#forget-confirm")
    shot("forget-confirmation")
    assert exists(daemon, project, ids["deploy"])
    page.click("#forget-confirm")
    page.wait_for_selector("#forgotten")
    on("memories")
    assert not exists(daemon, project, ids["deploy"])

    # the hostile memory shows as text and runs nothing
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memory/{ids['hostile']}")
    page.wait_for_selector("#memory-text")
    on("memory")
    assert page.inner_text("#memory-text") == HOSTILE
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memories?q=evil")
    page.wait_for_selector(f'tr.hit[data-id="{ids["hostile"]}"]')
    assert "<script>" in page.inner_text(f'tr.hit[data-id="{ids["hostile"]}"]')
    assert page.evaluate("document.querySelectorAll('main img, main script').length") == 0
    assert page.evaluate("window.__pwned === undefined")
    shot("hostile")

    # a question nothing answers: nothing shown, what was held back counted, and one click lists it, marked
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memories?q=who+gets+alerted+when+the+login+site+goes+down")
    page.wait_for_selector("#nothing-found")
    assert page.inner_text("#nothing-found") == "Nothing relevant found."
    assert "held back as unlikely to be relevant" in page.inner_text("#held-back")
    page.click("#show-held-back")
    page.wait_for_selector(f'tr.hit.held-back[data-id="{ids["flaky"]}"]')
    assert "held back" in page.inner_text(f'tr.hit[data-id="{ids["flaky"]}"]')
    shot("held-back")

    # a session, its markdown rendered (its raw HTML escaped)
    page.goto(f"http://127.0.0.1:{daemon.port}/#/sessions")
    on("sessions")
    page.click(f'a[href="#/session/{world["session_id"]}"]')
    on("session")
    markdown = page.inner_text("#session-markdown")
    assert "Move the webhook worker to httpx" in markdown and "<img src=x onerror=alert(3)>" in markdown
    assert page.evaluate("document.querySelectorAll('#session-markdown strong').length") >= 1  # markdown, rendered
    shot("session")

    # the injections of the /retrieve call, why and their token cost
    page.goto(f"http://127.0.0.1:{daemon.port}/#/injections")
    on("injections")
    ledger = page.inner_text("main")
    assert "hud" in ledger and "Use httpx everywhere" in ledger and "tokens" in ledger
    assert "retriever entity · words http · entities httpx" in ledger  # why it was put there
    shot("injections")

    # consolidation and staleness runs, newest first
    page.goto(f"http://127.0.0.1:{daemon.port}/#/runs")
    on("runs")
    page.wait_for_selector("tr.run", timeout=TIMEOUT_MS)
    run = page.inner_text("tr.run")
    assert "consolidation" in run and "applied" in run and "command" in run
    shot("runs")

    # what the agents did with what they were shown: the cited memory is the most useful, the other never used
    page.goto(f"http://127.0.0.1:{daemon.port}/#/report")
    on("report")
    assert page.inner_text("#use-sessions").split() == ["1", "agent", "sessions"]
    assert page.inner_text("#use-days tbody tr:last-child").split()[1] == "1"  # the call without a session is none
    assert ids["ci"] in page.inner_text("#use-most") and "1 of 1 sessions" in page.inner_text("#use-most")
    never = page.inner_text("#use-never")
    assert ids["hostile"] in never and "<script>" in never and ids["ci"] not in never
    shot("report")
    page.click(f'#use-most a[href="#/memory/{ids["ci"]}"]')
    on("memory")
    assert "in 1 of the 1 agent sessions" in page.inner_text("#usefulness")

    # a request without the CSRF token is refused even from the page itself (the cookie alone is not enough), with
    # it accepted
    body = json.dumps({"project_root": project, "query": "httpx"})
    script = """async ([body, token]) => (await fetch('/viewer/search', {method: 'POST', body,
        headers: token ? {'Content-Type': 'application/json', 'X-CSRF-Token': token}
                       : {'Content-Type': 'application/json'}})).status"""
    assert page.evaluate(script, [body, None]) == 401
    assert page.evaluate(script, [body, "forged"]) == 401
    assert page.evaluate(script, [body, token]) == 200
    assert page.evaluate("async () => (await fetch('/viewer/session')).status") == 401
    assert not page.evaluate("document.cookie")  # HttpOnly: no script reads the session

    # a second tab of the same browser works: the token is in this origin's localStorage
    second = context.new_page()
    second.set_default_timeout(TIMEOUT_MS)
    second.on("pageerror", lambda e: errors.append(str(e)))
    second.goto(f"http://127.0.0.1:{daemon.port}/#/memories?q=httpx")
    second.wait_for_selector('main[data-page="memories"]')
    second.wait_for_selector(f'tr.hit[data-id="{ids["httpx"]}"]')
    second.screenshot(path=str(ARTIFACTS / "second-tab.png"), full_page=True)
    second.close()

    assert dialogs == [] and errors == []
    assert not any("pwned" in line for line in console)
    context.close()


def test_the_pages_fit_a_phone(world: dict[str, Any], browser: Any) -> None:
    """At 420 px the header wraps, nothing makes the page scroll sideways, and a memory's text keeps a readable
    width (tables scroll inside themselves instead of squeezing it to a word a line)."""
    daemon: Daemon = world["daemon"]
    context = browser.new_context(viewport={"width": 420, "height": 860}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(daemon.login_link(world["project"]))
    page.wait_for_selector('main[data-page="overview"]')
    widths = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    for name, route, ready in (
        ("overview", "#/overview", 'main[data-page="overview"]'),
        ("memories", "#/memories?q=httpx", "tr.hit"),
        ("memory", f"#/memory/{world['ids']['flaky']}", "tr.link"),
        ("sessions", "#/sessions", 'main[data-page="sessions"]'),
        ("injections", "#/injections", 'main[data-page="injections"]'),
        ("report", "#/report", "#use-most"),
    ):
        page.goto(f"http://127.0.0.1:{daemon.port}/{route}")
        page.wait_for_selector(ready)
        scroll, client = page.evaluate(widths)
        assert scroll <= client, (name, scroll, client)
        page.screenshot(path=str(ARTIFACTS / f"phone-{name}.png"), full_page=True)
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memories?q=httpx")
    cell = page.wait_for_selector("tr.hit td.text")
    assert cell is not None
    box = cell.bounding_box()
    assert box is not None and box["width"] >= 200, box
    context.close()


def test_without_the_cookie_nothing_is_shown_and_a_link_works_once(world: dict[str, Any], browser: Any) -> None:
    daemon: Daemon = world["daemon"]
    link = daemon.login_link(world["project"])
    first = browser.new_context()
    page = first.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(link)
    page.wait_for_selector('main[data-page="overview"]')
    first.close()

    stranger = browser.new_context()  # another browser profile: no cookie
    page = stranger.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    response = page.goto(link)  # the same link again
    assert response is not None and response.status == 403
    assert "works once" in page.inner_text("body")
    page.goto(f"http://127.0.0.1:{daemon.port}/#/memories")
    page.wait_for_selector('main[data-page="error"]')
    assert "Not logged in" in page.inner_text("main")
    status = page.evaluate("async () => (await fetch('/viewer/session')).status")
    assert status == 401
    page.screenshot(path=str(ARTIFACTS / "not-logged-in.png"))
    stranger.close()


class _CookieCatcher(BaseHTTPRequestHandler):
    """Another web server on 127.0.0.1 (a dev server, another user's): it writes down the cookies it is sent."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Cookie") or "")
        body = b"<!doctype html><title>another local server</title><p>hello</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        return None


def test_another_local_server_gets_the_cookie_but_not_the_token(world: dict[str, Any], browser: Any) -> None:
    """Browsers keep cookies per host, not per port: the viewer's cookie goes to any server on 127.0.0.1 the browser
    visits. Replayed from there (with the daemon's Host header), it reaches nothing, and that server's page cannot
    read the token, which lives in the daemon's origin's storage."""
    daemon: Daemon = world["daemon"]
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(daemon.login_link(world["project"]))
    page.wait_for_selector('main[data-page="overview"]')

    _CookieCatcher.seen = []
    other = ThreadingHTTPServer(("127.0.0.1", 0), _CookieCatcher)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        assert page.evaluate("localStorage.getItem('codememory.viewer.csrf')") is None
    finally:
        other.shutdown()
        other.server_close()
    stolen = [c.strip() for line in _CookieCatcher.seen for c in line.split(";") if "codememory_viewer=" in c]
    assert stolen, _CookieCatcher.seen  # the premise: the browser did hand the session cookie over
    replay = daemon.host_headers(Cookie=stolen[0])
    status, _, answer = daemon.raw("GET", "/viewer/session", headers=replay)
    assert status == 401, answer
    search = json.dumps({"project_root": world["project"], "query": "httpx"}).encode()
    status, _, answer = daemon.raw("POST", "/viewer/search", search, {**replay, "Content-Type": "application/json"})
    assert status == 401, answer
    # the daemon's own tab, same browser, still works
    page.goto(f"http://127.0.0.1:{daemon.port}/#/overview")
    page.wait_for_selector('main[data-page="overview"]')
    context.close()
