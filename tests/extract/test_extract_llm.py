"""Extraction with a model: a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/support/scripted_llm.py). Real
stores. The agent-CLI providers: tests/extract/test_agent_cli_providers.py (stand-ins) and test_cli_contract.py (the
real CLIs)."""

from __future__ import annotations

import json
import logging
import shutil
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from codememory import InvalidInput, Store
from codememory.capture.turns import Turn
from codememory.core.config import LLMConfig
from codememory.core.dates import now_utc, to_iso
from codememory.errors import LLMError, PromptFileError
from codememory.extract import (
    Extractor,
    OpenAICompatible,
    extract_session,
    provider_from_config,
    spend_summary,
)
from codememory.extract.budget import utc_day
from codememory.extract.output import answer_schema
from codememory.extract.prompt_templates import PROMPTS_DIR, Prompts
from codememory.store.extraction import ExtractionTables, SpendRow
from support.extraction import SESSION, bash, edit, extraction_rows, stored_memories, turn
from support.scripted_llm import Reply, Script, ScriptedLLM

PYTEST_FAIL = "E   ImportError: cannot import name 'Cart' from 'shop.cart'\n1 error in 0.12s\n"


def session_turns() -> list[Turn]:
    return [
        turn(1, "Add a cart to the shop. Prices must be integer cents.", ("Reading the models first.",)),
        turn(
            2,
            "Run the tests.\n\n*Remember*: the staging database is reset every Sunday night",
            ("The import was stale; fixed.",),
            (bash("uv run pytest -q", PYTEST_FAIL), edit("src/shop/cart.py"), bash("uv run pytest -q", "24 passed")),
        ),
        turn(3, "Thanks, that's it for today.", ("You're welcome.",)),
    ]


def memory(
    text: str, category: str, importance: float = 0.8, entities: list[str] | None = None, turn: int | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"text": text, "category": category, "importance": importance, "entities": entities or []}
    if turn is not None:
        item["turn"] = turn
    return item


def answer(*items: dict[str, Any]) -> str:
    return json.dumps({"memories": list(items)})


CENTS = memory("Store prices as integer cents, never floats.", "decision", 0.9, ["cents"], turn=1)
GOTCHA = memory(
    "`uv run pytest` fails with ImportError after renaming Cart; update the imports.", "gotcha", 0.7, ["pytest"], turn=2
)


def open_store(root: Path, **llm: Any) -> Store:
    root.mkdir(parents=True, exist_ok=True)
    Store.init(root)[0].close()
    if llm:
        lines = ["[llm]"] + [f"{k} = {json.dumps(v)}" for k, v in llm.items()]
        (root / ".codememory" / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Store.open(root)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "shop")
    yield s
    s.close()


def spend(store: Store) -> list[tuple[Any, ...]]:
    return store.db.conn.execute(
        "SELECT provider, model, purpose, session_id, prompt_tokens, completion_tokens FROM llm_spend ORDER BY id"
    ).fetchall()


def user_prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


# ------------------------------------------------------------------------------------ the happy path
def test_llm_memories_are_stored_with_their_turn_source_and_category(store: Store) -> None:
    compose = store.add("We deploy with Docker Compose.", category="decision").memory.id
    usage = {"prompt_tokens": 1234, "completion_tokens": 56}
    with ScriptedLLM(Script([Reply(answer(CENTS, GOTCHA), usage=usage)])) as llm:
        report = extract_session(
            store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "small-model")
        )
    (request,) = llm.requests
    assert request["model"] == "small-model" and request["stream"] is False and request["temperature"] == 0
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "schema": answer_schema(), "strict": False}}
    assert request["response_format"] == schema
    system, user = request["messages"]
    assert system["role"] == "system" and "durable" in system["content"] and "rejected_alternative" in system["content"]
    assert f"- {compose} [decision] We deploy with Docker Compose." in user["content"]
    assert "[turn 1]\nUser: Add a cart to the shop." in user["content"]
    assert "Tool: Ran `uv run pytest -q` (failed: 1 error; ImportError: cannot import name 'Cart'" in user["content"]
    assert "Tool: Edited src/shop/cart.py." in user["content"]

    by_text = {m["text"]: m for m in stored_memories(store)}
    cents = by_text["Store prices as integer cents, never floats."]
    assert (cents["category"], cents["importance"], cents["source"], cents["entered_by"]) == (
        "decision",
        0.9,
        "opencode session:ses_shop1 turn:1",
        "codememory-extract:llm",
    )
    gotcha = by_text[GOTCHA["text"]]
    assert gotcha["category"] == "gotcha" and gotcha["source"] == "opencode session:ses_shop1 turn:2"
    # What needs no judgement comes from the rules, alongside the model's memories.
    note = by_text["the staging database is reset every Sunday night"]
    assert note["entered_by"] == "codememory-extract:heuristic" and note["source"].endswith("turn:2 said_by:user")
    assert not any(t.startswith("Files changed") for t in by_text)  # files belong to the session, not memory
    assert report.status == "ok" and report.llm_calls == 1 and report.prompt_tokens == 1234
    assert extraction_rows(store) == [(1, 3, "llm", "ok", 3)]
    assert spend(store) == [("openai", "scripted-model", "extract", "ses_shop1", 1234, 56)]


