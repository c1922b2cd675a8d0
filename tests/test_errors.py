"""One error tree (codememory.errors): every exception a caller can see is defined there, the store turns
sqlite3 errors into it, and each entry point maps it the way the classes say: the CLI's exit code and one
line on stderr, the daemon's HTTP status with `{"error": ...}`, the MCP server's tool error."""

from __future__ import annotations

import ast
import builtins
import inspect
import sqlite3
import subprocess
import sys
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from codememory import errors
from codememory.core.dates import now_iso
from codememory.core.model import Memory
from codememory.errors import (
    AlreadyExists,
    CodememoryError,
    InvalidInput,
    NotFound,
    ProjectNotAllowed,
    StoreBusy,
    StoreFailed,
    StoreNotFound,
    StoreUnusable,
)
from codememory.store.database import Database
from support.daemon import Daemon, isolated_env, make_project, register, spawn
from support.mcp import call, call_error, session_with

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "codememory"
CODEMEMORY = Path(sys.executable).with_name("codememory")
BUILTIN_EXCEPTIONS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
}


# ------------------------------------------------------------------------- where exceptions are defined
def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # errors.CodememoryError, sqlite3.Error, ...
        return node.attr
    return None


def exception_classes(modules: Iterable[tuple[str, ast.Module]]) -> list[tuple[str, str]]:
    """(module, class) for every class that derives, directly or through other classes of these modules,
    from a builtin exception or from a class of another library whose name says it is one."""
    classes = [(name, node) for name, tree in modules for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    known = set(BUILTIN_EXCEPTIONS)
    found: dict[tuple[str, str], None] = {}
    changed = True
    while changed:  # a class is an exception once one of its bases is: repeat until nothing new turns up
        changed = False
        for module, node in classes:
            bases = {_base_name(b) for b in node.bases}
            if (module, node.name) not in found and any(
                b is not None and (b in known or b.endswith(("Error", "Exception"))) for b in bases
            ):
                found[module, node.name] = None
                known.add(node.name)
                changed = True
    return list(found)


def _public_outside_errors(modules: Iterable[tuple[str, ast.Module]]) -> list[str]:
    return sorted(
        f"{module}.{name}"
        for module, name in exception_classes(modules)
        if module != "codememory.errors" and not name.startswith("_")
    )


def _package_modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["codememory", *path.relative_to(PACKAGE).with_suffix("").parts]
        out.append((".".join(p for p in parts if p != "__init__"), ast.parse(path.read_text(encoding="utf-8"))))
    return out


@pytest.mark.slow
def test_every_public_exception_is_defined_in_errors_py() -> None:
    """Control-flow exceptions that never leave their module stay there, private (a leading underscore)."""
    wrong = _public_outside_errors(_package_modules())
    assert not wrong, "public exceptions outside codememory/errors.py (move them there):\n" + "\n".join(wrong)


def test_the_check_finds_exceptions_however_they_are_derived() -> None:
    """The check on code with one fault of each kind: a builtin base, a base from errors.py through a module
    attribute, a library's error, and a chain of local classes."""
    source = {
        "codememory.errors": "class CodememoryError(Exception): pass\nclass StoreUnusable(CodememoryError): pass\n",
        "codememory.store.x": "class Broken(ValueError): pass\nclass _Private(Exception): pass\nclass Row: pass\n",
        "codememory.daemon.y": "from codememory import errors\nclass Refused(errors.StoreUnusable): pass\n",
        "codememory.mcp.z": "import sqlite3\nclass Wrapped(sqlite3.Error): pass\nclass Base(Wrapped): pass\n"
        "class Leaf(Base): pass\n",
    }
    modules = [(name, ast.parse(text)) for name, text in source.items()]
    assert _public_outside_errors(modules) == [
        "codememory.daemon.y.Refused",
        "codememory.mcp.z.Base",
        "codememory.mcp.z.Leaf",
        "codememory.mcp.z.Wrapped",
        "codememory.store.x.Broken",
    ]


def test_every_error_of_the_tree_is_a_codememory_error() -> None:
    tree = [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, BaseException)]
    assert len(tree) > 20
    assert [c.__name__ for c in tree if not issubclass(c, CodememoryError)] == []


