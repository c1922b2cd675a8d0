"""A user's statement keeps its mood (text.mood) however it is worded: terse, in non-native English, imperative. A
statement read as a question or a printed line is dropped from every category, so these must state. The sentences
are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

import pytest

from codememory.extract.candidate import USER, Candidate
from codememory.extract.heuristic import in_a_memory_s_mood
from codememory.text.mood import asks, logged, mood, standing_instruction

USER_STATEMENTS = [
    "Would rather use httpx than requests.",  # a preference with its subject dropped
    "Has to be UTC everywhere.",
    "Has to run on Python 3.9.",
    "Should always use pnpm, not npm.",
    "Should still run ruff before commit.",
    "Will always be deployed from main.",
    "Don't you ever commit .env files.",  # emphatic imperative, not a question
    "settings.py:40 must stay False in prod.",  # a file and line named in prose, not a compiler's line
    "at least (for now) we stay on postgres 14.",  # lower case, not a stack frame
]


@pytest.mark.parametrize("sentence", USER_STATEMENTS)
def test_a_users_terse_statement_states(sentence: str) -> None:
    assert mood(sentence) == "statement"
    assert in_a_memory_s_mood(Candidate(sentence, "convention", 0.7, 1, said_by=USER))


@pytest.mark.parametrize(
    "sentence",
    ["should invoices be numbered per year", "can users get a refund", "Do you ever see this error"],
)
def test_a_bare_question_still_asks(sentence: str) -> None:
    assert asks(sentence)


@pytest.mark.parametrize(
    "line",
    [
        "src/app.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.",
        "    at com.acme.billing.Invoice.total(Invoice.java:42)",
        "    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
    ],
)
def test_a_compiler_location_or_a_stack_frame_is_still_printed(line: str) -> None:
    assert logged(line)


STANDING_REQUESTS = [
    ("Can you always use UTC in the logs.", "always use UTC in the logs"),
    ("Could you never touch the generated files, please.", "never touch the generated files"),
    ("Can you always run ruff before committing?", "always run ruff before committing"),
    ("Ok, would you please make sure the fixtures stay small?", "make sure the fixtures stay small"),
    ("Will you use tabs in the makefiles from now on?", "use tabs in the makefiles from now on"),
]


@pytest.mark.parametrize(("sentence", "instruction"), STANDING_REQUESTS)
def test_a_polite_request_for_a_standing_rule_instructs(sentence: str, instruction: str) -> None:
    assert mood(sentence) == "statement" and not asks(sentence)
    assert standing_instruction(sentence) == instruction


@pytest.mark.parametrize(
    "sentence",
    [
        "can you check why the build fails?",
        "could it be the cache?",
        "Can you check why it never finishes?",  # the rule word belongs to what is asked about
        "Could you look at the flaky test",
        "should we always use tabs in the makefiles",  # asks about a rule, sets none
    ],
)
def test_a_real_question_still_asks(sentence: str) -> None:
    assert asks(sentence) and mood(sentence) == "question"
    assert standing_instruction(sentence) is None


@pytest.mark.parametrize(
    "sentence",
    [
        "WARNING: never run migrations on prod without a backup.",
        "warning: dont use sqlite for the tests",
        "Careful: always pin the terraform provider.",
        "Note - do not edit the vendored code.",
    ],
)
def test_a_users_own_warning_in_a_log_prefix_states(sentence: str) -> None:
    assert not logged(sentence) and mood(sentence) == "statement"


@pytest.mark.parametrize(
    "line",
    [
        "WARNING: 3 tests skipped",
        "warning: unused variable `x`",
        "ERROR: connection refused",
        "2025-10-02 08:14:55 WARN never retry a failed payment",  # a timestamped record is printed, whatever it says
    ],
)
def test_a_printed_warning_is_still_a_log_line(line: str) -> None:
    assert logged(line) and mood(line) == "log"
