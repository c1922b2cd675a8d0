"""Extraction without a model: the rules on realistic turns (and what they must leave alone), the compact
transcript, and `extract_session` into a real store (resume, crash re-run, privacy)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import Store
from codememory.capture.turns import SessionInfo, ToolCall, Turn
from codememory.extract import Todo, extract_session, heuristic_candidates
from codememory.extract.candidate import Candidate
from codememory.extract.compress import compact_transcript, describe_tool, split_windows
from codememory.extract.gotchas import command_key
from support.extraction import ROOT, SESSION, bash, edit, extraction_rows, stored_memories, turn

PYTEST_IMPORT_ERROR = """\
============================= test session starts ==============================
collected 0 items / 1 error
==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_cart.py ______________________
ImportError while importing test module '/home/dev/shop/tests/test_cart.py'.
Traceback:
tests/test_cart.py:3: in <module>
    from shop.cart import Cart
E   ImportError: cannot import name 'Cart' from 'shop.cart' (/home/dev/shop/src/shop/cart.py)
=========================== short test summary info ============================
ERROR tests/test_cart.py
=============================== 1 error in 0.12s ===============================
"""
PYTEST_OK = "........................                                   [100%]\n24 passed in 0.41s\n"
NPM_FAIL = """\
> shop-web@1.0.0 test
> vitest run

 FAIL  src/cart.test.ts > cart > sums prices
AssertionError: expected 1999 to be 2000
 Test Files  1 failed (1)
      Tests  3 failed | 9 passed (12)