def test_a_turn_the_model_does_not_name_is_attributed_to_the_windows_last_turn(store: Store) -> None:
    with ScriptedLLM(
        Script(
            [
                Reply(
                    answer(
                        memory("The shop sells only digital goods.", "fact", 0.5),
                        memory("Use Stripe.", "decision", turn=99),
                    )
                )
            ]
        )
    ) as llm:
        extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    sources = {m["text"]: m["source"] for m in stored_memories(store)}
    assert sources["The shop sells only digital goods."] == "opencode session:ses_shop1 turn:3"
    assert sources["Use Stripe."] == "opencode session:ses_shop1 turn:3"


def test_duplicates_of_existing_memories_are_counted_apart(store: Store) -> None:
    existing = store.add("Store prices as integer cents, never floats.", category="decision").memory
    with ScriptedLLM(Script([Reply(answer(CENTS, GOTCHA))])) as llm:
        report = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    assert report.duplicate_ids == [existing.id]
    assert report.to_dict()["duplicates"] == 1 and report.to_dict()["created"] == 2  # the gotcha and the remember note


def test_fenced_or_bare_array_answers_are_accepted(store: Store) -> None:
    fenced = "Here you go:\n```json\n" + json.dumps([CENTS]) + "\n```\nLet me know!"
    with ScriptedLLM(Script([Reply(fenced)])) as llm:
        report = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    assert len(llm.requests) == 1 and report.status == "ok"
    assert CENTS["text"] in [m["text"] for m in stored_memories(store)]


# ----------------------------------------------------------------------------------- invalid output
def test_invalid_output_gets_one_repair_request_then_succeeds(store: Store) -> None:
    bad = json.dumps({"memories": [{"text": "Use Stripe.", "category": "choice", "importance": 0.8}]})
    with ScriptedLLM(Script([Reply(bad), Reply(answer(CENTS))])) as llm:
        report = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    first, repair = llm.requests
    assert user_prompt(repair).startswith(user_prompt(first))
    assert "could not be used: memories[0].category: Input should be 'decision'" in user_prompt(repair)
    assert '"category": "choice"' in user_prompt(repair)  # the previous answer, quoted back
    assert CENTS["text"] in [m["text"] for m in stored_memories(store)] and "Use Stripe." not in [
        m["text"] for m in stored_memories(store)
    ]
    assert [p for _, _, p, *_ in spend(store)] == ["extract", "repair"]
    assert report.llm_calls == 2 and extraction_rows(store)[0][2:4] == ("llm", "ok")


