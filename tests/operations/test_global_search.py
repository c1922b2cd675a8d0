"""`codememory search --global`: every project of the global registry searched and merged, against real
stores in tmp dirs registered by the real `codememory init` (the registry lives in a temporary
XDG_CONFIG_HOME, see conftest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codememory import Store
from conftest import MEMORY_KEYS, Invoke

MakeProject = Callable[[str], Path]
HIT_KEYS = MEMORY_KEYS | {"score", "match", "fuzzy", "held_back", "explain", "project", "project_name", "project_rank"}
TOP_KEYS = {"global", "query", "count", "has_more", "registry", "projects", "results"}
PROJECT_KEYS = {"root", "name", "hits", "error", "mode", "degraded_reason"}


def fill(root: Path, *texts: str, **kwargs: Any) -> list[str]:
    with Store.open(root) as store:
        return [store.add(text, **kwargs).memory.id for text in texts]


def search_json(invoke: Invoke, *args: Any) -> dict[str, Any]:
    result = invoke("search", "--global", *args, "--json")
    assert result.exit_code == 0, result.output + result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    assert set(data) == TOP_KEYS
    assert all(set(p) == PROJECT_KEYS for p in data["projects"])
    assert all(set(r) == HIT_KEYS for r in data["results"])
    return data


def order(data: dict[str, Any]) -> list[tuple[str, int]]:
    return [(r["project_name"], r["project_rank"]) for r in data["results"]]


def test_hits_of_every_project_interleave_by_rank_keeping_each_projects_order(
    invoke: Invoke, make_project: MakeProject
) -> None:
    alpha, beta, gamma = make_project("alpha"), make_project("beta"), make_project("gamma")
    fill(alpha, "docker compose runs the local stack", "docker images build in CI", "prune docker volumes weekly")
    fill(beta, "docker swarm in production")
    fill(gamma, "postgres is the only database")

    data = search_json(invoke, "docker")
    assert (data["global"], data["query"], data["count"], data["has_more"]) == (True, "docker", 4, False)
    assert order(data) == [("alpha", 1), ("beta", 1), ("alpha", 2), ("alpha", 3)]
    assert [(p["name"], p["root"], p["hits"], p["error"]) for p in data["projects"]] == [
        ("alpha", str(alpha), 3, None),
        ("beta", str(beta), 1, None),
        ("gamma", str(gamma), 0, None),
    ]
    assert {r["project"] for r in data["results"]} == {str(alpha), str(beta)}
    # alpha's hits come in alpha's own order, with alpha's own scores
    own = json.loads(invoke("--project", alpha, "search", "docker", "--json").stdout)["results"]
    mine = [r for r in data["results"] if r["project_name"] == "alpha"]
    assert [(r["id"], r["score"]) for r in mine] == [(r["id"], r["score"]) for r in own]

    text = invoke("search", "--global", "docker")
    assert text.exit_code == 0 and text.stderr == ""
    assert [line.split()[-1] for line in text.stdout.splitlines() if line.startswith("mem_")] == [
        "[alpha]",
        "[beta]",
        "[alpha]",
        "[alpha]",
    ]


def test_typo_tolerant_fills_come_after_every_projects_keyword_matches(
    invoke: Invoke, make_project: MakeProject
) -> None:
    alpha, beta = make_project("alpha"), make_project("beta")
    fill(alpha, "the dokcer daemon runs rootless")  # only a typo: a fuzzy fill in alpha
    fill(beta, "docker swarm in production", "docker images build in CI")

    data = search_json(invoke, "docker")
    assert order(data) == [("beta", 1), ("beta", 2), ("alpha", 1)]
    assert [r["match"] for r in data["results"]] == ["exact", "exact", "fuzzy"]


def test_some_word_fills_come_after_every_projects_all_word_matches(invoke: Invoke, make_project: MakeProject) -> None:
    alpha, beta = make_project("alpha"), make_project("beta")
    for root in (alpha, beta):  # keyword-only whatever the default provider
        (root / ".codememory" / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    # one of the two words: a partial fill in alpha, likely enough there to be shown (the only memory about docker)
    fill(alpha, "docker images are built in CI", "the billing cron runs nightly", "logs are shipped to Loki")
    fill(beta, "docker swarm in production", "docker swarm nodes run on arm64")

    data = search_json(invoke, "docker swarm")
    assert order(data) == [("beta", 1), ("beta", 2), ("alpha", 1)]
    assert [r["match"] for r in data["results"]] == ["exact", "exact", "partial"]


def test_filters_and_paging_work_across_projects(invoke: Invoke, make_project: MakeProject) -> None:
    alpha, beta = make_project("alpha"), make_project("beta")
    fill(alpha, "retry with backoff for the payments API", category="decision", tags="http")
    fill(alpha, "retry once on timeouts in tests", category="gotcha")
    fill(beta, "retry three times then alert", category="decision", tags="http,ops")
    fill(beta, "retry queue drains nightly", category="fact")

    decisions = search_json(invoke, "retry", "--category", "decision", "--tags", "http")
    assert [(r["project_name"], r["category"]) for r in decisions["results"]] == [
        ("alpha", "decision"),
        ("beta", "decision"),
    ]
    everything = search_json(invoke, "retry")
    assert everything["count"] == 4
    first = search_json(invoke, "retry", "--limit", "2")
    second = search_json(invoke, "retry", "--limit", "2", "--offset", "2")
    assert (first["has_more"], second["has_more"]) == (True, False)
    assert [r["id"] for r in first["results"] + second["results"]] == [r["id"] for r in everything["results"]]
    assert [p["hits"] for p in second["projects"]] == [1, 1]

    bad = invoke("search", "--global", "retry", "--category", "bogus")
    assert bad.exit_code == 2 and bad.stderr.startswith("codememory: error: unknown category 'bogus'")
    assert bad.stderr.count("\n") == 1


def test_only_the_hits_shown_count_as_accessed(invoke: Invoke, make_project: MakeProject) -> None:
    alpha, beta = make_project("alpha"), make_project("beta")
    [a] = fill(alpha, "cache keys include the tenant")
    [b] = fill(beta, "cache is warmed at deploy")
    data = search_json(invoke, "cache", "--limit", "1")
    assert [r["id"] for r in data["results"]] == [a] and data["results"][0]["access_count"] == 1
    with Store.open(alpha) as store:
        assert store.get(a, touch=False).access_count == 1
    with Store.open(beta) as store:
        assert store.get(b, touch=False).access_count == 0  # merged away, not shown


def test_gone_storeless_and_broken_projects_are_reported_never_fatal(invoke: Invoke, make_project: MakeProject) -> None:
    good = make_project("good")
    fill(good, "feature flags live in LaunchDarkly")
    gone, storeless, corrupt, misconfigured = (make_project(n) for n in ("gone", "storeless", "corrupt", "config"))
    for root in (corrupt, misconfigured):
        fill(root, "feature flags are evil")
    shutil.rmtree(gone)
    (storeless / ".codememory" / "memory.db").unlink()
    for side in corrupt.glob(".codememory/memory.db*"):
        side.unlink()
    (corrupt / ".codememory" / "memory.db").write_bytes(b"this is not a database at all" * 100)
    (misconfigured / ".codememory" / "config.toml").write_text("[search\nbroken = ", encoding="utf-8")

    data = search_json(invoke, "feature flags")
    errors = {p["name"]: p["error"] for p in data["projects"]}
    assert errors["good"] is None
    assert errors["gone"] == f"project directory does not exist: {gone}"
    assert errors["storeless"].startswith("no codememory store at")
    assert "unreadable or corrupt" in errors["corrupt"]
    assert "config.toml" in errors["config"]
    assert [r["project_name"] for r in data["results"]] == ["good"]

    text = invoke("search", "--global", "feature", "flags")
    assert text.exit_code == 0 and "LaunchDarkly" in text.stdout
    warnings = text.stderr.splitlines()
    assert len(warnings) == 4 and all(w.startswith("codememory: warning: skipped ") for w in warnings)


def test_an_empty_or_broken_registry(invoke: Invoke) -> None:
    empty = search_json(invoke, "anything")
    assert (empty["projects"], empty["results"], empty["count"]) == ([], [], 0)
    text = invoke("search", "--global", "anything")
    assert text.exit_code == 0 and "No projects registered yet" in text.stderr

    registry = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory" / "registry.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text("{not json", encoding="utf-8")
    broken = invoke("search", "--global", "anything")
    assert broken.exit_code == 1 and broken.stderr.startswith("codememory: error: ")
    assert "is not valid JSON" in broken.stderr and broken.stderr.count("\n") == 1


def test_the_installed_command_searches_from_any_folder(
    console_script: Path, make_project: MakeProject, tmp_path: Path
) -> None:
    fill(make_project("alpha"), "the staging database is restored every Monday")
    elsewhere = tmp_path / "not-a-project"
    elsewhere.mkdir()
    proc = subprocess.run(
        [str(console_script), "search", "--global", "staging", "--json"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env={**os.environ},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    [hit] = json.loads(proc.stdout)["results"]
    assert hit["project_name"] == "alpha" and "staging" in hit["text"]
    assert not (elsewhere / ".codememory").exists()


def test_help_mentions_global(invoke: Invoke) -> None:
    result = invoke("search", "--help")
    assert result.exit_code == 0 and "--global" in result.stdout and "registry" in result.stdout
