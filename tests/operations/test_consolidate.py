"""`codememory consolidate` on real stores: the rules without a model (squash, never-merge links, decay, entity
spellings), the model path against a scripted OpenAI-compatible server, recorded runs and their undo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codememory import InvalidInput, Store
from codememory.extract.prompt_templates import PROMPTS_DIR
from codememory.store.consolidation_runs import ConsolidationTables
from codememory.store.injections import InjectedMemory, InjectionTables
from support.cli import Invoke, assert_error, ok, ok_json, show, write_jsonl
from support.scripted_llm import Reply, Script, ScriptedLLM

DAY = "2026-{:02d}-{:02d}T10:00:00.000Z"


def memory(mid: str, text: str, *, month: int = 10, day: int = 1, **more: Any) -> dict[str, Any]:
    return {"id": mid, "text": text, "created_at": DAY.format(month, day), "category": "fact", **more}


# Each pair: what the rules must do with it.
SAME = [  # one fact twice: squashed
    memory("mem_00000001", "Run the test suite with uv run pytest -q", importance=0.4, tags=["tests"]),
    memory(
        "mem_00000002",
        "Run the test suite with uv run pytest -q before every push to main",
        importance=0.9,
        tags=["ci"],
        day=2,
    ),
]
PORTS = [  # an updated value: the newer supersedes the older
    memory("mem_00000003", "The API server listens on port 8080 in development", day=3),
    memory("mem_00000004", "The API server listens on port 8081 in development", day=20),
]
REVERSAL = [  # a reversal: conflicts, both stay
    memory("mem_00000005", "Use the Redis cache for the session store", category="decision", day=4),
    memory("mem_00000006", "Do not use the Redis cache for the session store", category="decision", day=21),
]
DISTINCT = [  # two facts that share words: left alone
    memory("mem_00000007", "Integration tests run against Postgres in the CI pipeline", day=5),
    memory("mem_00000008", "Integration tests run against SQLite on developer laptops", day=6),
]
EVERYTHING = SAME + PORTS + REVERSAL + DISTINCT


def load(cm: Invoke, tmp_path: Path, records: list[dict[str, Any]]) -> None:
    ok(cm("import", write_jsonl(tmp_path / "in.jsonl", records)))


def live_ids(cm: Invoke) -> set[str]:
    return {m["id"] for m in ok_json(cm("list", "--limit", "100", "--json"))["memories"]}


def test_dry_run_plans_and_changes_nothing(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, EVERYTHING)
    plan = ok_json(cm("consolidate", "--dry-run", "--json"))
    assert plan["run"] is None and plan["dry_run"] is True and plan["method"] == "rules"
    assert plan["similarity"] == "words" and any("no embeddings" in n for n in plan["notes"])
    kinds = {c["kind"]: c for c in plan["changes"]}
    assert plan["counts"] == {"squash": 1, "supersedes": 1, "conflicts": 1, "decay": 0, "entity": 0}
    assert sorted(kinds["squash"]["memories"]) == ["mem_00000001", "mem_00000002"]
    assert kinds["supersedes"]["memories"] == ["mem_00000004", "mem_00000003"]
    assert "8080 -> 8081" in kinds["supersedes"]["reason"]
    assert kinds["conflicts"]["memories"] == ["mem_00000006", "mem_00000005"]
    assert live_ids(cm) == {m["id"] for m in EVERYTHING}
    assert ok_json(cm("consolidate", "--runs", "--json"))["runs"] == []
    text = ok(cm("consolidate", "--dry-run")).stdout
    assert "Would change: 1 squash, 1 supersedes, 1 conflicts" in text


def test_a_run_squashes_links_and_never_merges_different_values(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, EVERYTHING)
    report = ok_json(cm("consolidate", "--json"))
    run = report["run"]
    assert isinstance(run, int)
    squash = next(c for c in report["changes"] if c["kind"] == "squash")
    new = squash["result"]
    merged = show(cm, new)
    assert merged["text"] == SAME[1]["text"]  # the member that says most
    assert merged["importance"] == 0.9 and set(merged["tags"]) == {"tests", "ci"}
    assert merged["entered_by"] == "consolidation" and merged["created_at"] == SAME[1]["created_at"]
    assert {(link["direction"], link["type"], link["id"]) for link in merged["links"]} >= {
        ("out", "supersedes", "mem_00000001"),
        ("out", "supersedes", "mem_00000002"),
    }
    for original in SAME:  # archived, never deleted
        kept = show(cm, original["id"])
        assert kept["archived"] is True and kept["superseded_by"] == new
    assert show(cm, "mem_00000003")["superseded_by"] == "mem_00000004"
    assert not show(cm, "mem_00000004")["archived"]
    live = live_ids(cm)
    assert {"mem_00000004", "mem_00000005", "mem_00000006", "mem_00000007", "mem_00000008", new} == live
    conflict = show(cm, "mem_00000006")["links"]
    assert any(link["type"] == "conflicts" and link["id"] == "mem_00000005" for link in conflict)
    runs = ok_json(cm("consolidate", "--runs", "--json"))["runs"]
    assert runs[0]["id"] == run and runs[0]["trigger"] == "command" and runs[0]["status"] == "applied"
    assert runs[0]["counts"]["squashed"] == 2
    stats = ok_json(cm("stats", "--json"))["consolidation"]
    assert stats == {
        "runs": 1,
        "last_run": runs[0]["started_at"],
        "consolidated": 1,
        "squashed": 2,
        "decayed": 0,
        "linked": 2,
    }
    again = ok_json(cm("consolidate", "--json"))  # nothing left to do: the links are not made twice
    assert again["counts"] == {"squash": 0, "supersedes": 0, "conflicts": 0, "decay": 0, "entity": 0}


def test_undo_restores_what_the_run_changed(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, EVERYTHING)
    before = live_ids(cm)
    report = ok_json(cm("consolidate", "--json"))
    new = next(c["result"] for c in report["changes"] if c["kind"] == "squash")
    undone = ok_json(cm("consolidate", "--undo", report["run"], "--json"))
    assert undone["archived"] == [new]
    assert {"mem_00000001", "mem_00000002", "mem_00000003"} <= set(undone["restored"])
    assert live_ids(cm) == before
    assert show(cm, "mem_00000003")["superseded_by"] is None
    assert show(cm, "mem_00000001")["links"] == []
    assert not any(link["type"] == "conflicts" for link in show(cm, "mem_00000006")["links"])
    assert ok_json(cm("consolidate", "--runs", "--json"))["runs"][0]["status"] == "undone"
    assert_error(cm("consolidate", "--undo", report["run"]), "already undone")
    assert_error(cm("consolidate", "--undo", 99), "no consolidation run 99")
    assert ok_json(cm("stats", "--json"))["consolidation"]["consolidated"] == 0


def test_undo_of_an_earlier_run_waits_for_the_later_one(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, SAME)
    first = ok_json(cm("consolidate", "--json"))
    new = first["changes"][0]["result"]
    load(cm, tmp_path, [memory("mem_00000009", "Run the test suite with uv run pytest -q before every push", day=9)])
    second = ok_json(cm("consolidate", "--json"))
    assert new in second["changes"][0]["memories"]
    assert_error(cm("consolidate", "--undo", first["run"]), f"undo run {second['run']} first")
    ok(cm("consolidate", "--undo", second["run"]))
    ok(cm("consolidate", "--undo", first["run"]))
    assert live_ids(cm) == {"mem_00000001", "mem_00000002", "mem_00000009"}


def test_reversed_roles_are_a_conflict_not_a_squash(cm: Invoke, tmp_path: Path) -> None:
    load(
        cm,
        tmp_path,
        [
            memory("mem_0000000a", "Use httpx instead of requests for outbound HTTP calls", category="decision"),
            memory("mem_0000000b", "Use requests instead of httpx for outbound HTTP calls", category="decision", day=2),
        ],
    )
    plan = ok_json(cm("consolidate", "--dry-run", "--json"))
    assert [c["kind"] for c in plan["changes"]] == ["conflicts"]
    assert "reverse roles" in plan["changes"][0]["reason"]


def test_decay_is_proposed_by_a_dry_run_and_archived_only_by_a_recorded_run(
    cm: Invoke, tmp_path: Path, project: Path
) -> None:
    old = {"month": 1, "importance": 0.1}
    load(
        cm,
        tmp_path,
        [
            memory("mem_000000d1", "Staging cert renewal was a manual step once", **old),
            memory(
                "mem_000000d2", "Legacy lint job prints a deprecation notice", **old, last_accessed_at=DAY.format(11, 1)
            ),
            memory("mem_000000d3", "Pin the staging cluster to kernel five", **old),
            memory("mem_000000d4", "Never force-push to main", month=1, importance=0.9),
            memory("mem_000000d5", "Old weekly report goes to the team channel", importance=0.1),
        ],
    )
    with Store.open(project) as store:  # shown to a model recently, through the injection ledger
        InjectionTables(store.db).record(
            at=DAY.format(11, 10),
            source="test",
            session_id="s1",
            kind="hud",
            query="kernel",
            memories=[InjectedMemory("mem_000000d3", {}, 5)],
        )
    env = {"CODEMEMORY_CONSOLIDATION_DECAY_AFTER_DAYS": "60"}
    plan = ok_json(cm("consolidate", "--dry-run", "--json", env=env))
    decays = [c for c in plan["changes"] if c["kind"] == "decay"]
    assert [c["memories"] for c in decays] == [["mem_000000d1"]]  # d2 read, d3 shown, d4 important, d5 recent
    assert "importance 0.1" in decays[0]["reason"] and "last read never" in decays[0]["reason"]
    assert "mem_000000d1" in live_ids(cm)
    run = ok_json(cm("consolidate", "--json", env=env))
    assert "mem_000000d1" not in live_ids(cm) and show(cm, "mem_000000d1")["archived"] is True
    assert ok_json(cm("stats", "--json"))["consolidation"]["decayed"] == 1
    off = ok_json(cm("consolidate", "--dry-run", "--json", env={**env, "CODEMEMORY_CONSOLIDATION_DECAY": "false"}))
    assert off["counts"]["decay"] == 0
    ok(cm("consolidate", "--undo", run["run"]))
    assert "mem_000000d1" in live_ids(cm)


def test_entity_spellings_are_merged_and_undo_brings_them_back(cm: Invoke, tmp_path: Path, project: Path) -> None:
    load(
        cm,
        tmp_path,
        [
            memory("mem_000000e1", "The suite runs under pytest with xdist"),
            memory("mem_000000e2", "Reports are stored in the warehouse database"),
        ],
    )
    with Store.open(project) as store:  # spellings an older codememory (or a model's entity list) stored
        pks = dict(store.db.get_pk_map(["mem_000000e1", "mem_000000e2"]))
        store.db.set_entities(
            [
                (pks["mem_000000e1"], [("py.test", "tool"), ("pytest", "tool")]),
                (pks["mem_000000e2"], [("Postgres", "identifier")]),
            ]
        )
    plan = ok_json(cm("consolidate", "--dry-run", "--json"))
    merges = {c["text"]: c["result"] for c in plan["changes"] if c["kind"] == "entity"}
    assert merges == {"py.test": "pytest", "Postgres": "postgresql"}
    run = ok_json(cm("consolidate", "--json"))["run"]
    assert [e["name"] for e in show(cm, "mem_000000e1")["entities"]] == ["pytest"]
    assert show(cm, "mem_000000e2")["entities"] == [{"name": "postgresql", "type": "database"}]
    ok(cm("consolidate", "--undo", run))
    assert sorted(e["name"] for e in show(cm, "mem_000000e1")["entities"]) == ["py.test", "pytest"]
    assert show(cm, "mem_000000e2")["entities"] == [{"name": "Postgres", "type": "identifier"}]


def _model_env(llm: ScriptedLLM, **more: str) -> dict[str, str | None]:
    return {
        "CODEMEMORY_LLM_PROVIDER": "openai",
        "CODEMEMORY_LLM_BASE_URL": llm.base_url,
        "CODEMEMORY_LLM_MODEL": "scripted",
        **more,
    }


def test_the_model_decides_clusters_the_rules_let_merge(cm: Invoke, tmp_path: Path, project: Path) -> None:
    load(cm, tmp_path, SAME + PORTS)
    answer = {"decision": "squash", "text": "Run uv run pytest -q before every push.", "category": "convention"}
    with ScriptedLLM(Script([Reply(json.dumps({**answer, "reason": "one rule"}))])) as llm:
        report = ok_json(cm("consolidate", "--json", env=_model_env(llm)))
        requests = llm.requests
    assert len(requests) == 1  # the ports differ in value: never put to the model
    body = requests[0]
    system, user = (m["content"] for m in body["messages"])
    assert system == (PROMPTS_DIR / "consolidation_system.txt").read_text(encoding="utf-8")
    assert body["max_tokens"] == 400 and body["response_format"] == {"type": "json_object"}
    assert user.count("<memory ") == 2 and "8080" not in user and "project" in user
    assert report["method"] == "model:openai/scripted" and report["model_calls"] == 1
    squash = next(c for c in report["changes"] if c["kind"] == "squash")
    assert squash["text"] == answer["text"] and squash["reason"] == "model: one rule"
    merged = show(cm, squash["result"])
    assert merged["category"] == "convention" and merged["importance"] == 0.9
    assert any(c["kind"] == "supersedes" for c in report["changes"])  # the rules still link the ports
    spend = ok_json(cm("stats", "--json"))["llm_spend"]
    assert spend["all_time"]["calls"] == 1
    with Store.open(project) as store:
        assert ConsolidationTables(store.db).runs()[0].method == "model:openai/scripted"


def test_a_model_answer_that_drops_a_value_or_says_separate_keeps_them_apart(cm: Invoke, tmp_path: Path) -> None:
    load(
        cm,
        tmp_path,
        [
            memory("mem_000000f1", "The worker pool has 8 threads by default"),
            memory("mem_000000f2", "The worker pool has 8 threads by default in production builds", day=2),
            memory("mem_000000f3", "Release notes live in docs/releases and are written by hand", day=3),
            memory("mem_000000f4", "Release notes live in docs/releases and are reviewed by hand", day=4),
        ],
    )
    lossy = {"decision": "squash", "text": "The worker pool has a few threads.", "category": "fact", "reason": "r"}
    replies = [Reply(json.dumps(lossy)), Reply('{"decision": "separate", "reason": "written vs reviewed"}')]
    with ScriptedLLM(Script(replies)) as llm:
        report = ok_json(cm("consolidate", "--json", env=_model_env(llm)))
    assert report["model_calls"] == 2 and report["counts"]["squash"] == 0
    assert len(live_ids(cm)) == 4


def test_the_token_budget_leaves_the_clusters_to_the_rules(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, SAME)
    with ScriptedLLM(Script([])) as llm:
        report = ok_json(cm("consolidate", "--json", env=_model_env(llm, CODEMEMORY_LLM_SESSION_TOKEN_BUDGET="100")))
        assert llm.requests == []
    assert report["model_calls"] == 0 and report["counts"]["squash"] == 1
    assert any("session token budget" in n for n in report["notes"])
    assert ok_json(cm("consolidate", "--runs", "--json"))["runs"][0]["method"] == "model:openai/scripted"


def test_no_model_flag_and_bad_options(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, SAME)
    with ScriptedLLM(Script([])) as llm:
        report = ok_json(cm("consolidate", "--dry-run", "--no-model", "--json", env=_model_env(llm)))
        assert llm.requests == []
    assert report["method"] == "rules" and report["counts"]["squash"] == 1
    assert_error(cm("consolidate", "--dry-run", "--runs"), "choose one of")


def test_an_untrusted_project_config_may_only_make_consolidation_stricter(cm: Invoke, project: Path) -> None:
    (project / ".codememory" / "config.toml").write_text(
        "[consolidation]\nsimilarity_threshold = 0.5\ndecay_after_days = 1\nuse_model = false\ninterval = 3600\n"
    )
    with Store.open(project) as store:
        c = store.config.consolidation
        assert (c.similarity_threshold, c.decay_after_days, c.use_model, c.interval) == (0.85, 180.0, False, 3600)


def test_near_misses_the_rules_never_squash(cm: Invoke, tmp_path: Path) -> None:
    """A name swapped for another, a restatement negated, and a restatement contained in two memories that may
    not merge with each other."""
    note = "Each widget is wrapped in an error boundary so one bad payload breaks one tile. Errors go to Sentry."
    load(
        cm,
        tmp_path,
        [
            memory("mem_00000a01", "Sessions use Redis in front of Postgres; Redis was flushed during the upgrade"),
            memory(
                "mem_00000a02", "Sessions use valkey in front of Postgres; Redis was flushed during the upgrade", day=2
            ),
            memory("mem_00000b01", "Run make check before pushing to the main branch"),
            memory("mem_00000b02", "Do not run make check before pushing to the main branch; CI runs it", day=2),
            memory("mem_00000c01", note),
            memory("mem_00000c02", note.replace("Sentry", "Datadog"), day=2),
            memory(
                "mem_00000c03", "Each widget is wrapped in an error boundary so one bad payload breaks one tile.", day=3
            ),
        ],
    )
    plan = ok_json(cm("consolidate", "--dry-run", "--json"))
    assert [c for c in plan["changes"] if c["kind"] == "squash"] == []


def test_a_run_planned_before_another_was_recorded_is_refused(cm: Invoke, tmp_path: Path, project: Path) -> None:
    """The daemon's run and a command's at once: the second to finish planned on a store the first changed."""
    load(cm, tmp_path, SAME)
    ok(cm("consolidate", "--dry-run"))
    with Store.open(project) as store:
        tables = ConsolidationTables(store.db)
        planned_after = tables.latest_run_id()
        ok(cm("consolidate"))  # another run is recorded meanwhile
        with pytest.raises(InvalidInput, match="run it again"):
            tables.apply(
                started_at="2026-11-24T00:00:00.000Z",
                now="2026-11-24T00:00:01.000Z",
                trigger="command",
                method="rules",
                squashes=[],
                links=[],
                archive=[],
                entity_merges=[],
                changes=[],
                summary={},
                planned_after=planned_after,
            )
    assert len(ok_json(cm("consolidate", "--runs", "--json"))["runs"]) == 1


def test_a_single_memory_is_not_compared_and_no_note_says_vectors_are_missing(cm: Invoke, tmp_path: Path) -> None:
    load(cm, tmp_path, SAME[:1])
    plan = ok_json(cm("consolidate", "--dry-run", "--json"))
    assert plan["considered"] == 1 and plan["clusters"] == 0 and plan["changes"] == []
    assert plan["notes"] == []


def test_a_squash_never_makes_a_memory_from_elsewhere_ours(cm: Invoke, tmp_path: Path) -> None:
    """Merging keeps where the members came from: a squash of imported memories is still an imported one (ranked on
    its content), and only a squash of memories written here is written here."""
    load(cm, tmp_path, SAME)
    merged = show(cm, next(c["result"] for c in ok_json(cm("consolidate", "--json"))["changes"]))
    assert merged["provenance"]["origin"] == "import"
    # "Run the test suite with …" is a command: its members waited for review, and so does what they became
    assert merged["provenance"]["label"] == "imported from in.jsonl; not reviewed"
    ok(cm("consolidate", "--undo", str(ok_json(cm("consolidate", "--runs", "--json"))["runs"][0]["id"])))
    for mid in ("mem_00000001", "mem_00000002"):
        ok(cm("forget", mid))
    ok(cm("import", "--own", write_jsonl(tmp_path / "own.jsonl", SAME)))
    merged = show(cm, next(c["result"] for c in ok_json(cm("consolidate", "--json"))["changes"]))
    assert merged["provenance"]["origin"] == "local"
    assert merged["provenance"]["label"] == "merged here from other memories"
