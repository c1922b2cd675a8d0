"""The way a thing must be, said with the alternative it is not ("X, not Y"), is the user's standing rule; a
deferral, a hedge, a person or an aside said the same way is not. Stored through the rules into a real store, as
`codememory capture` stores them. Positives and negatives written for these tests; none of the sentences is in
the extraction benchmark's sets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import Store
from codememory.extract import extract_session
from codememory.extract.rules import classify
from support.extraction import SESSION, stored_memories, turn

DONE = "Done: the report is written."


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    (tmp_path / "tides").mkdir()
    s, _ = Store.init(tmp_path / "tides")
    yield s
    s.close()


def stored(store: Store, user: str) -> list[tuple[str, str, str]]:
    extract_session(store, SESSION, [turn(1, user, (DONE,))], provider=None)
    return [(m["category"], m["source"].rsplit("said_by:", 1)[-1], m["text"]) for m in stored_memories(store)]


@pytest.mark.parametrize(
    "user",
    [
        "tide heights in metres with one decimal, not feet",
        "Sort the harbours west to east, not by name.",
        "dates as yyyy-mm-dd in the file names, not the locale's format",
        "The footer links to the club page, not the old forum.",
    ],
)
def test_the_way_it_must_be_and_the_way_it_must_not_is_the_users_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert len(found) == 1, found
    category, who, text = found[0]
    assert category == "convention" and who == "user" and ", not " in text


@pytest.mark.parametrize(
    "user",
    [
        "the harbour list can wait, not now",
        "One more for later, not for this release: a page with the moon phases.",
        "Hm, the column widths look off, not sure why.",
        "the tide table is for Ines, not me",
        "I printed it at the library (the big printer, not the copier) and it looked fine.",
        "Is it sorted by height, not by time?",
        "ok, not bad at all",
    ],
)
def test_a_deferral_a_hedge_a_person_an_aside_or_a_question_is_no_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert not [t for c, _, t in found if c != "todo"], found  # a deferral may be the user's todo, never a rule


def test_only_the_users_words_are_read_as_a_rule() -> None:
    said = "Heights are in metres with one decimal, not feet."
    assert [st.category for st in classify(said, role="user")] == ["convention"]
    assert classify(said, role="assistant") == []  # the assistant describing its output states no rule


# ------------------------------------------------------------------------------ the practice it follows
@pytest.mark.parametrize(
    "user",
    [
        "wind in knots and the direction in degrees, that's how the harbour master reads it",
        "Times in 24h with a leading zero, that's how the club's notice board shows them.",
    ],
)
def test_the_way_a_thing_is_done_with_the_practice_it_follows_is_the_users_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert [(c, who) for c, who, _ in found] == [("convention", "user")], found


@pytest.mark.parametrize(
    "user",
    [
        "we compared the two tables line by line, that's how we found the missing harbour.",
        "The sensor was unplugged for a week, that's what broke the chart.",
        "It crashed on the first run, that's how I noticed.",
        "Is it sorted by height, that's how you did it?",
    ],
)
def test_a_story_said_the_same_way_is_no_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert not [t for c, _, t in found if c in ("convention", "decision", "preference")], found


# ------------------------------------------------------------------------ a thing turned down, with why
@pytest.mark.parametrize(
    "user",
    [
        "no Kafka, the team already runs RabbitMQ and nobody wants a second broker",
        "No mobile app: the club meets in a church hall without any signal.",
    ],
)
def test_no_thing_and_the_reason_is_the_users_turned_down_option(store: Store, user: str) -> None:
    found = stored(store, user)
    assert [(c, who) for c, who, _ in found] == [("rejected_alternative", "user")], found


@pytest.mark.parametrize(
    "user",
    [
        "no worries, take your time with the tide tables",
        "No errors, the import went through this time.",
        "no popup, just a line in the log file",
        "Nah all good, ship it now",
        "No dice, still the same error after the restart",
        "No joy, it still crashes on startup",
        "no sweat, the staging box can wait until monday",
    ],
)
def test_small_talk_a_report_or_an_instead_is_no_turned_down_option(store: Store, user: str) -> None:
    found = stored(store, user)
    assert not [t for c, _, t in found if c == "rejected_alternative"], found


def test_a_ban_list_stays_one_standing_rule() -> None:
    said = "No std::optional, no structured bindings, no inline variables."
    assert [st.category for st in classify(said, role="user")] == ["convention"]


# ------------------------------------------------------------------------------- a format said tersely
@pytest.mark.parametrize(
    "user",
    [
        "tsv, utf-8, no header row",
        "the bank's import wants semicolons and a decimal comma",
        "json lines, dates as yyyy-mm-dd",
    ],
)
def test_a_data_format_said_tersely_is_the_users_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert [who for c, who, _ in found if c in ("convention", "preference")] == ["user"], found


@pytest.mark.parametrize(
    "user",
    [
        "the csv opens in excel with garbage where the umlauts should be",
        "Why does the json have tabs in it?",
        "I exported the csv from excel last night and sent it to Ines.",
    ],
)
def test_trouble_a_question_or_a_story_about_a_format_is_no_rule(store: Store, user: str) -> None:
    found = stored(store, user)
    assert not [t for c, _, t in found if c in ("convention", "preference", "decision")], found
