"""The `codememory` command line, end to end: real stores in tmp dirs, the real click app, and a few
runs of the installed console script for stdin, pipes and exit codes."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

import codememory
from codememory import Store
from codememory.cli.main import cli
from conftest import MEMORY_KEYS

Invoke = Callable[..., Result]

ID = re.compile(r"mem_[0-9a-f]{8}")


# ----------------------------------------------------------------------------------- helpers
def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.exception is None, result.exception
    assert "Traceback" not in result.output
    return result


def ok_json(result: Result) -> Any:
    return json.loads(ok(result).stdout)


def assert_error(result: Result, *fragments: str, code: int | None = None) -> str:
    """A user error: non-zero exit, one clear line on stderr, nothing on stdout, never a traceback."""
    assert result.exit_code != 0, f"expected failure, got exit 0\nstdout: {result.stdout}"
    if code is not None:
        assert result.exit_code == code, f"exit {result.exit_code}, stderr: {result.stderr}"
    # Anything other than SystemExit means an exception escaped the CLI (a traceback for a real user).
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    err = result.stderr.strip()
    assert err.startswith("codememory: error: "), err
    assert len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert result.stdout == ""
    return err


def store(cm: Invoke, text: str, *opts: Any) -> str:
    """Store through the CLI and return the new memory's id (via --quiet)."""
    out = ok(cm("store", text, "--quiet", *opts)).stdout.strip()
    assert ID.fullmatch(out), out
    return out


def search_ids(cm: Invoke, *args: Any) -> list[str]:
    return [r["id"] for r in ok_json(cm("search", *args, "--json"))["results"]]


def list_ids(cm: Invoke, *args: Any) -> list[str]:
    return [m["id"] for m in ok_json(cm("list", *args, "--json"))["memories"]]


def show(cm: Invoke, memory_id: str) -> dict[str, Any]:
    data = ok_json(cm("show", memory_id, "--json"))
    assert isinstance(data, dict)
    return data


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def db_file(root: Path) -> Path:
    return root / ".codememory" / "memory.db"


