"""What a final answer states of a memory (text/answer_cues.py): its values, not the question's words."""

from __future__ import annotations

from codememory.text.answer_cues import prose_values, stated_values, states_the_memory
from codememory.text.usage_cues import memory_terms

SCHEDULE = (
    "The daily_trips schedule was moved to 05:30 Europe/Oslo (cron '30 5 * * *'); the operator's export lands first."
)


def test_times_of_day_and_quoted_literals_are_values_of_prose() -> None:
    assert prose_values(SCHEDULE) == ("05:30", "30 5 * * *")
    assert prose_values("The operator's export, the team's job: no quotes here.") == ()
    assert prose_values("Filter on vehicle_type_id 'ebike'.") == ()  # a lone quoted word is a word
    assert prose_values("Fails with 'Duplicate row detected during DML action'.") == (
        "Duplicate row detected during DML action",
    )
    assert prose_values("at 12:05:30 or in 2026-11-28T05:30:00") == ()


def test_an_answer_states_the_values_the_question_did_not_hold() -> None:
    terms = memory_terms(SCHEDULE, [("daily_trips", "identifier")])  # the store's entity of it
    answer = "At 05:30 (cron '30 5 * * *'), once the export has landed; see daily_trips."
    assert stated_values(terms, answer, ["When does the job run?"]) == ["daily_trips", "05:30", "30 5 * * *"]
    assert stated_values(terms, answer, ["Does daily_trips run at 05:30?"]) == ["30 5 * * *"]
    assert states_the_memory(terms, answer, ["Does daily_trips run at 05:30?"]) == []  # one value is not enough


def test_a_value_inside_another_counts_once() -> None:
    terms = memory_terms("Run `make test-db` once, then `make test`.")
    assert stated_values(terms, "Run make test-db first.", []) == ["make test-db"]
    assert states_the_memory(terms, "Run make test-db first.", []) == []


def test_common_words_are_never_values() -> None:
    terms = memory_terms("The export job runs every night and the team checks the report in the morning.")
    assert stated_values(terms, "The export job runs every night; the team checks the report.", []) == []