# ------------------------------------------------------------------------------ the documented mapping
# (exit code, HTTP status) of every error that sets one; every other error inherits its parent's.
DOCUMENTED = {
    CodememoryError: (1, 400),
    InvalidInput: (2, 400),
    NotFound: (1, 404),
    StoreNotFound: (1, 404),
    StoreUnusable: (1, 503),
    StoreFailed: (1, 503),
    errors.RegistryError: (1, 503),
    ProjectNotAllowed: (1, 403),
    errors.RemoteUnavailable: (1, 502),  # the organisation's Milvus failed: an upstream's error, not the caller's
}


def test_each_error_class_says_its_exit_code_and_http_status() -> None:
    for cls in [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, CodememoryError)]:
        nearest = next(base for base in cls.__mro__ if base in DOCUMENTED)
        assert (cls.exit_code, cls.http_status) == DOCUMENTED[nearest], cls.__name__
    assert (StoreBusy.exit_code, StoreBusy.http_status) == (1, 503)
    assert (errors.UnsafePath.exit_code, errors.UnsafePath.http_status) == (1, 503)
    assert errors.exit_code(InvalidInput("x")) == 2 and errors.http_status(NotFound("x")) == 404


# ------------------------------------------------------------------------ sqlite3 errors, translated
@pytest.fixture
def db(tmp_path: Path) -> Any:
    database = Database.open(tmp_path / "memory.db", create=True)
    yield database
    database.close()


def _memory(memory_id: str, text: str) -> Memory:
    now = now_iso()
    return Memory(id=memory_id, text=text, category="fact", created_at=now, updated_at=now)


def test_a_unique_key_already_stored_is_already_exists(db: Database) -> None:
    memory = _memory("mem_0000abcd", "We deploy on Fridays.")
    db.insert(memory)
    with pytest.raises(AlreadyExists) as caught:
        db.insert(memory)
    assert caught.value.constraint == "memories.id"
    assert str(caught.value) == "the store could not be used: UNIQUE constraint failed: memories.id"
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
    assert db.count_all() == 1  # the failed transaction was rolled back


def test_a_lock_held_by_another_connection_is_store_busy(db: Database) -> None:
    db.conn.execute("PRAGMA busy_timeout = 0")  # the real timeout is 30 s; the translation is what matters
    with closing(sqlite3.connect(db.path, isolation_level=None)) as holder:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreBusy) as caught:
            db.insert(_memory("mem_0000abce", "Locked out."))
        holder.execute("ROLLBACK")
    assert "stayed locked by another process" in str(caught.value)


def test_a_statement_sqlite_refuses_is_store_failed_with_sqlites_words(db: Database) -> None:
    db.conn.close()
    with pytest.raises(StoreFailed) as caught:
        db.count_all()
    assert str(caught.value) == "the store could not be used: Cannot operate on a closed database."
    with pytest.raises(StoreFailed):
        list(db.iter_all())  # generators translate too
    # every table group Database is made of translates, not only the methods it defines itself
    for method in (
        db.vocabulary,
        lambda: db.vectors("m"),
        lambda: db.links_of(1),
        db.entity_counts,
        db.tag_frequencies,
    ):
        with pytest.raises(StoreFailed):
            method()


# ------------------------------------------------------------------------------ through the entry points
def _corrupt(folder: Path) -> Path:
    (folder / ".codememory").mkdir(parents=True)
    (folder / ".codememory" / "memory.db").write_bytes(b"this is not SQLite" * 300)
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A machine (own HOME and XDG folders) with a project, a corrupt store, a registered folder without a
    store, and a folder nobody registered; the daemon runs for the module's daemon test."""
    base = tmp_path_factory.mktemp("errors")
    env = isolated_env(base)
    project = base / "project"
    make_project(env, project, "We deploy on Fridays.")
    corrupt = _corrupt(base / "corrupt")
    register(env, corrupt)
    storeless = base / "storeless"
    storeless.mkdir()
    register(env, storeless)
    stranger = base / "stranger"
    stranger.mkdir()
    return env, project, corrupt, storeless, stranger


