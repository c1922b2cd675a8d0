"""Shared fixtures: real project folders in tmp dirs, and the real CLI (in-process and installed)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from codememory.cli.main import cli
from support.cli import SORTABLE, ok, write_jsonl

Invoke = Callable[..., Result]


@pytest.fixture(autouse=True)
def _no_ambient_project(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CODEMEMORY_PROJECT in the developer's shell must never point a test at a real store."""
    monkeypatch.delenv("CODEMEMORY_PROJECT", raising=False)


@pytest.fixture(autouse=True)
def _no_user_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """`codememory init` writes the global registry and Codex's config.toml: never the developer's real ones;
    and a daemon the developer runs (its daemon.json and token in the state folder) is never found.

    The tests that pin down the keyword engine (syntax, fuzzy matching, ranking ties, exact JSON) run it alone:
    this user's config switches the default embedding model off for them, as a user may. Tests marked
    `default_model` (and every test that makes its own user folders, the end-to-end ones included) get the
    model a fresh install has."""
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex"))
    if request.node.get_closest_marker("default_model") is None:
        (home / "config" / "codememory").mkdir(parents=True)
        (home / "config" / "codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n')


def invoke_cli(*args: Any, input: str | bytes | None = None, env: dict[str, str | None] | None = None) -> Result:
    """Run `codememory ARGS` in-process through click's CliRunner (stdout and stderr kept apart)."""
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, env=env, catch_exceptions=True)


@pytest.fixture
def invoke() -> Invoke:
    """`invoke("--project", dir, "search", "x")`: the CLI with no project chosen for you."""
    return invoke_cli


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[[str], Path]:
    """Factory: a fresh folder under tmp_path with `codememory init` already run in it."""

    def make(name: str = "project") -> Path:
        root = tmp_path / name
        root.mkdir(parents=True)
        result = invoke_cli("--project", root, "init")
        assert result.exit_code == 0, result.output
        return root

    return make


@pytest.fixture
def project(make_project: Callable[[str], Path]) -> Path:
    """An initialised project folder."""
    return make_project("project")


@pytest.fixture
def cm(project: Path) -> Invoke:
    """`cm("store", "text", "--tags", "a")`: the CLI bound to the `project` fixture via --project."""

    def run(*args: Any, input: str | bytes | None = None, env: dict[str, str | None] | None = None) -> Result:
        return invoke_cli("--project", project, *args, input=input, env=env)

    return run


@pytest.fixture
def sortable(cm: Invoke, tmp_path: Path) -> Invoke:
    """The `project` store holding SORTABLE's three memories, whose six sort keys each order them differently."""
    ok(cm("import", "--own", write_jsonl(tmp_path / "sortable.jsonl", SORTABLE)))  # their importance and dates count
    return cm


@pytest.fixture(scope="session")
def console_script() -> Path:
    """The installed `codememory` entry point of the interpreter running the tests."""
    script = Path(sys.executable).parent / "codememory"
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    return script


# The stable JSON shape of a memory (README "JSON output"); several test files assert it.
MEMORY_KEYS = {
    "id",
    "text",
    "category",
    "importance",
    "tags",
    "entered_by",
    "source",
    "created_at",
    "updated_at",
    "expires_at",
    "access_count",
    "last_accessed_at",
    "provenance",
    "archived",
    "superseded_by",
}