"""


def write(path: str) -> ToolCall:
    return ToolCall("write", "w", "completed", {"filePath": f"{ROOT}/{path}", "content": "x = 1\n"}, "ok")


def read(path: str) -> ToolCall:
    return ToolCall("read", "r", "completed", {"filePath": f"{ROOT}/{path}"}, "1: import os\n")


def texts(candidates: list[Candidate], category: str | None = None) -> list[str]:
    return [c.text for c in candidates if category is None or c.category == category]


def only(candidates: list[Candidate], category: str) -> Candidate:
    found = [c for c in candidates if c.category == category]
    assert len(found) == 1, [(c.category, c.text) for c in candidates]
    return found[0]


# ------------------------------------------------------------------------------------------ rules
def test_remember_notes_are_kept_verbatim_with_tags() -> None:
    turns = [turn(1, "Please fix the build.\n\n*Remember*: the staging database is reset every Sunday night")]
    note = only(heuristic_candidates(turns, SESSION), "note")
    assert note.text == "the staging database is reset every Sunday night"
    assert note.rule == "remember" and note.seq == 1 and note.importance >= 0.8


def test_remember_note_that_states_a_decision_is_a_decision() -> None:
    turns = [turn(1, "ok", ("*Remember*: we decided to deploy with Docker Compose, not Kubernetes",))]
    found = heuristic_candidates(turns, SESSION)
    assert [(c.category, c.rule) for c in found] == [("decision", "remember")]
    assert "docker" in found[0].tags


def test_a_decision_in_the_same_paragraph_as_a_note_is_kept() -> None:
    text = "We decided to keep rate limiter counters in Redis, not Memcached. *Remember*: limits are per API key."
    found = heuristic_candidates([turn(1, text)], SESSION)
    assert only(found, "note").text == "limits are per API key."
    assert only(found, "decision").text.startswith("We decided to keep rate limiter counters in Redis")


def test_explicit_decisions() -> None:
    turns = [
        turn(1, "We decided to keep prices in integer cents, never floats."),
        turn(2, "OK, let's go with FastAPI for the admin API."),
        turn(3, "Let's use SQLite."),
    ]
    found = heuristic_candidates(turns, SESSION)
    assert texts(found, "decision") == [
        "We decided to keep prices in integer cents, never floats.",
        "Let's go with FastAPI for the admin API.",
        "Let's use SQLite.",
    ]
    assert [c.seq for c in found] == [1, 2, 3]
    assert "fastapi" in found[1].entities


def test_use_x_instead_of_y_is_one_decision_naming_the_rejected_option_and_the_reason() -> None:
    turns = [turn(4, "Use pytest instead of unittest because fixtures are simpler.")]
    found = heuristic_candidates(turns, SESSION)
    assert [(c.category, c.text, c.seq) for c in found] == [
        ("decision", "Use pytest instead of unittest because fixtures are simpler.", 4)
    ]
    assert found[0].importance >= 0.8 and {"pytest", "unittest"} <= set(found[0].entities)


def test_rejected_alternatives() -> None:
    turns = [
        turn(1, "Don't use mocks for the store tests, they hid a locking bug last time."),
        turn(2, "Avoid global state in the daemon."),
        turn(3, "Celery is not an option here."),
        turn(4, "We decided against using Redis for the session cache."),
    ]
    assert texts(heuristic_candidates(turns, SESSION), "rejected_alternative") == [
        "Don't use mocks for the store tests, they hid a locking bug last time.",
        "Avoid global state in the daemon.",
        "Celery is not an option here.",
        "We decided against using Redis for the session cache.",
    ]


def test_conventions_and_preferences() -> None:
    turns = [
        turn(1, "Always run ruff format before committing.\nNever commit the .env file."),
        turn(2, "From now on, always add type hints to public functions."),
        turn(3, "I prefer small focused commits. Prefer composition over inheritance."),
    ]
    found = heuristic_candidates(turns, SESSION)
    assert texts(found, "convention") == [
        "Always run ruff format before committing.",
        "Never commit the .env file.",
        "From now on, always add type hints to public functions.",
        "Prefer composition over inheritance.",
    ]
    assert texts(found, "preference") == ["I prefer small focused commits."]


def test_gotcha_is_an_error_and_the_explanation_in_the_next_turn() -> None:
    turns = [
        turn(
            1,
            "Add a Cart class.",
            ("Running the tests.",),
            (read("src/shop/models.py"), bash("uv run pytest -q", PYTEST_IMPORT_ERROR)),
        ),
        turn(
            2,
            "Fix the import.",
            ("The problem was that `Cart` was renamed to `ShoppingCart` in the refactor.",),
            (edit("src/shop/cart.py"), bash("uv run pytest -q", PYTEST_OK)),
            ("src/shop/cart.py",),
        ),
    ]
    gotcha = only(heuristic_candidates(turns, SESSION), "gotcha")
    # the kind of error, never its text: a tool's output is not ours to copy into memory
    assert gotcha.text == (
        "The problem was that `Cart` was renamed to `ShoppingCart` in the refactor. (`pytest` failed (ImportError).)"
    )
    assert gotcha.seq == 1 and gotcha.said_by == "assistant_accepted"  # explained, and the user carried on
    assert "ImportError" in gotcha.entities


def test_gotcha_fixed_by_a_command_in_the_same_turn() -> None:
    tools = (
        bash("npm test", NPM_FAIL + "\nProcess exited with code 1"),
        bash("npm install decimal.js"),
        bash("npm test", " Tests  12 passed (12)\n"),
    )
    gotcha = only(heuristic_candidates([turn(1, "Run the web tests.", (), tools)], SESSION), "gotcha")
    assert gotcha.text.startswith("`npm test` failed (AssertionError")
    assert "expected 1999" not in gotcha.text and "fixed by running `npm install decimal.js`" in gotcha.text


def test_pending_todos_from_the_agent_list_and_the_text() -> None:
    turns = [
        turn(1, "TODO: add a discount code field"),
        turn(2, "Looks good.", ("Done. We still need to add tests for the checkout flow.",)),
    ]
    todos = [Todo("Wire the cart into the API", "pending", "high"), Todo("Write the cart model", "completed")]
    found = heuristic_candidates(turns, SESSION, todos)
    assert texts(found, "todo") == [
        "TODO: Wire the cart into the API.",
        "TODO: Add a discount code field.",
        "We still need to add tests for the checkout flow.",
    ]
    agent = [c for c in found if c.rule == "agent_todo"]
    assert agent[0].seq == 2 and agent[0].importance > 0.6


def test_assistant_still_need_to_counts_only_at_the_end_of_the_span() -> None:
    turns = [turn(1, "Start.", ("We still need to wire the router.",))] + [turn(i, f"Step {i}.") for i in range(2, 6)]
    assert texts(heuristic_candidates(turns, SESSION), "todo") == []


def test_files_touched_are_not_memories() -> None:
    turns = [
        turn(1, "Add the cart.", (), (write("src/shop/cart.py"), edit("src/shop/models.py")), ("src/shop/cart.py",)),
        turn(
            2, "And tests.", ("Files changed: src/shop/cart.py, tests/test_cart.py.",), (write("tests/test_cart.py"),)
        ),
    ]
    assert heuristic_candidates(turns, SESSION) == []


@pytest.mark.parametrize(
    "text",
    [
        "Should we use Redis instead of Memcached?",
        "What if we used Postgres instead of SQLite",
        "If we switched to Rust instead of Go, would it be faster?",
        "Maybe we should use Postgres.",
        "We could go with Kafka, not sure yet.",
        "We haven't decided on the queue yet.",
        "Let's go with that.",
        "Let's use grep to find the bug.",
        "It always fails on CI.",
        "I never liked that approach.",
        "To avoid the race, I added a lock.",
        "Please fix the failing test.",
        "```python\n# always use this helper\nlet_us_go_with = 1\n```",
        "> Never use print in production code",
        "    we decided to use tabs  # an indented code line",
        "E   AssertionError: we decided to use X instead of Y",
    ],
)
def test_statements_that_are_not_memories(text: str) -> None:
    assert heuristic_candidates([turn(1, text)], SESSION) == []


@pytest.mark.parametrize(
    "text",
    [
        "I'll use grep to find the price fields.",
        "Let's go with SQLite for now.",
        "You should always validate input.",
        "Don't use the old helper here.",
        "Instead of guessing, I read the file.",
    ],
)
def test_assistant_chatter_is_not_a_memory(text: str) -> None:
    assert heuristic_candidates([turn(1, "go on", (text,))], SESSION) == []


def test_assistant_explicit_decisions_and_conventions_count_with_less_weight() -> None:
    said = ("We decided to keep the API synchronous.", "The project convention is to use snake_case for file names.")
    found = heuristic_candidates([turn(1, "ok", said), turn(2, "Fine, next the docs.")], SESSION)
    assert [(c.category, c.importance, c.said_by) for c in found] == [
        ("decision", 0.65, "assistant_accepted"),
        ("convention", 0.6, "assistant_accepted"),
    ]


def test_a_failure_without_a_fix_or_a_retry_without_a_change_is_no_gotcha() -> None:
    never_fixed = [turn(1, "Run tests.", (), (bash("pytest", PYTEST_IMPORT_ERROR),)), turn(2, "Never mind.")]
    flaky = [turn(1, "Run tests.", (), (bash("pytest", PYTEST_IMPORT_ERROR), bash("pytest", PYTEST_OK)))]
    too_late = [
        turn(1, "Run tests.", (), (bash("pytest", PYTEST_IMPORT_ERROR),)),
        turn(2, "Something else."),
        turn(3, "Again.", (), (edit("src/shop/cart.py"), bash("pytest", PYTEST_OK))),
    ]
    for turns in (never_fixed, flaky, too_late):
        assert texts(heuristic_candidates(turns, SESSION), "gotcha") == []


def test_command_key() -> None:
    assert command_key("cd /x && uv run pytest -x tests/a.py") == "pytest"
    assert command_key("FOO=1 python -m pytest") == "pytest"
    assert command_key("npm test -- --watch=false") == "npm test"
    assert command_key("npm run lint") == "npm run"
    assert command_key("cargo test --all") == "cargo test"


# ------------------------------------------------------------------------------------- transcript
def test_tool_calls_are_compressed_to_one_sentence() -> None:
    assert describe_tool(read("README.md"), ROOT) == "Read README.md."
    assert describe_tool(write("src/auth.py"), ROOT) == "Wrote src/auth.py."
    assert describe_tool(edit("src/auth.py"), ROOT) == "Edited src/auth.py."
    ran = describe_tool(bash("npm test", NPM_FAIL + "exit code 1"), ROOT)
    assert ran.startswith("Ran `npm test` (exit 1: ") and "AssertionError: expected 1999 to be 2000" in ran
    assert describe_tool(bash("uv run pytest -q", PYTEST_OK), ROOT) == "Ran `uv run pytest -q` (24 passed)."
    failed = ToolCall("bash", "x", "error", {"command": "make"}, "", error="make: *** No rule to make target 'all'")
    assert describe_tool(failed, ROOT) == "Ran `make` (failed: make: *** No rule to make target 'all')."
    bad_edit = ToolCall("edit", "x", "error", {"filePath": f"{ROOT}/a.py"}, "", error="oldString not found")
    assert describe_tool(bad_edit, ROOT) == "Failed to edit a.py: oldString not found."
    grep = ToolCall("grep", "g", "completed", {"pattern": "TODO", "path": ROOT}, "3 matches")
    assert describe_tool(grep, ROOT) == "Searched for `TODO`."


def test_transcript_keeps_text_verbatim_scrubs_secrets_and_splits_into_windows() -> None:
    secret = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY"
    turns = [
        turn(1, f"Use this key: {secret} <private>my home address</private> and add a cart."),
        turn(
            2, "Next.", ("Done: added src/shop/cart.py.",), (bash(f"curl -H 'Authorization: Bearer {secret}' x", "ok"),)
        ),
    ] + [turn(i, "x" * 400) for i in range(3, 9)]
    rendered = compact_transcript(turns, root=ROOT)
    text = "\n".join(r.text for r in rendered)
    assert secret not in text and "home address" not in text
    assert "[turn 1]\nUser: Use this key: [REDACTED:openai]" in text
    assert "Assistant: Done: added src/shop/cart.py." in text
    windows = split_windows(rendered, max_tokens=250)
    assert len(windows) > 1 and windows[0].first_seq == 1
    assert all(w.tokens <= 250 for w in windows)
    assert [s for w in windows for s in w.seqs] == list(range(1, 9))
    long_turn = compact_transcript([turn(1, "y" * 10_000)])
    (only_window,) = split_windows(long_turn, max_tokens=100)
    assert only_window.tokens <= 100 and "characters cut" in only_window.text


# --------------------------------------------------------------------------------- into the store
def realistic_session() -> list[Turn]:
    return [
        turn(
            1,
            "Let's add a cart. Use pytest instead of unittest because fixtures are simpler.\n\n"
            "*Remember*: the staging database is reset every Sunday night",
            ("I'll start by reading the models.",),
            (read("src/shop/models.py"), bash("uv run pytest -q", PYTEST_IMPORT_ERROR)),
        ),
        turn(
            2,
            "Fix the import.",
            ("The problem was that `Cart` was renamed to `ShoppingCart` in the refactor.",),
            (edit("src/shop/cart.py"), bash("uv run pytest -q", PYTEST_OK)),
            ("src/shop/cart.py",),
        ),
        turn(3, "Always run ruff format before committing.", ("Noted.",)),
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    (tmp_path / "shop").mkdir()
    s, _ = Store.init(tmp_path / "shop")
    yield s
    s.close()


def test_extract_session_stores_memories_with_source_and_records_the_span(store: Store) -> None:
    report = extract_session(store, SESSION, realistic_session(), provider=None)
    assert report.status == "ok" and (report.first_seq, report.last_seq) == (1, 3)
    stored = stored_memories(store)
    by_category = {m["category"]: m for m in stored}
    assert set(by_category) == {"note", "decision", "gotcha", "convention"}
    # the source names the turn and who said it (the user; the assistant's lesson from a failure, accepted)
    assert by_category["decision"]["source"] == "opencode session:ses_shop1 turn:1 said_by:user"
    assert by_category["gotcha"]["source"] == "opencode session:ses_shop1 turn:1 said_by:assistant_accepted"
    assert by_category["convention"]["source"] == "opencode session:ses_shop1 turn:3 said_by:user"
    assert {m["entered_by"] for m in stored} == {"codememory-extract:heuristic"}
    assert len(report.created_ids) == len(stored) == 4
    assert extraction_rows(store) == [(1, 3, "heuristic", "ok", 4)]
    assert report.to_dict()["created"] == 4 and report.to_dict()["spans"][0]["method"] == "heuristic"
    hits = store.search("staging database").hits
    assert hits and hits[0].memory.text == "the staging database is reset every Sunday night"


def test_resumed_session_extracts_only_its_new_turns(store: Store) -> None:
    first = realistic_session()
    extract_session(store, SESSION, first, provider=None)
    again = extract_session(store, SESSION, first, provider=None)
    assert again.status == "nothing_new" and again.created_ids == [] and len(extraction_rows(store)) == 1
    resumed = [*first, turn(4, "We decided to ship the cart behind a feature flag."), turn(5, "Thanks.")]
    report = extract_session(store, SESSION, resumed, provider=None)
    assert (report.first_seq, report.last_seq) == (4, 5)
    assert [m["text"] for m in stored_memories(store)][-1] == "We decided to ship the cart behind a feature flag."
    assert extraction_rows(store)[-1] == (4, 5, "heuristic", "ok", 1)


def test_an_unfinished_turn_and_everything_after_it_wait(store: Store) -> None:
    turns = [turn(1, "We decided to use Stripe for payments."), turn(2, "Never log card numbers.", completed=False)]
    report = extract_session(store, SESSION, turns, provider=None)
    assert (report.first_seq, report.last_seq) == (1, 1)
    later = extract_session(store, SESSION, [turns[0], turn(2, "Never log card numbers.")], provider=None)
    assert (later.first_seq, later.last_seq) == (2, 2) and later.status == "ok"


def test_a_span_with_nothing_durable_is_recorded_as_empty(store: Store) -> None:
    report = extract_session(store, SESSION, [turn(1, "Hi, can you look at the README?", ("Sure.",))], provider=None)
    assert report.status == "empty" and extraction_rows(store) == [(1, 1, "heuristic", "empty", 0)]


def test_rerun_after_a_crash_before_the_extraction_row_does_not_duplicate(store: Store) -> None:
    turns = realistic_session()
    first = extract_session(store, SESSION, turns, provider=None)
    before = stored_memories(store)
    # The state a crash leaves between the last memory's transaction and the extraction row's.
    store.db.conn.execute("DELETE FROM extractions")
    rerun = extract_session(store, SESSION, turns, provider=None)
    assert [m["id"] for m in stored_memories(store)] == [m["id"] for m in before]
    assert rerun.created_ids == [] and sorted(rerun.duplicate_ids) == sorted(first.created_ids)
    assert extraction_rows(store) == [(1, 3, "heuristic", "ok", 0)]


def test_remember_note_already_stored_by_the_hook_is_a_duplicate(store: Store) -> None:
    text = "Deploy now.\n\n*Remember*: production deploys need the VPN"
    (hooked,) = store.remember_scan(text, entered_by="claude-code")
    report = extract_session(store, SESSION, [turn(1, text)], provider=None)
    assert report.duplicate_ids == [hooked.memory.id] and report.created_ids == []


def test_secrets_and_private_spans_never_reach_the_store(store: Store, tmp_path: Path) -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    turns = [
        turn(
            1,
            f"We decided to authenticate with the token {key}. <private>Our client is ACME Corp.</private>",
            (),
            (bash("pytest", PYTEST_IMPORT_ERROR + f"\nGITHUB_TOKEN={key}"),),
        ),
        turn(2, "Fix it.", (), (edit("src/shop/cart.py"), bash("pytest", PYTEST_OK))),
    ]
    extract_session(store, SESSION, turns, provider=None)
    stored = " ".join(str(m["text"]) for m in stored_memories(store))
    assert "decided to authenticate" in stored and "[REDACTED:github]" in stored
    store.close()
    raw = b"".join(p.read_bytes() for p in (tmp_path / "shop" / ".codememory").glob("memory.db*"))
    assert key.encode() not in raw and b"ACME" not in raw


def test_other_sessions_turns_are_ignored(store: Store) -> None:
    turns = [turn(1, "We decided to use Stripe."), turn(2, "We decided to use Adyen.", session_id="ses_other")]
    report = extract_session(store, SESSION, turns, provider=None)
    assert [m["text"] for m in stored_memories(store)] == ["We decided to use Stripe."]
    assert report.last_seq == 1


def test_extraction_log_is_kept_per_session(store: Store) -> None:
    other = SessionInfo("opencode", "ses_other", ROOT, None, "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z")
    extract_session(store, SESSION, [turn(1, "We decided to use Stripe.")], provider=None)
    report = extract_session(store, other, [turn(1, "We decided to use Adyen.", session_id="ses_other")], provider=None)
    assert report.status == "ok"
    rows = (
        sqlite3.connect(store.store_path).execute("SELECT session_id, last_seq FROM extractions ORDER BY id").fetchall()
    )
    assert rows == [("ses_shop1", 1), ("ses_other", 1)]
