"""A user's rule put as a condition in a question's form, without its "?" ("When is month end, no schema changes.",
"Should the deploy fail, roll back the release."), is the user's rule, kept; the same form that asks is not. The
sentences are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

import pytest

from codememory.extract.candidate import USER
from codememory.extract.heuristic import heuristic_candidates
from codememory.extract.rules import classify
from support.extraction import turn


@pytest.mark.parametrize(
    "sentence",
    [
        "When are the nightly jobs running, don't restart the database.",
        "Where is possible, never block the event loop in the handlers.",
        "Are the fixtures stale, do not trust the snapshot tests.",
        "When is a release week, we must freeze the main branch.",
    ],
)
def test_a_conditional_rule_in_a_questions_form_is_a_convention(sentence: str) -> None:
    assert [s.category for s in classify(sentence, role="user")] == ["convention"]


@pytest.mark.parametrize(
    "sentence",
    ["When is the demo, do you remember", "Is the cache warm, or should I wait", "Should I bump the version, no need"],
)
def test_the_same_form_that_asks_is_no_rule(sentence: str) -> None:
    assert classify(sentence, role="user") == []


def test_a_terse_conditional_rule_comes_back_as_the_users() -> None:
    said = "Ok the exporter works. When are the nightly jobs running, don't restart the database."
    found = heuristic_candidates([turn(1, said, ("Noted.",))])
    assert [(c.said_by, c.text) for c in found if "restart" in c.text] == [
        (USER, "When are the nightly jobs running, don't restart the database.")
    ]
