"""What a lesson from a failure says in our words: the kind of error, never the runner's count of failed tests,
and the explanation the assistant gave right after the failing call, read with its code spans as words. Stored
through the rules into a real store. Positives and negatives written for these tests; none of the sentences is in
the extraction benchmark's sets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codememory import Store
from codememory.capture.turns import Turn
from codememory.extract import extract_session
from support.extraction import SESSION, bash, edit, stored_memories, turn

PYTEST_FAIL = (
    "FF.\n=== FAILURES ===\nE   ValueError: could not convert string to float: '3,5'\n2 failed, 1 passed in 0.08s\n"
)
LINT_FAIL = "src/handler.ts\n  14:5  error  Unexpected console statement  no-console\n\n1 problem (1 error)\n"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    (tmp_path / "shop").mkdir()
    s, _ = Store.init(tmp_path / "shop")
    yield s
    s.close()


def lessons(store: Store, *turns: Turn) -> list[str]:
    extract_session(store, SESSION, list(turns), provider=None)
    return [m["text"] for m in stored_memories(store) if m["category"] == "gotcha"]


def ordered(t: Turn, text_calls: tuple[int, ...]) -> Turn:
    """The turn with each text placed after the tool calls before it, as the OpenCode reader records them."""
    return replace(t, text_calls=text_calls)


def test_a_lesson_names_the_kind_of_error_and_not_how_many_tests_failed(store: Store) -> None:
    explained = (
        "float() fails on every weight because the scale's export writes decimal commas (`3,5`). "
        "I'll parse the weights with the comma turned into a point."
    )
    got = lessons(
        store,
        turn(1, "Load the weights.", (explained,), (bash("pytest -q", PYTEST_FAIL + "exit code 1"), edit("w.py"))),
    )
    assert len(got) == 1 and "decimal commas" in got[0], got
    assert got[0].endswith("(`pytest` failed (ValueError).)"), got
    assert "2 failed" not in got[0] and "1 passed" not in got[0]


def test_a_failure_with_no_kind_of_error_says_its_exit_status_not_the_count(store: Store) -> None:
    explained = "The fixture reads the clock in local time, because the helper was never set up with a zone."
    got = lessons(
        store,
        turn(
            1,
            "Run the tests.",
            (explained,),
            (
                bash(
                    "pytest -q",
                    "F\nmidnight rollover: local clock off by one hour\n1 failed in 0.02s\nexit code 1",
                    "error",
                ),
                edit("tests/helpers.py"),  # the fix: a lesson says what fixed it
            ),
        ),
    )
    assert len(got) == 1 and got[0].endswith("(`pytest` failed (exit code 1).)"), got


def test_a_code_span_after_so_is_the_consequence_the_failure_shows(store: Store) -> None:
    said = (
        "This repo's lint config makes no-console an error, so `console.log` in the handler fails the lint.",
        "Removed it; the lint is clean.",
    )
    failing = bash("npx eslint src", LINT_FAIL + "exit code 1", "error")
    got = lessons(
        store,
        ordered(turn(1, "Add logging to the handler.", said, (failing, edit("src/handler.ts"))), (1, 2)),
    )
    assert len(got) == 1 and "makes no-console an error" in got[0], got


def test_a_colon_inside_a_code_span_is_no_explanation(store: Store) -> None:
    said = ("The handler now prints `console: ready` on start.", "Removed it; the lint is clean.")
    failing = bash("npx eslint src", LINT_FAIL + "exit code 1", "error")
    got = lessons(
        store,
        ordered(turn(1, "Add logging to the handler.", said, (failing, edit("src/handler.ts"))), (1, 2)),
    )
    assert got == [], got