def parse_ts(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def run_script(script: Path, *args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    env.update(kwargs.pop("env", {}))
    return subprocess.run([str(script), *map(str, args)], capture_output=True, text=True, timeout=60, env=env, **kwargs)


# Three memories whose six sort keys each put them in a different order (see test_list_sort_keys).
SORTABLE = [
    {
        "id": "mem_0000000a",
        "text": "charlie fruit cherry",
        "category": "fact",
        "importance": 0.1,
        "tags": ["red"],
        "entered_by": "alice",
        "created_at": "2025-01-01T00:00:00.000Z",
        "updated_at": "2025-06-01T00:00:00.000Z",
        "expires_at": "2099-02-01T00:00:00.000Z",
        "last_accessed_at": "2025-02-10T00:00:00.000Z",
        "access_count": 3,
    },
    {
        "id": "mem_0000000b",
        "text": "bravo fruit banana",
        "category": "decision",
        "importance": 0.9,
        "tags": ["yellow"],
        "entered_by": "bob",
        "created_at": "2025-02-01T00:00:00.000Z",
        "updated_at": "2025-04-01T00:00:00.000Z",
        "expires_at": "2099-03-01T00:00:00.000Z",
        "last_accessed_at": "2025-01-10T00:00:00.000Z",
        "access_count": 1,
    },
    {
        "id": "mem_0000000c",
        "text": "alpha fruit apple",
        "category": "gotcha",
        "importance": 0.5,
        "tags": ["red", "green"],
        "entered_by": "alice",
        "created_at": "2025-03-01T00:00:00.000Z",
        "updated_at": "2025-05-01T00:00:00.000Z",
        "expires_at": "2099-01-01T00:00:00.000Z",
        "last_accessed_at": "2025-03-10T00:00:00.000Z",
        "access_count": 2,
    },
]
A, B, C = (m["id"] for m in SORTABLE)


@pytest.fixture
def sortable(cm: Invoke, tmp_path: Path) -> Invoke:
    ok(cm("import", write_jsonl(tmp_path / "sortable.jsonl", SORTABLE)))
    return cm


def import_expired(cm: Invoke, tmp_path: Path, text: str = "stale expired staging token note") -> str:
    """An already-expired memory can only come from an import (store refuses a past expiry)."""
    record = {
        "id": "mem_dead0001",
        "text": text,
        "created_at": "2024-01-01T00:00:00.000Z",
        "expires_at": "2024-02-01T00:00:00.000Z",
    }
    ok(cm("import", write_jsonl(tmp_path / "expired.jsonl", [record])))
    return "mem_dead0001"


# ------------------------------------------------------------------------------------- init
def test_init_creates_store_and_gitignore(invoke: Invoke, tmp_path: Path) -> None:
    result = ok(invoke("--project", tmp_path, "init"))
    assert "Initialized" in result.stdout
    assert db_file(tmp_path).is_file()
    gitignore = (tmp_path / ".codememory" / ".gitignore").read_text()
    assert "*.db-wal" in gitignore and "*.db-shm" in gitignore
    conn = sqlite3.connect(db_file(tmp_path))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert {"memories", "tags", "memory_tags", "memories_fts"} <= tables


def test_init_is_idempotent_and_keeps_memories_and_gitignore(invoke: Invoke, tmp_path: Path) -> None:
    ok(invoke("--project", tmp_path, "init"))
    ok(invoke("--project", tmp_path, "store", "kept across re-init"))
    gitignore = tmp_path / ".codememory" / ".gitignore"
    gitignore.write_text("# my own rules\n")
    again = ok(invoke("--project", tmp_path, "init"))
    assert "already exists" in again.stdout
    assert gitignore.read_text() == "# my own rules\n"
    assert ok_json(invoke("--project", tmp_path, "list", "--json"))["total"] == 1


def test_init_json(invoke: Invoke, tmp_path: Path) -> None:
    first = ok_json(invoke("--project", tmp_path, "init", "--json", "--assistants", "none"))
    assert first | {"steps": None} == {
        "created": True,
        "project": str(tmp_path.resolve()),
        "store": str(db_file(tmp_path.resolve())),
        "assistants": [],
        "steps": None,
    }
    second = ok_json(invoke("--project", tmp_path, "init", "--json"))
    assert second["created"] is False
    assert second["store"] == first["store"]


def test_project_option_must_exist(invoke: Invoke, tmp_path: Path) -> None:
    assert_error(invoke("--project", tmp_path / "nope", "init"), "does not exist", code=1)


# ------------------------------------------------------------------------- project selection
def test_project_from_environment_variable(invoke: Invoke, make_project: Callable[[str], Path]) -> None:
    root = make_project("envproj")
    mem = ok_json(invoke("store", "chosen by env var", "--json", env={"CODEMEMORY_PROJECT": str(root)}))
    assert ok_json(invoke("--project", root, "list", "--json"))["memories"][0]["id"] == mem["memory"]["id"]


def test_project_option_beats_environment_variable(invoke: Invoke, make_project: Callable[[str], Path]) -> None:
    explicit, from_env = make_project("explicit"), make_project("fromenv")
    ok(invoke("--project", explicit, "store", "goes to explicit", env={"CODEMEMORY_PROJECT": str(from_env)}))
    assert ok_json(invoke("--project", explicit, "list", "--json"))["total"] == 1
    assert ok_json(invoke("--project", from_env, "list", "--json"))["total"] == 0


def test_walks_up_from_subdirectory_to_nearest_store(
    invoke: Invoke, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = project / "src" / "pkg" / "module"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    ok(invoke("store", "found by walking up"))
    assert not (deep / ".codememory").exists()
    assert [m["text"] for m in ok_json(invoke("--project", project, "list", "--json"))["memories"]] == [
        "found by walking up"
    ]


def test_nearest_store_wins_over_git_root(invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    ok(invoke("--project", repo, "init"))
    nested = repo / "services" / "api"
    nested.mkdir(parents=True)
    ok(invoke("--project", nested, "init"))
    (nested / "handlers").mkdir()
    monkeypatch.chdir(nested / "handlers")
    ok(invoke("store", "belongs to the nested project"))
    assert ok_json(invoke("--project", nested, "list", "--json"))["total"] == 1
    assert ok_json(invoke("--project", repo, "list", "--json"))["total"] == 0


@pytest.mark.parametrize("git_is_file", [False, True], ids=["git-dir", "git-file-worktree"])
def test_init_without_store_uses_git_root(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git_is_file: bool
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    if git_is_file:
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    else:
        (repo / ".git").mkdir()
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    data = ok_json(invoke("init", "--json"))
    assert data["project"] == str(repo.resolve())
    assert db_file(repo).is_file()
    assert not (sub / ".codememory").exists()


# -------------------------------------------------------------------------------------- store
def test_store_text_argument_and_json_shape(cm: Invoke) -> None:
    data = ok_json(cm("store", "Use httpx, not requests", "--json"))
    assert set(data) == {"created", "duplicate_of", "duplicate_reason", "embedded", "links", "memory"}
    assert data["created"] is True and data["duplicate_of"] is None
    mem = data["memory"]
    assert set(mem) == MEMORY_KEYS
    assert ID.fullmatch(mem["id"])
    assert mem["text"] == "Use httpx, not requests"
    assert mem["category"] == "note" and mem["importance"] == 0.5
    assert mem["tags"] == [] and mem["entered_by"] is None and mem["source"] is None
    assert mem["expires_at"] is None and mem["archived"] is False and mem["access_count"] == 0
    assert mem["created_at"] == mem["updated_at"]
    assert abs(parse_ts(mem["created_at"]) - datetime.now(UTC)) < timedelta(minutes=5)


def test_store_plain_output_names_the_id(cm: Invoke) -> None:
    out = ok(cm("store", "plain output")).stdout
    assert re.fullmatch(r"Stored mem_[0-9a-f]{8}\n", out)


def test_store_quiet_prints_only_the_id(cm: Invoke) -> None:
    out = ok(cm("store", "quiet please", "-q")).stdout
    assert ID.fullmatch(out.strip()) and out.count("\n") == 1
    assert show(cm, out.strip())["text"] == "quiet please"


def test_store_from_file(cm: Invoke, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("Line one about ünïcode\nLine two\n", encoding="utf-8")
    out = ok(cm("store", "--file", note, "--quiet")).stdout.strip()
    assert show(cm, out)["text"] == "Line one about ünïcode\nLine two\n"


def test_store_from_stdin(cm: Invoke) -> None:
    mid = ok(cm("store", "-q", input="piped from stdin about rabbitmq\n")).stdout.strip()
    assert show(cm, mid)["text"].strip() == "piped from stdin about rabbitmq"
    assert search_ids(cm, "rabbitmq") == [mid]


def test_store_text_and_file_together_is_an_error(cm: Invoke, tmp_path: Path) -> None:
    note = tmp_path / "n.txt"
    note.write_text("x")
    assert_error(cm("store", "text", "--file", note), "not both", code=2)


def test_store_missing_file(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("store", "--file", tmp_path / "missing.txt"), "no such file", code=2)


def test_store_tags_are_normalised(cm: Invoke) -> None:
    mem = ok_json(cm("store", "tagged", "--tags", "Docker, CI,docker,, #Build Tools ", "--json"))["memory"]
    assert mem["tags"] == ["docker", "ci", "build-tools"]
    assert sorted(show(cm, mem["id"])["tags"]) == ["build-tools", "ci", "docker"]
    assert search_ids(cm, "tagged", "--tags", "DOCKER,Ci") == [mem["id"]]


def test_store_category_importance_entered_by_source(cm: Invoke) -> None:
    source = "https://example.com/pr/42?x=1#frag  (session: abc/def) "
    mem = ok_json(
        cm(
            "store",
            "Rejected Celery: too heavy",
            "--category",
            "Rejected-Alternative",
            "--importance",
            "0.8",
            "--entered-by",
            "claude-code",
            "--source",
            source,
            "--json",
        )
    )["memory"]
    assert mem["category"] == "rejected_alternative"
    assert mem["importance"] == 0.8
    assert mem["entered_by"] == "claude-code"
    assert mem["source"] == source
    stored = show(cm, mem["id"])
    assert (stored["category"], stored["importance"], stored["entered_by"], stored["source"]) == (
        "rejected_alternative",
        0.8,
        "claude-code",
        source,
    )


def test_store_expires_iso_date(cm: Invoke) -> None:
    mem = ok_json(cm("store", "staging until april", "--expires", "2030-04-01", "--json"))["memory"]
    assert mem["expires_at"] == "2030-04-01T00:00:00.000Z"
    assert show(cm, mem["id"])["expires_at"] == "2030-04-01T00:00:00.000Z"


def test_store_expires_natural_language(cm: Invoke) -> None:
    mem = ok_json(cm("store", "temporary workaround", "--expires", "in 2 weeks", "--json"))["memory"]
    expected = datetime.now(UTC) + timedelta(weeks=2)
    assert abs(parse_ts(mem["expires_at"]) - expected) < timedelta(minutes=5)


def test_store_identical_text_returns_existing_id(cm: Invoke) -> None:
    first = ok_json(cm("store", "Pin numpy below 2", "--json"))
    again = cm("store", "Pin numpy below 2")
    ok(again)
    assert first["memory"]["id"] in again.stdout and "Already stored" in again.stdout
    dup = ok_json(cm("store", "Pin numpy below 2", "--json"))
    assert dup["created"] is False
    assert dup["duplicate_of"] == first["memory"]["id"] == dup["memory"]["id"]
    assert ok(cm("store", "Pin numpy below 2", "-q")).stdout.strip() == first["memory"]["id"]
    assert ok_json(cm("list", "--json"))["total"] == 1


# ---------------------------------------------------------------------------- store: bad input
def test_store_text_over_limit(cm: Invoke) -> None:
    err = assert_error(cm("store", "x" * 10_001), code=2)
    assert "10,000" in err and "10,001" in err
    assert ok_json(cm("list", "--json"))["total"] == 0


def test_store_text_at_limit_is_accepted(cm: Invoke) -> None:
    mid = store(cm, "y" * 10_000)
    assert len(show(cm, mid)["text"]) == 10_000


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_store_empty_text(cm: Invoke, text: str) -> None:
    assert_error(cm("store", text), "empty", code=2)


def test_store_nothing_on_stdin(cm: Invoke) -> None:
    assert_error(cm("store", input=""), "empty", code=2)


def test_store_unparseable_expiry(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--expires", "blorp"), "blorp", "cannot understand date", code=2)


def test_store_expiry_in_the_past(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--expires", "2020-01-01"), "in the past", code=2)
    assert_error(cm("store", "x", "--expires", "3 days ago"), "in the past", code=2)


def test_store_unknown_category(cm: Invoke) -> None:
    assert_error(cm("store", "x", "--category", "bogus"), "bogus", "decision", code=2)


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_store_importance_out_of_range(cm: Invoke, value: str) -> None:
    assert_error(cm("store", "x", "--importance", value), "importance", code=2)


def test_store_importance_not_a_number(cm: Invoke) -> None:
    result = cm("store", "x", "--importance", "high")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "importance" in result.stderr


# ------------------------------------------------------------------------------------- search
@pytest.fixture
def corpus(cm: Invoke) -> dict[str, str]:
    ids = {
        "compose": store(cm, "Docker compose needs depends_on with service_healthy", "--tags", "docker,ci"),
        "swarm": store(cm, "Docker swarm is deprecated here", "--tags", "docker"),
        "network": store(cm, "Docker networking uses a bridge by default", "--tags", "docker,network"),
        "postgres": store(cm, "Postgres connection pool size is 20; nightly backup at 2am", "--tags", "db"),
        "sqlite": store(cm, "SQLite for tests; backup not needed", "--tags", "db,testing"),
        "pool": store(cm, "The pool connection to the lake is closed", "--tags", "k8s"),
        "migrate": store(cm, "Alembic migrations live in db/migrations", "--category", "convention"),
        "k8s": store(cm, "kubernetes pods restart on OOM", "--tags", "k8s", "--entered-by", "ops-agent"),
    }
    return ids


def test_search_implicit_and(cm: Invoke, corpus: dict[str, str]) -> None:
    # Memories with all the words come first; with no model, those with some of them follow.
    assert search_ids(cm, "docker", "compose", "--no-fuzzy")[0] == corpus["compose"]
    assert search_ids(cm, "docker compose", "--no-fuzzy", "--limit", "1") == [corpus["compose"]]
    assert set(search_ids(cm, "docker AND compose", "--no-fuzzy")) == {corpus["compose"]}
    assert set(search_ids(cm, "docker AND bridge", "--no-fuzzy")) == {corpus["network"]}


def test_search_or(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "postgres OR sqlite", "--no-fuzzy")) == {corpus["postgres"], corpus["sqlite"]}


def test_search_not(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "docker NOT swarm", "--no-fuzzy")) == {corpus["compose"], corpus["network"]}


def test_search_not_excludes_in_default_mode_too(cm: Invoke, corpus: dict[str, str]) -> None:
    """The typo-tolerant fallback must not bring back what the query explicitly excluded."""
    assert corpus["swarm"] not in search_ids(cm, "docker NOT swarm")
    assert corpus["swarm"] not in search_ids(cm, "docker NOT swarm", "--fuzzy")


def test_search_phrase(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, '"connection pool"', "--no-fuzzy") == [corpus["postgres"]]
    assert set(search_ids(cm, "connection pool", "--no-fuzzy")) == {corpus["postgres"], corpus["pool"]}


def test_search_prefix(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "migrat*", "--no-fuzzy") == [corpus["migrate"]]
    assert search_ids(cm, "kube*", "--no-fuzzy") == [corpus["k8s"]]
    assert search_ids(cm, "kube", "--no-fuzzy") == []  # without the star, a word must match whole
    assert set(search_ids(cm, "dock* NOT swarm", "--no-fuzzy")) == {corpus["compose"], corpus["network"]}


def test_search_parentheses(cm: Invoke, corpus: dict[str, str]) -> None:
    both = {corpus["postgres"], corpus["sqlite"]}
    assert set(search_ids(cm, "(postgres OR sqlite) backup", "--no-fuzzy")) == both
    assert set(search_ids(cm, "(postgres OR sqlite) AND nightly", "--no-fuzzy")) == {corpus["postgres"]}
    assert set(search_ids(cm, "docker NOT (swarm OR bridge)", "--no-fuzzy")) == {corpus["compose"]}


def test_search_tags_all_and_any(cm: Invoke, corpus: dict[str, str]) -> None:
    assert set(search_ids(cm, "docker", "--tags", "docker,ci")) == {corpus["compose"]}
    assert set(search_ids(cm, "docker", "--tags", "Docker")) == {corpus["compose"], corpus["swarm"], corpus["network"]}
    any_ids = set(search_ids(cm, "docker OR kubernetes OR pool", "--any-tag", "ci,K8S", "--no-fuzzy"))
    assert any_ids == {corpus["compose"], corpus["k8s"], corpus["pool"]}


def test_search_entered_by_and_category(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "kubernetes OR docker", "--entered-by", "ops-agent") == [corpus["k8s"]]
    assert search_ids(cm, "migrations OR docker", "--category", "convention") == [corpus["migrate"]]
    both = set(search_ids(cm, "migrations OR docker", "--category", "convention,note"))
    assert both == {corpus["migrate"], corpus["compose"], corpus["swarm"], corpus["network"]}
    assert_error(cm("search", "docker", "--category", "bogus"), "bogus", code=2)


def test_search_json_shape(cm: Invoke, corpus: dict[str, str]) -> None:
    data = ok_json(cm("search", "compose", "--json"))
    assert set(data) == {
        "query",
        "count",
        "has_more",
        "fuzzy_used",
        "literal",
        "mode",
        "degraded",
        "degraded_reason",
        "below_floor",
        "results",
    }
    assert data["query"] == "compose"
    assert data["count"] == len(data["results"]) == 1
    assert data["has_more"] is False and data["literal"] is False
    hit = data["results"][0]
    assert set(hit) == MEMORY_KEYS | {"score", "match", "fuzzy", "explain"}
    assert hit["id"] == corpus["compose"]
    assert hit["match"] == "exact" and hit["fuzzy"] is False
    assert isinstance(hit["score"], float) and isinstance(hit["explain"], dict)


def test_search_joins_several_arguments_into_one_query(cm: Invoke, corpus: dict[str, str]) -> None:
    data = ok_json(cm("search", "docker", "compose", "--json", "--no-fuzzy"))
    assert data["query"] == "docker compose"
    assert [r["id"] for r in data["results"] if r["match"] == "exact"] == [corpus["compose"]]


def test_search_plain_text_and_no_matches(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge")).stdout
    assert corpus["network"] in out and "Docker networking uses a bridge by default" in out
    none = ok(cm("search", "zzzqqqxxx", "--no-fuzzy"))
    assert none.stdout == "" and "No memories match" in none.stderr


def test_search_markdown(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge", "--markdown")).stdout
    assert out.startswith("## Memories matching `bridge`")
    assert f"`{corpus['network']}`" in out
    assert "> Docker networking uses a bridge by default" in out
    assert "_No matches._" in ok(cm("search", "zzzqqqxxx", "--no-fuzzy", "--markdown")).stdout


def test_search_explain(cm: Invoke, corpus: dict[str, str]) -> None:
    out = ok(cm("search", "bridge", "--explain")).stdout
    assert "why: score" in out and "bm25" in out


def test_search_limit_offset_and_has_more(sortable: Invoke) -> None:
    cm = sortable
    page1 = ok_json(cm("search", "fruit", "--limit", "2", "--no-fuzzy", "--json"))
    page2 = ok_json(cm("search", "fruit", "--limit", "2", "--offset", "2", "--no-fuzzy", "--json"))
    assert (page1["count"], page1["has_more"]) == (2, True)
    assert (page2["count"], page2["has_more"]) == (1, False)
    ids = [r["id"] for r in page1["results"] + page2["results"]]
    assert sorted(ids) == sorted([A, B, C])
    more = cm("search", "fruit", "--limit", "2", "--no-fuzzy")
    assert "--offset 2" in ok(more).stderr


def test_search_limit_must_be_positive(cm: Invoke) -> None:
    for args in (["--limit", "0"], ["--offset", "-1"], ["--threshold", "1.5"]):
        result = cm("search", "x", *args)
        assert result.exit_code == 2 and "Traceback" not in result.output, args


def test_search_after_before(sortable: Invoke) -> None:
    cm = sortable
    assert set(search_ids(cm, "fruit", "--after", "2025-02-01")) == {B, C}
    assert set(search_ids(cm, "fruit", "--before", "2025-02-01")) == {A}
    assert set(search_ids(cm, "fruit", "--after", "2025-01-15", "--before", "2025-02-15")) == {B}
    fresh = store(cm, "fresh fruit salad")
    assert search_ids(cm, "fruit", "--after", "2 weeks ago") == [fresh]
    assert set(search_ids(cm, "fruit", "--before", "yesterday")) == {A, B, C}


def test_search_unparseable_after(cm: Invoke) -> None:
    assert_error(cm("search", "x", "--after", "notadate"), "notadate", code=2)
    assert_error(cm("list", "--before", "notadate"), "notadate", code=2)


def test_search_fuzzy_is_needed_for_typos(cm: Invoke, corpus: dict[str, str]) -> None:
    assert search_ids(cm, "dokcer", "--no-fuzzy") == []
    data = ok_json(cm("search", "dokcer", "--json"))
    assert data["fuzzy_used"] is True
    docker = {corpus["compose"], corpus["swarm"], corpus["network"]}
    assert docker <= {r["id"] for r in data["results"]}
    assert all(r["match"] == "fuzzy" and r["fuzzy"] is True for r in data["results"])
    assert corpus["k8s"] in search_ids(cm, "kuberntes")
    assert search_ids(cm, "kuberntes", "--no-fuzzy") == []
    assert "fuzzy" in ok(cm("search", "kuberntes")).stdout


def test_search_fuzzy_flag_forces_fuzzy_pass(cm: Invoke, corpus: dict[str, str]) -> None:
    enough = ok_json(cm("search", "docker", "--limit", "1", "--json"))
    assert enough["fuzzy_used"] is False and enough["results"][0]["match"] == "exact"
    forced = ok_json(cm("search", "docker", "--limit", "1", "--fuzzy", "--json"))
    assert forced["fuzzy_used"] is True
    never = ok_json(cm("search", "docker", "--limit", "50", "--no-fuzzy", "--json"))
    assert never["fuzzy_used"] is False


def test_search_threshold(cm: Invoke, corpus: dict[str, str]) -> None:
    assert corpus["k8s"] in search_ids(cm, "kuberntes", "--threshold", "0.7")
    assert search_ids(cm, "kuberntes", "--threshold", "0.99") == []
    assert corpus["k8s"] in search_ids(cm, "kuberntes", "--fuzzy", "--threshold", "0")


def test_search_expired_and_archived_are_hidden_unless_asked(cm: Invoke, tmp_path: Path) -> None:
    expired = import_expired(cm, tmp_path)
    archived = store(cm, "archived staging token note")
    ok(cm("archive", archived))
    assert search_ids(cm, "staging token") == []
    assert search_ids(cm, "staging token", "--include-expired") == [expired]
    assert search_ids(cm, "staging token", "--include-archived") == [archived]
    both = search_ids(cm, "staging token", "--include-expired", "--include-archived")
    assert set(both) == {expired, archived}


def test_search_counts_as_access(cm: Invoke) -> None:
    mid = store(cm, "counted when found")
    ok(cm("search", "counted"))
    after = show(cm, mid)
    assert after["access_count"] == 2  # one search, one show
    assert after["last_accessed_at"] is not None


# ------------------------------------------------------------------------ search: hostile input
HOSTILE_FINDABLE = [
    "a:b",
    "@user",
    "#tag",
    "a=b",
    "C++",
    "src/auth/oauth.py",
    "naïve",
    "cafe",
    "日本語",
]
HOSTILE_ODD = ['"', "*", "(", ")", "NOT", "OR", "AND AND", "a OR", '"unbalanced phrase', 'say "hi', "((((", "-", "\\"]


@pytest.fixture
def hostile_corpus(cm: Invoke) -> str:
    store(cm, "Unrelated auth notes in src and oauth elsewhere")
    return store(
        cm,
        "Ping @user: src/auth/oauth.py sets a:b and a=b; #tag C++ build; naïve café; 日本語 のテキスト",
    )


@pytest.mark.parametrize("query", HOSTILE_FINDABLE)
def test_hostile_queries_are_searched_literally(cm: Invoke, hostile_corpus: str, query: str) -> None:
    data = ok_json(cm("search", "--json", "--", query))
    assert hostile_corpus in [r["id"] for r in data["results"]], data


def test_path_query_does_not_match_scattered_words(cm: Invoke, hostile_corpus: str) -> None:
    assert search_ids(cm, "src/auth/oauth.py", "--no-fuzzy") == [hostile_corpus]


@pytest.mark.parametrize("query", HOSTILE_ODD)
def test_odd_queries_never_fail(cm: Invoke, hostile_corpus: str, query: str) -> None:
    for fmt in ([], ["--json"], ["--markdown"]):
        result = cm("search", *fmt, "--", query)
        ok(result)


def test_stray_quote_still_finds_the_words(cm: Invoke, hostile_corpus: str) -> None:
    assert hostile_corpus in search_ids(cm, '"ping user', "--no-fuzzy")


def test_very_long_queries(cm: Invoke, hostile_corpus: str) -> None:
    ok(cm("search", "x" * 10_000))
    words = " ".join(f"word{i}" for i in range(2000))[:10_000]
    ok_json(cm("search", words, "--json"))
    ok_json(cm("search", "(" * 5000 + "ping" + ")" * 5000, "--json"))


def test_nul_character_in_query(cm: Invoke, project: Path, hostile_corpus: str) -> None:
    ok(cm("search", "\x00"))
    assert hostile_corpus in search_ids(cm, "ping\x00")
    with Store.open(project) as api:
        assert api.search("\x00").hits == []
        assert hostile_corpus in [h.memory.id for h in api.search("oauth\x00py").hits]


# --------------------------------------------------------------------------------------- list
def test_list_default_newest_first_with_json_totals(sortable: Invoke) -> None:
    data = ok_json(sortable("list", "--json"))
    assert set(data) == {"count", "total", "memories"}
    assert (data["count"], data["total"]) == (3, 3)
    assert [m["id"] for m in data["memories"]] == [C, B, A]
    assert set(data["memories"][0]) == MEMORY_KEYS


@pytest.mark.parametrize(
    ("sort", "ascending"),
    [
        ("created", [A, B, C]),
        ("updated", [B, C, A]),
        ("expires", [C, A, B]),
        ("importance", [A, C, B]),
        ("accessed", [B, A, C]),
        ("content", [C, B, A]),
    ],
)
def test_list_sort_keys(sortable: Invoke, sort: str, ascending: list[str]) -> None:
    assert list_ids(sortable, "--sort", sort, "--order", "asc") == ascending
    assert list_ids(sortable, "--sort", sort, "--order", "desc") == ascending[::-1]
    assert list_ids(sortable, "--sort", sort) == ascending[::-1]  # desc is the default


def test_list_sort_puts_missing_values_last(sortable: Invoke) -> None:
    never = store(sortable, "never expires, never accessed")
    assert list_ids(sortable, "--sort", "expires", "--order", "asc") == [C, A, B, never]
    assert list_ids(sortable, "--sort", "expires", "--order", "desc") == [B, A, C, never]
    assert list_ids(sortable, "--sort", "accessed", "--order", "asc") == [B, A, C, never]


def test_list_limit_offset(sortable: Invoke) -> None:
    data = ok_json(sortable("list", "--sort", "created", "--order", "asc", "--limit", "1", "--offset", "1", "--json"))
    assert [m["id"] for m in data["memories"]] == [B]
    assert (data["count"], data["total"]) == (1, 3)
    assert list_ids(sortable, "--offset", "5") == []


def test_list_filters(sortable: Invoke, tmp_path: Path) -> None:
    cm = sortable
    assert set(list_ids(cm, "--tags", "red")) == {A, C}
    assert list_ids(cm, "--tags", "red,green") == [C]
    assert set(list_ids(cm, "--any-tag", "green,yellow")) == {B, C}
    assert set(list_ids(cm, "--entered-by", "alice")) == {A, C}
    assert list_ids(cm, "--category", "decision") == [B]
    assert set(list_ids(cm, "--after", "2025-02-01")) == {B, C}
    assert list_ids(cm, "--before", "2025-02-01") == [A]
    filtered = ok_json(cm("list", "--tags", "red", "--limit", "1", "--json"))
    assert (filtered["count"], filtered["total"]) == (1, 2)
    expired = import_expired(cm, tmp_path)
    ok(cm("archive", B))
    assert set(list_ids(cm)) == {A, C}
    assert set(list_ids(cm, "--include-expired")) == {A, C, expired}
    assert set(list_ids(cm, "--include-archived")) == {A, B, C}


def test_list_does_not_count_as_access(sortable: Invoke) -> None:
    ok(sortable("list"))
    assert {m["id"]: m["access_count"] for m in ok_json(sortable("list", "--json"))["memories"]} == {
        A: 3,
        B: 1,
        C: 2,
    }


def test_list_plain_and_markdown_and_empty(cm: Invoke) -> None:
    empty = ok(cm("list"))
    assert empty.stdout == "" and "No memories" in empty.stderr
    mid = store(cm, "listed memory", "--tags", "ops")
    out = ok(cm("list")).stdout
    assert mid in out and "listed memory" in out and "#ops" in out
    md = ok(cm("list", "--markdown")).stdout
    assert md.startswith("## Memories") and f"`{mid}`" in md and "> listed memory" in md


def test_list_rejects_unknown_sort(cm: Invoke) -> None:
    result = cm("list", "--sort", "random")
    assert result.exit_code == 2 and "Traceback" not in result.output


# --------------------------------------------------------------------------------------- show
def test_show_updates_access_count(cm: Invoke) -> None:
    mid = store(cm, "shown twice", "--source", "session-7")
    first = show(cm, mid)
    second = show(cm, mid)
    assert (first["access_count"], second["access_count"]) == (1, 2)
    assert second["last_accessed_at"] >= first["last_accessed_at"]
    assert set(first) == MEMORY_KEYS | {"links", "entities"}


def test_show_plain_markdown_and_several_ids(cm: Invoke) -> None:
    one = store(cm, "first shown", "--tags", "x", "--source", "commit abc")
    two = store(cm, "second shown")
    out = ok(cm("show", one)).stdout
    assert one in out and "first shown" in out and "commit abc" in out
    md = ok(cm("show", one, "--markdown")).stdout
    assert f"`{one}`" in md and "> first shown" in md and "source: commit abc" in md
    both = ok_json(cm("show", one, two, "--json"))
    assert [m["id"] for m in both] == [one, two]


@pytest.mark.parametrize("command", ["show", "forget", "archive"])
def test_unknown_id(cm: Invoke, command: str) -> None:
    store(cm, "something")
    assert_error(cm(command, "mem_00000000"), "mem_00000000", code=1)


@pytest.mark.parametrize("command", ["show", "forget", "archive"])
@pytest.mark.parametrize("bad", ["abc", "mem_XYZ", "mem_123", "12345678"])
def test_malformed_id(cm: Invoke, command: str, bad: str) -> None:
    assert_error(cm(command, bad), "not a memory id", code=2)


# ----------------------------------------------------------------------------- forget/archive
def test_forget_removes_text_everywhere(cm: Invoke, project: Path) -> None:
    keep = store(cm, "keep this ordinary note")
    gone = store(cm, "quetzalcoatl zebrafish secret rotation key")
    assert search_ids(cm, "zebrafish") == [gone]
    result = ok(cm("forget", gone))
    assert gone in result.stdout
    assert search_ids(cm, "zebrafish") == []
    assert search_ids(cm, "zebrafsh") == []  # not even fuzzily
    assert list_ids(cm, "--include-expired", "--include-archived") == [keep]
    assert_error(cm("show", gone), code=1)
    conn = sqlite3.connect(db_file(project))
    try:
        assert conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zebrafish'").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memories WHERE text LIKE '%zebrafish%'").fetchone() == (0,)
    finally:
        conn.close()


def test_forget_leaves_no_trace_in_the_file(cm: Invoke, project: Path) -> None:
    store(cm, "ordinary filler note")
    gone = store(cm, "quetzalcoatlus-zebrafish-secret")
    ok(cm("forget", gone))
    for path in db_file(project).parent.glob("memory.db*"):
        assert b"quetzalcoatlus" not in path.read_bytes(), path.name


def test_forget_json_and_partial_unknown(cm: Invoke) -> None:
    one, two = store(cm, "one to forget"), store(cm, "two to forget")
    data = ok_json(cm("forget", one, "--json"))
    assert data == {"forgotten": [one], "unknown": []}
    result = cm("forget", two, "mem_00000000")
    assert result.exit_code == 1 and "mem_00000000" in result.stderr
    assert f"Forgotten {two}" in result.stdout
    assert list_ids(cm) == []


def test_archive_and_undo(cm: Invoke) -> None:
    mid = store(cm, "archived knowledge about grpc")
    assert f"Archived {mid}" in ok(cm("archive", mid)).stdout
    assert search_ids(cm, "grpc") == []
    assert list_ids(cm) == []
    assert list_ids(cm, "--include-archived") == [mid]
    assert show(cm, mid)["archived"] is True  # still there, just hidden
    data = ok_json(cm("archive", mid, "--undo", "--json"))
    assert data == {"unarchived": [mid], "unknown": []}
    assert search_ids(cm, "grpc") == [mid]
    assert show(cm, mid)["archived"] is False


# -------------------------------------------------------------------------------------- prune
@pytest.fixture
def prunable(cm: Invoke, tmp_path: Path) -> tuple[str, str, str]:
    records = [
        {"id": "mem_e0000001", "text": "expired one", "created_at": "2024-01-01T00:00:00Z", "expires_at": "2024-06-01"},
        {"id": "mem_e0000002", "text": "expired two", "created_at": "2024-01-02T00:00:00Z", "expires_at": "2024-06-02"},
        {"id": "mem_01d00001", "text": "old but not expired", "created_at": "2024-01-03T00:00:00Z"},
    ]
    ok(cm("import", write_jsonl(tmp_path / "prunable.jsonl", records)))
    fresh = store(cm, "fresh and valid", "--expires", "2099-01-01")
    return "mem_e0000001", "mem_e0000002", fresh


def all_ids(cm: Invoke) -> set[str]:
    return set(list_ids(cm, "--include-expired", "--include-archived", "--limit", "1000"))


def test_prune_dry_run_deletes_nothing(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    before = all_ids(cm)
    result = ok(cm("prune", "--dry-run"))
    assert "Would delete 2 memories." in result.stdout
    assert "expired one" in result.stdout and "expired two" in result.stdout
    assert all_ids(cm) == before
    data = ok_json(cm("prune", "--dry-run", "--json"))
    assert data["dry_run"] is True and data["count"] == 2
    assert {m["id"] for m in data["memories"]} == {prunable[0], prunable[1]}


def test_prune_without_force_and_no_tty_refuses(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    before = all_ids(cm)
    assert_error(cm("prune"), "--force", "2", code=2)
    assert all_ids(cm) == before


def test_prune_force_deletes_only_expired(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    result = ok(cm("prune", "--force"))
    assert "Deleted 2 memories." in result.stdout
    assert all_ids(cm) == {"mem_01d00001", prunable[2]}
    assert ok(cm("prune", "--force")).stdout.strip() == "Deleted 0 memories."


def test_prune_nothing_to_do_needs_no_force(cm: Invoke) -> None:
    store(cm, "nothing expired")
    assert "Deleted 0 memories." in ok(cm("prune")).stdout


def test_prune_before_also_deletes_old_memories(cm: Invoke, prunable: tuple[str, str, str]) -> None:
    dry = ok_json(cm("prune", "--before", "2025-01-01", "--dry-run", "--json"))
    assert {m["id"] for m in dry["memories"]} == {prunable[0], prunable[1], "mem_01d00001"}
    data = ok_json(cm("prune", "--before", "2025-01-01", "--force", "--json"))
    assert data["dry_run"] is False and data["count"] == 3
    assert all_ids(cm) == {prunable[2]}
    assert_error(cm("prune", "--before", "whenever-ish"), "whenever-ish", code=2)


# -------------------------------------------------------------------------------------- stats
def test_stats(cm: Invoke, tmp_path: Path, project: Path) -> None:
    store(cm, "docker one", "--tags", "docker,ci", "--entered-by", "claude")
    store(cm, "docker two", "--tags", "Docker", "--entered-by", "claude", "--category", "gotcha")
    archived = store(cm, "third", "--entered-by", "codex")
    ok(cm("archive", archived))
    import_expired(cm, tmp_path)
    data = ok_json(cm("stats", "--json"))
    assert {"total", "live", "expired", "archived", "size_bytes"} <= set(data)
    assert (data["total"], data["live"], data["expired"], data["archived"]) == (4, 2, 1, 1)
    assert data["size_bytes"] >= db_file(project).stat().st_size > 0
    assert "tags" not in data and "agents" not in data
    full = ok_json(cm("stats", "--tags", "--agents", "--json"))
    assert full["tags"] == {"docker": 2, "ci": 1}
    assert full["agents"] == {"claude": 2, "codex": 1, "(unknown)": 1}
    text = ok(cm("stats", "--tags", "--agents")).stdout
    assert "4 total, 2 live, 1 expired, 1 archived" in text
    assert "docker" in text and "claude" in text


def test_stats_empty_store(cm: Invoke) -> None:
    data = ok_json(cm("stats", "--json"))
    assert (data["total"], data["live"], data["expired"], data["archived"]) == (0, 0, 0, 0)
    assert "0 total" in ok(cm("stats")).stdout


# ------------------------------------------------------------------------------ export/import
def _export_lines(invoke: Invoke, root: Path) -> dict[str, dict[str, Any]]:
    out = ok(invoke("--project", root, "export", "-")).stdout
    records = [json.loads(line) for line in out.splitlines()]
    return {r["id"]: r for r in records}


def test_export_import_preserves_every_field(
    invoke: Invoke, make_project: Callable[[str], Path], tmp_path: Path
) -> None:
    src, dst = make_project("src"), make_project("dst")
    ids = []
    for args in (
        ["full memory", "--tags", "a,b", "--category", "decision", "--importance", "0.9", "--entered-by", "claude"],
        ["with source and expiry", "--source", "https://x.test/1?q=é", "--expires", "2031-05-06"],
        ["will be archived"],
    ):
        ids.append(ok(invoke("--project", src, "store", *args, "-q")).stdout.strip())
    ok(invoke("--project", src, "show", ids[0]))  # access_count 1, last_accessed_at set
    ok(invoke("--project", src, "archive", ids[2]))
    path = tmp_path / "memories.jsonl"
    exported = ok(invoke("--project", src, "export", path))
    assert "Exported 3 memories" in exported.stderr
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(set(json.loads(line)) == MEMORY_KEYS for line in lines)

    report = ok_json(invoke("--project", dst, "import", path, "--json"))
    assert report == {"added": 3, "skipped_existing": 0, "invalid": []}
    original, copied = _export_lines(invoke, src), _export_lines(invoke, dst)
    assert set(copied) == set(ids)
    for mid in ids:
        a, b = dict(original[mid]), dict(copied[mid])
        assert sorted(a.pop("tags")) == sorted(b.pop("tags"))
        assert a == b
    assert copied[ids[0]]["access_count"] == 1 and copied[ids[0]]["last_accessed_at"]
    assert copied[ids[1]]["source"] == "https://x.test/1?q=é"
    assert copied[ids[1]]["expires_at"] == "2031-05-06T00:00:00.000Z"
    assert copied[ids[2]]["archived"] is True
    # The copy is searchable, with its tags.
    hits = ok_json(invoke("--project", dst, "search", "full", "--tags", "a,b", "--json"))["results"]
    assert [r["id"] for r in hits] == [ids[0]]


def test_reimport_adds_nothing(cm: Invoke, tmp_path: Path) -> None:
    store(cm, "only once")
    path = tmp_path / "e.jsonl"
    ok(cm("export", path, "--json"))
    assert ok_json(cm("import", path, "--json")) == {"added": 0, "skipped_existing": 1, "invalid": []}
    assert "Imported 0 memories (1 already present)" in ok(cm("import", path)).stdout
    assert ok_json(cm("list", "--json"))["total"] == 1


def test_import_without_ids_dedupes_by_text(cm: Invoke, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "noid.jsonl", [{"text": "no id given"}, {"text": "another", "tags": ["X"]}])
    assert ok_json(cm("import", path, "--json"))["added"] == 2
    assert ok_json(cm("import", path, "--json")) == {"added": 0, "skipped_existing": 2, "invalid": []}
    mems = ok_json(cm("list", "--json"))["memories"]
    assert all(ID.fullmatch(m["id"]) for m in mems)
    assert {m["text"]: m["tags"] for m in mems}["another"] == ["x"]


def test_export_json_summary_and_stdout(cm: Invoke, tmp_path: Path) -> None:
    mid = store(cm, "exported to stdout")
    assert ok_json(cm("export", tmp_path / "x.jsonl", "--json")) == {"exported": 1, "file": str(tmp_path / "x.jsonl")}
    out = ok(cm("export", "-")).stdout
    assert [json.loads(line)["id"] for line in out.splitlines()] == [mid]


def test_import_from_stdin(cm: Invoke) -> None:
    lines = json.dumps({"id": "mem_abcdef01", "text": "from stdin import"}) + "\n"
    assert "Imported 1 memories" in ok(cm("import", "-", input=lines)).stdout
    assert show(cm, "mem_abcdef01")["text"] == "from stdin import"


def test_import_malformed_line_imports_nothing(cm: Invoke, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"text": "good one"}) + "\n" + "{not json\n" + json.dumps({"text": "good two"}) + "\n",
        encoding="utf-8",
    )
    assert_error(cm("import", path), "line 2", "nothing imported", code=2)
    assert ok_json(cm("list", "--json"))["total"] == 0
    result = ok(cm("import", path, "--skip-invalid"))
    assert "Imported 2 memories" in result.stdout and "1 invalid" in result.stdout
    assert "line 2" in result.stderr
    assert {m["text"] for m in ok_json(cm("list", "--json"))["memories"]} == {"good one", "good two"}


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"id": "mem_zz", "text": "x"}, "id"),
        ({"text": ""}, "empty"),
        ({"text": "x" * 10_001}, "10,000"),
        ({"text": "x", "category": "bogus"}, "bogus"),
        ({"text": "x", "importance": 7}, "importance"),
        ({"text": "x", "created_at": "yesterday-ish"}, "created_at"),
        ({"text": "x", "tags": "a,b"}, "tags"),
        ({"nope": 1}, "text"),
        (["a list"], "object"),
    ],
)
def test_import_invalid_records_name_the_line(
    cm: Invoke, tmp_path: Path, record: dict[str, Any], fragment: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "fine"}) + "\n\n" + json.dumps(record) + "\n", encoding="utf-8")
    assert_error(cm("import", path), "line 3", fragment, code=2)
    assert ok_json(cm("list", "--json"))["total"] == 0


def test_import_missing_file(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("import", tmp_path / "missing.jsonl"), "no such file", code=2)


def test_export_to_a_directory_is_an_error(cm: Invoke, tmp_path: Path) -> None:
    assert_error(cm("export", tmp_path), "directory", code=2)


# ------------------------------------------------------------------------------ remember-scan
REMEMBER_TEXT = """Done with the refactor.

*Remember*: Docker build fails with an error when the BuildKit cache is full; fix with `docker builder prune`.
Valid until March 2099.

*Remember*: The temporary staging token rotates weekly

*Remember*: Feature flag cleanup for the postgres migration is planned for Q1 2099

Some unrelated closing text.
"""


def test_remember_scan_stores_each_note_with_tags_and_expiry(cm: Invoke) -> None:
    data = ok_json(cm("remember-scan", "--json", input=REMEMBER_TEXT))
    assert (data["found"], data["stored"]) == (3, 3)
    mems = [r["memory"] for r in data["results"]]
    docker, temp, flag = mems
    assert docker["text"].startswith("Docker build fails") and docker["text"].endswith("Valid until March 2099.")
    assert "Some unrelated" not in flag["text"] and "Done with" not in docker["text"]
    assert {"docker", "troubleshooting"} <= set(docker["tags"])
    assert "postgresql" in flag["tags"]
    assert docker["expires_at"] == "2099-03-31T23:59:59.999Z"
    assert flag["expires_at"] == "2099-03-31T23:59:59.999Z"
    expected_temp = datetime.now(UTC) + timedelta(days=90)
    assert abs(parse_ts(temp["expires_at"]) - expected_temp) < timedelta(minutes=5)
    assert {m["entered_by"] for m in mems} == {"auto-extract"}
    stored = {m["id"] for m in ok_json(cm("list", "--json"))["memories"]}
    assert stored == {m["id"] for m in mems}
    assert search_ids(cm, "BuildKit") == [docker["id"]]


def test_remember_scan_is_idempotent_and_takes_entered_by(cm: Invoke) -> None:
    ok(cm("remember-scan", input=REMEMBER_TEXT))
    again = ok_json(cm("remember-scan", "--json", input=REMEMBER_TEXT))
    assert (again["found"], again["stored"]) == (3, 0)
    out = ok(cm("remember-scan", "--entered-by", "claude", "--source", "session-9", input="*Remember*: new fact here"))
    assert "Stored mem_" in out.stdout
    mem = ok_json(cm("list", "--entered-by", "claude", "--json"))["memories"]
    assert [(m["text"], m["source"]) for m in mem] == [("new fact here", "session-9")]


def test_remember_scan_with_no_notes(cm: Invoke) -> None:
    result = ok(cm("remember-scan", input="nothing to remember here\n"))
    assert result.stdout == "" and "No *Remember* notes found" in result.stderr
    assert ok_json(cm("list", "--json"))["total"] == 0


# ------------------------------------------------------------------------ global options, help
def test_agent_context_prints_guide_without_a_store(invoke: Invoke, tmp_path: Path) -> None:
    result = ok(invoke("--project", tmp_path, "--agent-context"))
    assert "guide for AI agents" in result.stdout or "guide for coding agents" in result.stdout
    assert "codememory search" in result.stdout and "codememory store" in result.stdout
    assert not (tmp_path / ".codememory").exists()


def test_version(invoke: Invoke) -> None:
    out = ok(invoke("--version")).stdout
    assert "codememory" in out and codememory.__version__ in out


def test_top_level_help_lists_every_command(invoke: Invoke) -> None:
    out = ok(invoke("--help")).stdout
    for name in cli.commands:
        assert name in out


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_help_for_each_command(invoke: Invoke, tmp_path: Path, command: str) -> None:
    for flag in ("--help", "-h"):
        result = ok(invoke("--project", tmp_path, command, flag))
        assert result.stdout.startswith("Usage:") and command in result.stdout
    assert not (tmp_path / ".codememory").exists()


def test_every_command_option_is_documented(invoke: Invoke) -> None:
    for name, command in cli.commands.items():
        out = ok(invoke(name, "--help")).stdout
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in out, (name, opt)


def test_unknown_command(invoke: Invoke) -> None:
    result = invoke("frobnicate")
    assert result.exit_code == 2 and "Traceback" not in result.output


# ------------------------------------------------------------------------- unusable stores
READ_COMMANDS = [
    ["search", "x"],
    ["list"],
    ["stats"],
    ["store", "x"],
    ["show", "mem_00000000"],
    ["export", "-"],
    ["prune", "--dry-run"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_missing_store_says_run_init(invoke: Invoke, tmp_path: Path, args: list[str]) -> None:
    assert_error(invoke("--project", tmp_path, *args), "run `codememory init`", code=1)
    assert not (tmp_path / ".codememory").exists()


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_corrupt_store_is_refused_clearly(invoke: Invoke, project: Path, args: list[str]) -> None:
    for side in db_file(project).parent.glob("memory.db-*"):
        side.unlink()
    db_file(project).write_bytes(bytes(range(256)) * 64)
    assert_error(invoke("--project", project, *args), "corrupt", str(db_file(project)), code=1)


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_newer_schema_is_refused_clearly(invoke: Invoke, project: Path, args: list[str]) -> None:
    conn = sqlite3.connect(db_file(project))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    assert_error(invoke("--project", project, *args), "999", "newer", "upgrade codememory", code=1)
    conn = sqlite3.connect(db_file(project))
    assert conn.execute("PRAGMA user_version").fetchone() == (999,)
    conn.close()


def test_init_on_corrupt_store_is_refused(invoke: Invoke, project: Path) -> None:
    db_file(project).write_bytes(b"\xde\xad\xbe\xef" * 2048)
    assert_error(invoke("--project", project, "init"), "corrupt", code=1)
    assert db_file(project).read_bytes() == b"\xde\xad\xbe\xef" * 2048


# ------------------------------------------------------------------- the installed console script
def test_script_store_from_piped_stdin_in_subdirectory(console_script: Path, project: Path) -> None:
    sub = project / "pkg"
    sub.mkdir()
    stored = run_script(console_script, "store", "--tags", "Shell", input="echoed into codememory store\n", cwd=sub)
    assert stored.returncode == 0, stored.stderr
    assert re.fullmatch(r"Stored mem_[0-9a-f]{8}\n", stored.stdout)
    found = run_script(console_script, "--project", project, "search", "echoed", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["count"] == 1 and data["results"][0]["tags"] == ["shell"]
    assert data["results"][0]["id"] == stored.stdout.split()[1]


def test_script_export_pipe_import(console_script: Path, make_project: Callable[[str], Path]) -> None:
    src, dst = make_project("pipe-src"), make_project("pipe-dst")
    for text in ("first piped memory", "second piped memory", "third — ünïcode"):
        assert run_script(console_script, "--project", src, "store", text).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    exporter = subprocess.Popen(
        [str(console_script), "--project", str(src), "export", "-"], stdout=subprocess.PIPE, env=env
    )
    importer = subprocess.run(
        [str(console_script), "--project", str(dst), "import", "-", "--json"],
        stdin=exporter.stdout,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert exporter.stdout is not None
    exporter.stdout.close()
    assert exporter.wait(timeout=60) == 0
    assert importer.returncode == 0, importer.stderr
    assert json.loads(importer.stdout) == {"added": 3, "skipped_existing": 0, "invalid": []}
    a = run_script(console_script, "--project", src, "export", "-").stdout
    b = run_script(console_script, "--project", dst, "export", "-").stdout
    assert sorted(a.splitlines()) == sorted(b.splitlines())


def test_script_missing_store(console_script: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_script(console_script, "search", "anything", cwd=empty, env={"CODEMEMORY_PROJECT": str(empty)})
    assert result.returncode == 1
    assert result.stdout == ""
    assert "run `codememory init`" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_script_bad_input_exit_code(console_script: Path, project: Path) -> None:
    result = run_script(console_script, "--project", project, "store", "x" * 10_001)
    assert result.returncode == 2
    assert "10,000" in result.stderr and "Traceback" not in result.stderr


def test_script_prune_refuses_without_tty(console_script: Path, project: Path, tmp_path: Path) -> None:
    record = {"id": "mem_dead0002", "text": "expired", "created_at": "2024-01-01", "expires_at": "2024-02-01"}
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "e.jsonl", [record]))
    refused = run_script(console_script, "--project", project, "prune", stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "--force" in refused.stderr and "Traceback" not in refused.stderr
    forced = run_script(console_script, "--project", project, "prune", "--force", stdin=subprocess.DEVNULL)
    assert forced.returncode == 0 and "Deleted 1 memories." in forced.stdout


@pytest.mark.parametrize(("answer", "deleted"), [("n", False), ("y", True)])
def test_script_prune_asks_on_a_tty(
    console_script: Path, project: Path, tmp_path: Path, answer: str, deleted: bool
) -> None:
    pty = pytest.importorskip("pty")
    record = {"id": "mem_dead0003", "text": "expired", "created_at": "2024-01-01", "expires_at": "2024-02-01"}
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "e.jsonl", [record]))
    master, slave = pty.openpty()
    try:
        os.write(master, answer.encode() + b"\n")
        result = run_script(console_script, "--project", project, "prune", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert "Delete 1 memories?" in result.stdout
    assert "Traceback" not in result.stderr
    assert (result.returncode == 0) is deleted
    remaining = run_script(console_script, "--project", project, "list", "--include-expired", "--json")
    assert json.loads(remaining.stdout)["total"] == (0 if deleted else 1)


def test_script_output_into_closed_pipe(console_script: Path, project: Path, tmp_path: Path) -> None:
    """`codememory list | head -1`: the reader going away early is not an error worth a traceback."""
    records = [{"id": f"mem_{i:08x}", "text": f"memory {i} " + "padding " * 100} for i in range(600)]
    assert run_script(console_script, "--project", project, "import", write_jsonl(tmp_path / "many.jsonl", records))
    env = {k: v for k, v in os.environ.items() if k != "CODEMEMORY_PROJECT"}
    proc = subprocess.Popen(
        [str(console_script), "--project", str(project), "list", "--limit", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"mem_")
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert proc.returncode == 0
