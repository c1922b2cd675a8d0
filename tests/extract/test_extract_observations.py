"""Observations and lessons as people say them, extracted into a real store the way `codememory capture` does
(rules, no model): what a value in the data stands for and which encoding a file really has (from the user, or
from the assistant when the user carries on), a lesson from the text between a failure and the rerun that passed,
and a lesson's failure note that never carries the runner's tally. Positives and negatives written for these
tests; none of the sentences is in the extraction benchmark's sets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import Store
from codememory.capture.turns import ToolCall, Turn
from codememory.extract import extract_session
from codememory.extract.rules import classify
from support.extraction import SESSION, stored_memories, turn


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    root = tmp_path / "meter"
    root.mkdir()
    Store.init(root)[0].close()
    with Store.open(root) as s:
        yield s


def stored(store: Store, *turns: Turn) -> list[tuple[str, str, str]]:
    """(category, said_by, text) of every memory the rules store from these turns."""
    extract_session(store, SESSION, list(turns), provider=None)
    out = []
    for m in stored_memories(store):
        who = m["source"].rsplit("said_by:", 1)[-1] if "said_by:" in m["source"] else ""
        out.append((m["category"], who, m["text"]))
    return out


def facts(store: Store, *turns: Turn) -> list[tuple[str, str]]:
    return [(who, text) for category, who, text in stored(store, *turns) if category == "fact"]


# ------------------------------------------------------------------------------- what a value stands for
def test_the_users_word_on_what_a_value_means_is_a_fact(store: Store) -> None:
    said = "Careful with the flow column: -1 in that column means the meter was offline, not zero flow."
    first = turn(1, f"Plot last week's flow per hour. {said}", ("Plotting it per hour.",))
    assert facts(store, first) == [("user", said)]


def test_the_assistants_reading_of_a_sentinel_is_kept_when_the_user_carries_on(store: Store) -> None:
    explained = "On this logger, 9999 is the placeholder it writes when the humidity sensor times out."
    first = turn(1, "Why are there huge spikes in the humidity plot?", (f"{explained} Those rows are not data.",))
    second = turn(2, "ok, leave them out of the averages then")
    assert ("assistant_accepted", explained) in facts(store, first, second)


def test_the_assistants_reading_is_dropped_when_the_user_says_otherwise(store: Store) -> None:
    explained = "On this logger, 9999 is the placeholder it writes when the humidity sensor times out."
    first = turn(1, "Why are there huge spikes in the humidity plot?", (explained,))
    second = turn(2, "no, 9999 is a real reading in the greenhouse, the sensor saturates there")
    assert all("placeholder" not in text for _, text in facts(store, first, second))


def test_a_files_real_encoding_is_a_fact(store: Store) -> None:
    first = turn(1, "the umlauts are garbage. the bank export is cp1252, not utf-8", ("Decoding it as cp1252.",))
    assert [(who, text.lower()) for who, text in facts(store, first)] == [
        ("user", "the bank export is cp1252, not utf-8.")
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "3 failing tests means the build is red.",  # a count, not a value in the data
        "Option 2 means we keep the cache as it is.",
        "This means the import is done.",
        "Does -1 mean the meter was offline?",
        "Both files are UTF-8 now.",
    ],
)
def test_counts_labels_questions_and_reports_are_not_observations(sentence: str) -> None:
    assert [s.rule for s in classify(sentence, role="user")] != ["observation"]
    assert [s.rule for s in classify(sentence, role="assistant")] != ["observation"]


# -------------------------------------------------------------------------------- lessons from failures
def shell(command: str, output: str, exit_code: int, call_id: str) -> ToolCall:
    status = "error" if exit_code else "completed"
    return ToolCall("bash", call_id, status, {"command": command}, output, exit_code=exit_code)


def fix_turn(explanation: str, *, rerun_passes: bool = True) -> Turn:
    """Tests fail, the assistant says something, edits, and runs them again."""
    failing = "E   KeyError: 'Zeit'\nFAILED tests/test_load.py::test_load - KeyError: 'Zeit'\n2 failed in 0.1s"
    calls = (
        shell("pytest -q", failing, 1, "c1"),
        ToolCall("edit", "c2", "completed", {"filePath": "/m/load.py", "oldString": "a", "newString": "b"}, "ok"),
        shell("pytest -q", "2 passed in 0.1s" if rerun_passes else failing, 0 if rerun_passes else 1, "c3"),
    )
    texts = ("Running the tests.", explanation, "Done, the loader reads both exports.")
    return Turn(
        source="opencode",
        session_id="ses_shop1",
        turn_id="msg_001",
        seq=1,
        started_at="2026-11-20T10:01:00.000Z",
        ended_at="2026-11-20T10:01:30.000Z",
        user_text="Load the new meter export too.",
        assistant_texts=texts,
        tool_calls=calls,
        text_calls=(0, 1, 3),
    )


def lessons(store: Store, *turns: Turn) -> list[str]:
    return [text for category, _, text in stored(store, *turns) if category == "gotcha"]


def test_what_the_assistant_said_between_the_failure_and_the_passing_rerun_is_the_lesson(store: Store) -> None:
    said = (
        "The newer firmware names the time column Uhrzeit in its header row and puts the unit on a second line. "
        "I'll read the header from the second line and accept both names."
    )
    (lesson,) = lessons(store, fix_turn(said), turn(2, "great, commit it"))
    assert lesson.startswith("The newer firmware names the time column Uhrzeit")
    assert lesson.endswith("(`pytest` failed (KeyError).)")
    assert "2 failed" not in lesson  # the runner's tally is its output, not part of the lesson


def test_without_a_passing_rerun_or_with_only_a_step_or_a_slip_there_is_no_such_lesson(store: Store) -> None:
    said = "The newer firmware names the time column Uhrzeit in its header row and puts the unit on a second line."
    assert lessons(store, fix_turn(said, rerun_passes=False)) == []
    assert lessons(store, fix_turn("Adding the missing column name to the loader.")) == []
    assert lessons(store, fix_turn("Oops, I forgot to import the loader module in the test file, adding it.")) == []


def test_a_cause_that_ends_on_that_carries_the_sentence_that_says_what_that_is(store: Store) -> None:
    said = (
        "The meter writes its timestamps with a trailing Z and a comma before the milliseconds. "
        "`fromisoformat()` on Python 3.10 can't read that. I'll swap the comma for a dot before parsing."
    )
    (lesson,) = lessons(store, fix_turn(said), turn(2, "ok"))
    assert lesson.startswith("The meter writes its timestamps with a trailing Z")


def test_an_objection_to_the_question_after_an_observation_does_not_drop_it(store: Store) -> None:
    explained = "On this logger, 9999 is the placeholder it writes when the humidity sensor times out."
    first = turn(1, "Why are there huge spikes in the humidity plot?", (f"{explained} Fill the gaps or drop them?",))
    second = turn(2, "no filling. drop them and print how many")
    assert ("assistant_accepted", explained) in facts(store, first, second)


# ----------------------------------------------------------------------------------- findings announced
def test_what_follows_found_it_is_the_lesson_of_the_reported_problem(store: Store) -> None:
    finding = (
        "Found it. The sync job reads the calendar with the server's time zone, which is UTC, so every "
        "event after 23:00 local time lands on the next day. I'll pass the user's zone to the parser. Want a test too?"
    )
    first = turn(1, "evening events are wrong in the app, a day late", (finding,))
    (lesson,) = lessons(store, first, turn(2, "yes add one"))
    assert lesson.startswith("The sync job reads the calendar with the server's time zone")
    assert "Want a test" not in lesson and lesson.endswith(
        "(reported: Evening events are wrong in the app, a day late.)"
    )


def test_an_acknowledgement_or_a_short_finding_is_no_lesson(store: Store) -> None:
    first = turn(1, "only the standard library please", ("Got it: standard library only. Starting on the parser.",))
    second = turn(2, "what was wrong with the export?", ("Found it. A typo.",))
    assert lessons(store, first, second, turn(3, "ok")) == []


def test_a_test_left_behind_by_an_intended_change_is_no_lesson(store: Store) -> None:
    said = "The old test expected the unrounded total of 7, which the new rounding now reports as 10. Updating it."
    assert lessons(store, fix_turn(said)) == []


def test_a_finding_replaces_the_guess_before_it_not_the_point_explained_after_it(store: Store) -> None:
    guess = "The totals might be rounded somewhere before the export, because the cents look off."
    finding = (
        "Found it. The export adds the delivery fee to every line item instead of once per order, so orders "
        "with many items come out far too high."
    )
    later = "Separately, the export totals are wrong for refunds because refunds are stored as positive amounts."
    first = turn(1, "the export totals are wrong for big orders", (guess, finding, later))
    found = lessons(store, first, turn(2, "ok"))
    assert any(text.startswith("The export adds the delivery fee") for text in found), found
    assert not any(text.startswith("The totals might be rounded") for text in found), found
    # the report's explanation said after the finding is another point: its own lesson, with the report's note
    assert any(text.startswith("Separately, the export totals are wrong for refunds") for text in found), found