def _cli(env: dict[str, str], *args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CODEMEMORY), *map(str, args)], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_cli_exits_with_the_errors_code_and_one_line(world: Any) -> None:
    env, project, corrupt, _storeless, stranger = world
    (stranger / "note.txt").write_text("from a file")
    cases = [
        (InvalidInput, ("--project", project, "store", "as an argument", "--file", stranger / "note.txt"), "not both"),
        (StoreNotFound, ("--project", stranger, "list"), "no codememory store at"),
        (StoreUnusable, ("--project", corrupt, "list"), "unreadable or corrupt"),
        (NotFound, ("--project", project, "transcript", "ses_nothing"), "no captured turn"),
    ]
    for cls, args, words in cases:
        done = _cli(env, *args)
        assert done.returncode == cls.exit_code, (cls.__name__, done.stderr)
        assert done.stderr.startswith("codememory: error: ") and words in done.stderr, (cls.__name__, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, (cls.__name__, done.stderr)
        assert done.stdout == "", cls.__name__


@pytest.mark.slow
def test_capture_and_the_daemon_commands_map_errors_the_same_way(tmp_path: Path) -> None:
    """`capture` and the `daemon` group (also run as `python -m codememory.daemon`) end an error like every other
    command: its exit code, one `codememory: error:` line."""
    env = isolated_env(tmp_path)
    settings = Path(env["XDG_CONFIG_HOME"]) / "codememory" / "config.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text("[capture]\nidle_after = 'soon'\n")
    daemon_module = [sys.executable, "-m", "codememory.daemon", "run", "--port", "0"]
    runs = [_cli(env, "capture"), _cli(env, "daemon", "run", "--port", "0")]
    runs.append(subprocess.run(daemon_module, env=env, capture_output=True, text=True, timeout=120, check=False))
    for done in runs:
        assert done.returncode == InvalidInput.exit_code, (done.args, done.stderr)
        assert done.stderr == "codememory: error: config capture.idle_after: expected float, got 'soon'\n", done.args
    settings.unlink()
    (tmp_path / "state-file").write_text("")  # the state folder cannot be made: the daemon's error
    done = _cli({**env, "XDG_STATE_HOME": str(tmp_path / "state-file")}, "daemon", "status")  # an OSError
    assert done.returncode == errors.DaemonError.exit_code, done.stderr
    assert done.stderr.startswith("codememory: error: Not a directory: ") and done.stderr.count("\n") == 1


@pytest.fixture(scope="module")
def daemon(world: Any) -> Any:
    d = spawn(world[0])
    yield d
    d.terminate()


def test_the_daemon_answers_the_errors_status_with_one_json_message(world: Any, daemon: Daemon) -> None:
    _env, project, corrupt, storeless, stranger = world
    retrieve = "/retrieve"
    cases = [
        (InvalidInput, retrieve, {"query_expansion": "x", "project_root": "relative/path"}, "absolute"),
        (ProjectNotAllowed, retrieve, {"query_expansion": "x", "project_root": str(stranger)}, "not in a project"),
        (StoreNotFound, retrieve, {"query_expansion": "x", "project_root": str(storeless)}, "no codememory store"),
        (StoreUnusable, retrieve, {"query_expansion": "x", "project_root": str(corrupt)}, "unreadable or corrupt"),
        (NotFound, "/memory/transcript", {"project_root": str(project), "reference": "ses_1"}, "no captured turn"),
    ]
    client = daemon.client()
    for cls, path, body, words in cases:
        resp = client.request("POST", path, body)
        assert resp.status == cls.http_status, (cls.__name__, resp)
        assert list(resp.data) == ["error"] and words in resp.data["error"], (cls.__name__, resp.data)
        assert "\n" not in resp.data["error"] and "Traceback" not in resp.data["error"]
    assert client.health()["status"] == "ok"


@pytest.mark.slow
def test_the_mcp_server_returns_errors_as_tool_errors_and_goes_on(world: Any) -> None:
    env, project, corrupt, _storeless, stranger = world

    async def on_project(session: ClientSession) -> tuple[str, str, Any]:
        invalid = await call_error(session, "memory_search", {"query": "x", "after": "not a date"})
        not_found = await call_error(session, "memory_transcript", {"reference": "ses_nothing"})
        return invalid, not_found, await call(session, "memory_search", {"query": "Fridays"})

    invalid, not_found, found = session_with(CODEMEMORY, ["--project", project, "mcp"], on_project, env=env)
    assert "cannot understand date 'not a date'" in invalid  # InvalidInput
    assert "no captured turn" in not_found  # NotFound
    assert [r["text"] for r in found["results"]] == ["We deploy on Fridays."]  # the session went on

    async def on(session: ClientSession) -> str:
        return await call_error(session, "memory_search", {"query": "anything"})

    assert "no codememory store at" in session_with(CODEMEMORY, ["--project", stranger, "mcp"], on, env=env)
    assert "unreadable or corrupt" in session_with(CODEMEMORY, ["--project", corrupt, "mcp"], on, env=env)
