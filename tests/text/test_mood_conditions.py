"""text.mood: a condition put in a question's form with the rule it sets, without its "?", is a statement, not a
question ("When is month end, no schema changes.", "Is the pipeline red, no merging."); the same form that goes on
asking after its comma still asks. The sentences are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

import pytest

from codememory.text.mood import asks, mood


@pytest.mark.parametrize(
    "sentence",
    [
        "When is month end, no schema changes.",  # non-native "when is" for "at month end"
        "When are the nightly jobs running, don't restart the db.",
        "Whenever is a release branch, always tag it from CI.",
        "Where is possible, never block the event loop.",
        "Is the pipeline red, no merging to trunk.",  # the inverted conditional
        "Are the fixtures stale, do not trust the snapshot tests.",
        "Should the import fail, make sure the partial rows are deleted.",
        "Does the vendor API time out, we must fall back to the cached prices.",
        "Ok, when is a hotfix, then please avoid touching the migrations.",
        "Is it a weekend, the on-call person has to approve every deploy",
        "Should the deploy fail, roll back the release.",  # the formal inverted conditional with a bare command
        "Should a webhook arrive twice, just drop the second one.",
    ],
)
def test_a_condition_in_a_questions_form_with_its_rule_states(sentence: str) -> None:
    assert not asks(sentence)
    assert mood(sentence) == "statement"


@pytest.mark.parametrize(
    "sentence",
    [
        "When is the demo, do you remember",  # the clause after the comma goes on asking
        "Is the cache warm, or should I wait",
        "When is the invoice run, Monday",
        "Is this the right bucket, no idea",  # "no idea" answers nothing, sets nothing
        "Can we drop the old index, never mind",  # a request or an offer is no condition
        "Could you look at the flaky test, never merge it broken",
        "Should I bump the version, no need",
        "When is month end, no schema changes?",  # with its "?" it asks
        "Where is the staging config",
        "Is the pipeline red again",
        "Should we pin it, the build breaks",  # a person's "should we" asks
        "Should the cache be warm, the tests run faster",  # no command after the comma
    ],
)
def test_a_question_with_a_comma_still_asks(sentence: str) -> None:
    assert asks(sentence)
