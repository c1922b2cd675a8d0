"""A user's statement keeps its mood (text.mood) however it is worded: terse, in non-native English, imperative. A
statement read as a question or a printed line is dropped from every category, so these must state. The sentences
are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

import pytest

from codememory.extract.candidate import USER, Candidate
from codememory.extract.heuristic import in_a_memory_s_mood
from codememory.text.mood import asks, logged, mood

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