def test_invalid_output_twice_is_dropped_and_the_heuristic_takes_the_window(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    turns = [*session_turns(), turn(4, "We decided to ship the cart behind a feature flag.")]
    caplog.set_level(logging.DEBUG, logger="codememory.extract")
    with ScriptedLLM(Script([Reply("Sure! The session was about a cart."), Reply('[{"text": "Use Stripe."}]')])) as llm:
        report = extract_session(store, SESSION, turns, provider=OpenAICompatible(llm.base_url, "m"))
    assert len(llm.requests) == 2
    texts = {m["text"]: m["entered_by"] for m in stored_memories(store)}
    assert texts["We decided to ship the cart behind a feature flag."] == "codememory-extract:heuristic"
    assert "Use Stripe." not in texts
    assert extraction_rows(store) == [(1, 4, "heuristic", "ok", len(texts))]
    detail = json.loads(store.db.conn.execute("SELECT detail FROM extractions").fetchone()[0])
    assert detail["reason"].startswith("model output invalid twice: memories[0].category: Field required")
    assert report.errors == [detail["reason"]]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "model output invalid" in logged and "dropped, heuristic fallback" in logged
    for text in [*texts, "Use Stripe", "The session was about a cart", "feature flag", "staging database"]:
        assert text not in logged


# ------------------------------------------------------------------------------------------- budgets
def test_over_the_session_budget_no_call_is_made_and_the_heuristic_runs(tmp_path: Path) -> None:
    store = open_store(tmp_path / "shop", session_token_budget=500)
    turns = [*session_turns(), turn(4, "We decided to ship the cart behind a feature flag.")]
    with ScriptedLLM(Script([Reply(answer(CENTS))])) as llm:
        report = extract_session(store, SESSION, turns, provider=OpenAICompatible(llm.base_url, "m"))
    assert llm.requests == [] and spend(store) == []
    assert report.status == "over_budget"
    assert extraction_rows(store) == [(1, 4, "heuristic", "over_budget", len(stored_memories(store)))]
    detail = json.loads(store.db.conn.execute("SELECT detail FROM extractions").fetchone()[0])
    assert "session token budget reached" in detail["reason"] and "limit 500" in detail["reason"]
    assert "We decided to ship the cart behind a feature flag." in [m["text"] for m in stored_memories(store)]
    # The span is done: a later run does not spend on it either.
    assert extract_session(store, SESSION, turns, provider=OpenAICompatible(llm.base_url, "m")).status == "nothing_new"
    store.close()


def test_budget_runs_out_between_windows(tmp_path: Path) -> None:
    store = open_store(tmp_path / "shop", max_transcript_tokens=30)  # one turn a window
    turns = [turn(i, f"We decided to name module {i} after the {i}th planet in the catalogue.") for i in range(1, 4)]
    big = {"prompt_tokens": 58_000, "completion_tokens": 100}  # the default session budget is 60,000
    with ScriptedLLM(Script([Reply(answer(CENTS), usage=big)])) as llm:
        report = extract_session(store, SESSION, turns, provider=OpenAICompatible(llm.base_url, "m"))
    assert len(llm.requests) == 1
    assert extraction_rows(store) == [(1, 1, "llm", "ok", 1), (2, 3, "heuristic", "over_budget", 2)]
    assert report.status == "over_budget" and report.prompt_tokens == 58_000
    summary = spend_summary(store.db, store.config.llm)
    assert summary["today"] == {"calls": 1, "prompt_tokens": 58_000, "completion_tokens": 100, "total_tokens": 58_100}
    assert summary["budget"]["today_remaining"] == 500_000 - 58_100
    store.close()


def test_daily_budget_counts_every_session_of_the_day(tmp_path: Path) -> None:
    store = open_store(tmp_path / "shop", daily_token_budget=10_000)
    now = now_utc()
    ExtractionTables(store.db).record_spend(
        SpendRow(to_iso(now), utc_day(now), "openai", "m", "extract", "ses_earlier", 9_000, 500)
    )
    with ScriptedLLM(Script([Reply(answer(CENTS))])) as llm:
        report = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    assert llm.requests == [] and report.status == "over_budget"
    detail = json.loads(store.db.conn.execute("SELECT detail FROM extractions").fetchone()[0])
    assert "daily token budget reached: 9500 spent today" in detail["reason"]
    store.close()


def test_spend_summary_today_week_and_per_model(store: Store) -> None:
    tables = ExtractionTables(store.db)
    now = now_utc()
    for days_ago, model, prompt, completion in [
        (0, "a", 100, 10),
        (0, "b", 200, 20),
        (3, "a", 1000, 100),
        (10, "a", 5, 5),
    ]:
        when = now - timedelta(days=days_ago)
        tables.record_spend(SpendRow(to_iso(when), utc_day(when), "openai", model, "extract", "s", prompt, completion))
    summary = spend_summary(store.db, store.config.llm, now=now)
    assert summary["today"] == {"calls": 2, "prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330}
    assert summary["last_7_days"]["total_tokens"] == 1430 and summary["all_time"]["calls"] == 4
    assert [(m["model"], m["total_tokens"]) for m in summary["per_model"]] == [("a", 1220), ("b", 220)]
    assert spend_summary(store.db)["today"]["calls"] == 2 and "budget" not in spend_summary(store.db)


# ------------------------------------------------------------------------------ resume, crash, privacy
def test_a_resumed_session_sends_only_its_new_turns(store: Store) -> None:
    first = session_turns()
    with ScriptedLLM(
        Script(
            [Reply(answer(CENTS)), Reply(answer(memory("Ship the cart behind a feature flag.", "decision", turn=5)))]
        )
    ) as llm:
        provider = OpenAICompatible(llm.base_url, "m")
        extract_session(store, SESSION, first, provider=provider)
        resumed = [*first, turn(4, "Back again."), turn(5, "Put the cart behind a feature flag.")]
        report = extract_session(store, SESSION, resumed, provider=provider)
    second = user_prompt(llm.requests[1])
    assert "[turn 4]" in second and "[turn 5]" in second and "[turn 3]" not in second and "[turn 1]" not in second
    assert "[decision] Store prices as integer cents, never floats." in second  # now an existing memory
    assert (report.first_seq, report.last_seq) == (4, 5)
    assert [r[:4] for r in extraction_rows(store)] == [(1, 3, "llm", "ok"), (4, 5, "llm", "ok")]


def test_rerun_after_a_crash_before_the_extraction_row_does_not_duplicate(store: Store) -> None:
    with ScriptedLLM(lambda body: Reply(answer(CENTS, GOTCHA))) as llm:
        provider = OpenAICompatible(llm.base_url, "m")
        first = extract_session(store, SESSION, session_turns(), provider=provider)
        ids = [m["id"] for m in stored_memories(store)]
        store.db.conn.execute("DELETE FROM extractions")  # the process died before writing the span's row
        rerun = extract_session(store, SESSION, session_turns(), provider=provider)
    assert [m["id"] for m in stored_memories(store)] == ids
    assert rerun.created_ids == [] and sorted(rerun.duplicate_ids) == sorted(first.created_ids)
    assert extraction_rows(store) == [(1, 3, "llm", "ok", 0)]


def test_secrets_in_turns_never_reach_the_model(tmp_path: Path) -> None:
    store = open_store(tmp_path / "shop", compress_tools=True)
    openai_key = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY"
    aws_key = "AKIA" + "Q3EXAMPLE7KEY4ZZ"
    turns = [
        turn(1, f"Use the key {openai_key} for the API. <private>My bank PIN is 4321.</private> Add a cart."),
        turn(
            2,
            "Deploy it.",
            ("Deployed with the staging credentials. <private>internal hostname vault-7.corp</private>",),
            (
                bash(
                    "psql postgres://admin:hunter2secret@db.local/shop -c 'select 1'",
                    f"AWS_ACCESS_KEY_ID={aws_key}\nok",
                ),
                bash("./deploy.sh", f"error: token {openai_key} rejected\nexit code 1"),
            ),
        ),
    ]

    def handler(body: dict[str, Any]) -> Reply:
        if "describe one tool call" in body["messages"][0]["content"]:
            return Reply(f"Ran a command with key {openai_key}.")  # a model repeating a secret gets scrubbed too
        return Reply(answer(CENTS))

    with ScriptedLLM(handler) as llm:
        extract_session(store, SESSION, turns, provider=OpenAICompatible(llm.base_url, "m"))
    sent = json.dumps(llm.requests)
    assert len(llm.requests) == 3  # two tool descriptions and the extraction
    for secret in (openai_key, aws_key, "hunter2secret", "4321", "vault-7.corp", "bank PIN"):
        assert secret not in sent
    assert "[REDACTED:openai]" in sent and "[REDACTED:url_password]" in sent
    store.close()


def test_tool_compression_by_the_model_replaces_the_deterministic_sentence(tmp_path: Path) -> None:
    store = open_store(tmp_path / "shop", compress_tools=True)

    def handler(body: dict[str, Any]) -> Reply:
        if "describe one tool call" in body["messages"][0]["content"]:
            return Reply("Ran the test suite; collection failed on a stale import of Cart. Nothing else ran.")
        return Reply(answer(CENTS))

    with ScriptedLLM(handler) as llm:
        extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    compress = [r for r in llm.requests if "describe one tool call" in r["messages"][0]["content"]]
    assert len(compress) == 2  # the two shell calls; "Edited src/shop/cart.py." needs no model
    assert "Tool: bash" in user_prompt(compress[0]) and "ImportError" in user_prompt(compress[0])
    extraction = user_prompt(llm.requests[-1])
    assert "Tool: Ran the test suite; collection failed on a stale import of Cart. Nothing else ran." in extraction
    assert "Tool: Edited src/shop/cart.py." in extraction
    assert sorted({p for _, _, p, *_ in spend(store)}) == ["compress", "extract"]
    store.close()


# ------------------------------------------------------------------------------------ provider errors
def test_an_unreachable_model_fails_the_span_and_it_is_retried(store: Store) -> None:
    with ScriptedLLM(lambda body: Reply("upstream exploded", status=500)) as llm:
        report = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    assert report.status == "failed" and "HTTP 500: upstream exploded" in report.errors[0]
    assert extraction_rows(store) == [(1, 3, "llm", "failed", 0)] and stored_memories(store) == []
    with ScriptedLLM(Script([Reply(answer(CENTS))])) as llm:
        retry = extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    assert retry.status == "ok" and (retry.first_seq, retry.last_seq) == (1, 3)


def test_after_repeated_failures_the_heuristic_takes_the_span(store: Store) -> None:
    turns = [*session_turns(), turn(4, "We decided to ship the cart behind a feature flag.")]
    with ScriptedLLM(lambda body: Reply("overloaded", status=503)) as llm:
        provider = OpenAICompatible(llm.base_url, "m")
        statuses = [extract_session(store, SESSION, turns, provider=provider).status for _ in range(4)]
    assert statuses == ["failed", "failed", "failed", "ok"] and len(llm.requests) == 3
    assert extraction_rows(store)[-1][2:4] == ("heuristic", "ok")


def test_connection_refused_and_timeouts_are_clear_errors() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LLMError, match=f"cannot reach http://127.0.0.1:{port}/v1/chat/completions"):
        OpenAICompatible(f"http://127.0.0.1:{port}/v1", "m").complete("s", "u", purpose="extract", max_tokens=10)
    release = threading.Event()

    def stuck(body: dict[str, Any]) -> Reply:
        release.wait(10)
        return Reply("late")

    with ScriptedLLM(stuck) as llm:
        try:
            with pytest.raises(LLMError, match=r"no answer within 0.3 s \(llm.timeout\)"):
                OpenAICompatible(llm.base_url, "m", timeout=0.3).complete("s", "u", purpose="extract", max_tokens=10)
        finally:
            release.set()


@pytest.mark.parametrize(
    ("rejected", "formats"),
    [
        ("json_schema", ["json_schema", "json_object", "json_object"]),  # JSON mode without schemas
        ("response_format", ["json_schema", "json_object", None, None]),  # no JSON mode at all
    ],
)
def test_a_server_without_json_schema_or_json_mode_is_asked_again_without_it(
    store: Store, rejected: str, formats: list[str | None]
) -> None:
    def handler(body: dict[str, Any]) -> Reply:
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema" or (kind and rejected == "response_format"):
            return Reply(f"{rejected} is not supported by this server", status=400)
        return Reply(answer(CENTS))

    with ScriptedLLM(handler) as llm:
        provider = OpenAICompatible(llm.base_url, "m")
        extract_session(store, SESSION, session_turns(), provider=provider)
        provider.complete("s", "u", purpose="extract", max_tokens=10, json_output=True, schema=answer_schema())
    assert [(r.get("response_format") or {}).get("type") for r in llm.requests] == formats
    assert CENTS["text"] in [m["text"] for m in stored_memories(store)]


# ---------------------------------------------------------------------------------------- prompts
def test_a_missing_prompt_file_fails_at_construction(store: Store, tmp_path: Path) -> None:
    assert Prompts.load().extraction_user.count("{transcript}") == 1  # the packaged files load
    prompts = tmp_path / "prompts"
    shutil.copytree(PROMPTS_DIR, prompts)
    (prompts / "compression_system.txt").unlink()
    with pytest.raises(PromptFileError, match=r"missing: .*compression_system\.txt"):
        Extractor(store, None, prompts_dir=prompts)
    (prompts / "compression_system.txt").write_text("   \n", encoding="utf-8")
    with pytest.raises(PromptFileError, match="empty"):
        Extractor(store, None, prompts_dir=prompts)
    (prompts / "compression_system.txt").write_text("Describe the tool call.\n", encoding="utf-8")
    (prompts / "extraction_user.txt").write_text("Transcript:\n{transcript}\n", encoding="utf-8")
    with pytest.raises(PromptFileError, match=r"extraction_user\.txt has no \{existing_memories\} placeholder"):
        Extractor(store, None, prompts_dir=prompts)


# ----------------------------------------------------------------------------------- configuration
def test_provider_from_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert provider_from_config(LLMConfig()) is None
    with pytest.raises(InvalidInput, match="unknown provider 'gpt'"):
        provider_from_config(LLMConfig(provider="gpt"))
    with pytest.raises(InvalidInput, match=r"llm\.base_url is required"):
        provider_from_config(LLMConfig(provider="openai", model="m"))
    with pytest.raises(InvalidInput, match="must be an http"):
        provider_from_config(LLMConfig(provider="openai", base_url="localhost:11434", model="m"))
    with pytest.raises(InvalidInput, match=r"llm\.model is required"):
        provider_from_config(LLMConfig(provider="openai", base_url="http://127.0.0.1:11434/v1"))
    monkeypatch.delenv("CM_TEST_KEY", raising=False)
    with pytest.raises(InvalidInput, match="CM_TEST_KEY, which is not set"):
        provider_from_config(LLMConfig(provider="openai", base_url="http://x/v1", model="m", api_key_env="CM_TEST_KEY"))
    monkeypatch.setenv("CM_TEST_KEY", "sk-test-" + "k" * 30)
    provider = provider_from_config(
        LLMConfig(provider="openai", base_url="http://x/v1/", model="m", api_key_env="CM_TEST_KEY")
    )
    assert isinstance(provider, OpenAICompatible) and provider.url == "http://x/v1/chat/completions"
    assert "sk-test" not in repr(provider)
    with pytest.raises(InvalidInput, match=r"llm\.timeout must be positive"):
        provider_from_config(LLMConfig(provider="openai", base_url="http://x/v1", model="m", timeout=0))
    for kind, key in (("opencode", "opencode_bin"), ("claude", "claude_bin"), ("codex", "codex_bin")):
        missing = LLMConfig(provider=kind, **{key: str(tmp_path / f"no-{kind}")})
        with pytest.raises(InvalidInput, match=rf"config llm\.{key}: .* is not an executable on PATH \(install "):
            provider_from_config(missing)


def test_a_model_memory_that_asks_or_narrates_is_not_stored(store: Store) -> None:
    # the model's own words are held to the rules' mood (text.mood): a statement, never a question or a step told
    asks = memory("should prices be stored as cents", "decision", turn=1)
    narrates = memory("Now I'll read the models and then run the tests.", "fact", turn=1)
    with ScriptedLLM(Script([Reply(answer(CENTS, asks, narrates))])) as llm:
        extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "small-model"))
    texts = {m["text"] for m in stored_memories(store)}
    assert CENTS["text"] in texts
    assert asks["text"] not in texts and narrates["text"] not in texts


def test_a_model_memory_worded_as_a_gerund_phrase_is_stored(store: Store) -> None:
    # a model summarises a convention as a phrase ("Rounding money half-even …"): its own wording, no step under way
    # of the assistant's; only the plan of a next step ("Now I'll …") tells nothing
    rounding = memory(
        "Rounding money half-even in the invoice module, as the accountants require.", "convention", turn=1
    )
    with ScriptedLLM(Script([Reply(answer(CENTS, rounding))])) as llm:
        extract_session(store, SESSION, session_turns(), provider=OpenAICompatible(llm.base_url, "small-model"))
    assert rounding["text"] in {m["text"] for m in stored_memories(store)}
