"""The viewer takes the CSRF token from `#login=` only when it starts from the login redirect, and keeps it only if
the daemon accepts it with the browser's session cookie: a committed session whose markdown links to `#login=<x>`
(in the page, or to the daemon's own page with a query) cannot replace the token, clicked, reloaded or opened.
Real Chromium (Playwright, the system's binary) against a real daemon."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.daemon import Daemon, isolated_env, make_project, spawn

pytestmark = pytest.mark.slow  # a daemon and a browser

CHROMIUM = Path(os.environ.get("CODEMEMORY_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EVIL = "attacker-chosen-token-0123456789abcdef0123456789"
TIMEOUT_MS = 15_000
TOKEN = "localStorage.getItem('codememory.viewer.csrf')"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str]]:
    assert CHROMIUM.is_file(), f"no Chromium at {CHROMIUM}: apt-get install -y chromium (see .ci/run)"
    base = tmp_path_factory.mktemp("viewer-login")
    env = isolated_env(base)
    project = base / "project"
    make_project(env, project, "Deploys go through the staging cluster first")
    daemon = spawn(env)
    try:
        goal = f"Read [the notes](#login={EVIL}) and [the other notes](http://127.0.0.1:{daemon.port}/?a#login={EVIL})"
        saved = daemon.client().request(
            "POST", "/sessions/checkpoint", {"project_root": str(project.resolve()), "slug": "notes", "goal": goal}
        )
        assert saved.status == 200, saved.data
        yield daemon, str(saved.data["session_id"])
    finally:
        daemon.terminate()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_a_login_fragment_in_a_session_never_replaces_the_token(world: tuple[Daemon, str], browser: Any) -> None:
    daemon, session_id = world
    page = browser.new_context().new_page()
    page.set_default_timeout(TIMEOUT_MS)
    home = f"http://127.0.0.1:{daemon.port}/"

    def on(name: str) -> None:
        page.wait_for_selector(f'main[data-page="{name}"]')

    page.goto(daemon.login_link())
    on("overview")
    token = page.evaluate(TOKEN)
    assert token and token != EVIL

    # the session page: the in-page #login= link is not a link at all; the one to the daemon's page with a query is
    page.goto(f"{home}#/session/{session_id}")
    on("session")
    hrefs = page.eval_on_selector_all("#session-markdown a", "links => links.map((a) => a.getAttribute('href'))")
    assert hrefs == [f"http://127.0.0.1:{daemon.port}/?a#login={EVIL}"], hrefs
    assert "the notes" in page.inner_text("#session-markdown")  # kept as text
    page.click("#session-markdown a")  # a new page load of the viewer, with #login= in its address
    on("overview")
    assert page.evaluate(TOKEN) == token and "login=" not in page.url

    # the fragment typed into the address bar, then the page reloaded
    page.evaluate(f"location.hash = '#login={EVIL}'")
    page.reload()
    on("overview")
    assert page.evaluate(TOKEN) == token

    # opened at exactly the redirect's address: a candidate, refused by the daemon, so the old token stays and works
    page.goto(f"{home}#login={EVIL}")
    on("overview")
    assert page.evaluate(TOKEN) == token
    page.goto(f"{home}#/memories")
    on("memories")

    # a real login still replaces it
    page.goto(daemon.login_link())
    on("overview")
    fresh = page.evaluate(TOKEN)
    assert fresh and fresh not in (token, EVIL)
