"""One memory per piece of knowledge, said plainly: the rules that read verdicts and refusals without a choice
verb, guesses, rules about "them", todos the agent's list restates, and memories that another one already holds.
Positives and negatives written for these tests; none of the sentences is in the extraction benchmark's sets."""

from __future__ import annotations

import pytest

from codememory.capture.turns import Todo
from codememory.extract import heuristic_candidates
from codememory.extract.rules import classify
from codememory.extract.todos import merge_todos, text_todos
from support.extraction import SESSION, turn


def kinds(sentence: str, role: str = "assistant") -> list[str]:
    return [s.category for s in classify(sentence, role=role)]


def memories(*turns: object, todos: tuple[Todo, ...] = ()) -> list[tuple[str, str, str]]:
    found = heuristic_candidates(list(turns), SESSION, todos)  # type: ignore[arg-type]
    return [(c.category, c.said_by, c.text) for c in found]


# ------------------------------------------------------------------------------------- verdicts, refusals
@pytest.mark.parametrize(
    "sentence",
    [
        "What fits here is a partial index on open tickets: closed ones are never queried.",
        "The right fix is a debounce on the search box: each keystroke fired its own request.",
        "I'll go with something smaller: a plain dict keyed by user id, cleared on logout.",
        "I'm rewriting the exporter with a streaming writer instead: the report no longer fits in memory.",
    ],
)
def test_a_choice_said_as_a_verdict_or_spelled_out_is_a_decision(sentence: str) -> None:
    assert kinds(sentence) == ["decision"]


@pytest.mark.parametrize(
    "sentence",
    [
        "The obvious pick would be Celery, but for two nightly jobs it's a broker to run for nothing.",
        "A bigger instance wouldn't do it: the lock is held by one query, not by a lack of CPU.",
        "I won't pull in a retry library like tenacity: two attempts are a three-line loop.",
        "I won't add a cache here, since the data changes on every request.",
    ],
)
def test_an_option_named_and_turned_down_with_its_reason_is_a_rejection(sentence: str) -> None:
    assert kinds(sentence) == ["rejected_alternative"]


@pytest.mark.parametrize(
    "sentence",
    [
        "It wouldn't help: the cache is cold anyway.",  # names nothing
        "I won't touch it: fine.",
        "I'll look at the logs: first the worker ones.",  # a step, not a choice
        "I'll go with it: later.",
        "What fits?",
        "Whatever fits, we can try later.",
    ],
)
def test_steps_pronouns_and_questions_stay_chatter(sentence: str) -> None:
    assert kinds(sentence) == []


def test_a_guess_is_not_knowledge() -> None:
    assert kinds("The service listens on port 8125, I'm assuming, like the other agents.") == []
    assert kinds("I guess the worker runs on Python 3.11 like the API.") == []
    assert kinds("The worker runs on Python 3.11 in prod.", role="user") == ["fact"]


# ------------------------------------------------------------------------------------------ the user's rules
@pytest.mark.parametrize(
    "sentence",
    [
        "Nothing in the frontend should ever call the billing API directly.",
        "The Java version is not up for discussion, the vendor SDK needs 11.",
        "Keeping the wire format is non-negotiable.",
    ],
)
def test_constraints_in_prose_are_the_users_rules(sentence: str) -> None:
    assert kinds(sentence, role="user") == ["convention"]


def test_a_named_machines_tool_versions_are_a_fact() -> None:
    assert kinds("fyi the build laptop has Node 20.11 and nothing newer.", role="user") == ["fact"]
    assert kinds("The laptop has a sticker on it.", role="user") == []


def test_a_short_rule_about_them_carries_what_they_are() -> None:
    said = memories(
        turn(
            1,
            "The nightly dump also copies /var/cache/thumbs, 40 GB of thumbnails. "
            "They're all regenerated on demand. Don't waste bandwidth on them.",
        )
    )
    rules = [t for c, who, t in said if c == "convention" and who == "user"]
    assert rules and "/var/cache/thumbs" in rules[0] and rules[0].endswith("Don't waste bandwidth on them.")


def test_a_short_rule_about_them_with_nothing_to_point_at_is_dropped() -> None:
    said = memories(turn(1, "Don't waste bandwidth on them."))
    assert not [t for _, _, t in said if "bandwidth" in t]


@pytest.mark.parametrize(
    ("reply", "rejected"),
    [
        ("And no moment.js please, it doubled our bundle last time.", True),
        ("Yes, no lodash.", False),  # agreement words before "no" are not a reason
        ("no row, just a warning in the log", False),  # the shape of a result, nothing turned down
    ],
)
def test_no_x_please_with_a_reason_turns_x_down(reply: str, rejected: bool) -> None:
    assert (kinds(reply, role="user") == ["rejected_alternative"]) is rejected


# --------------------------------------------------------------------------------------- exchanges, todos
REFUSAL = "I wouldn't do it now. Every report joins across tenants, so shards would turn each one into a fan-out query."


def test_a_suggestion_the_assistant_advises_against_is_rejected_with_its_reason() -> None:
    said = memories(
        turn(
            1,
            "A colleague suggested sharding the events table by tenant — worth doing now?",
            (REFUSAL,),
        ),
        turn(2, "ok, agreed. next: the export."),
    )
    rejected = [t for c, _, t in said if c == "rejected_alternative"]
    assert rejected and "sharding the events table" in rejected[0].lower() and "fan-out" in rejected[0]


def test_a_numbered_pick_of_the_recommendation_is_not_also_turned_down() -> None:
    offer = (
        "Two ways:\n\n1. retry the upload once, then give up with a warning\n2. queue it for the next run\n\n"
        "I'd go with 1: a second failure means the share is gone."
    )
    said = memories(turn(1, "uploads fail sometimes", (offer,)), turn(2, "1. no retry loop, just the one retry"))
    assert any(c == "decision" and "retry the upload once" in t.lower() for c, _, t in said)
    assert not any(c == "rejected_alternative" and "retry the upload once" in t.lower() for c, _, t in said)


def test_a_todo_sentence_is_not_also_a_rule() -> None:
    said = memories(turn(1, "One todo: the fixtures must be regenerated from the new schema, next week."))
    assert [c for c, _, _ in said] == ["todo"]


def test_still_to_do_lists_are_todos() -> None:
    found = text_todos(
        ["Still to do afterwards: rotate the old API keys, and drop the legacy webhook table."],
        "",
        1,
        "assistant",
    )
    assert [c.text for c in found] == ["TODO: Rotate the old API keys.", "TODO: Drop the legacy webhook table."]


def test_a_todo_the_agents_list_restates_in_its_own_words_is_one_todo() -> None:
    said = [c for c in text_todos(["Things for later: a backup check every week or so."], "", 1, "user")]
    listed = [Todo(content="Weekly backup check: restore one file and compare it", status="pending")]
    merged = merge_todos(said, listed, 1)
    assert [c.text for c in merged] == ["TODO: Weekly backup check: restore one file and compare it."]
    other = [Todo(content="Rename the staging bucket", status="pending")]
    assert len(merge_todos(said, other, 1)) == 2


def test_a_memory_inside_a_longer_one_of_the_same_exchange_is_dropped() -> None:
    said = memories(
        turn(
            1,
            "dates show in UTC for everyone",
            (
                "Render in the browser: the page sends ISO timestamps and a small script formats them in the "
                "reader's own timezone.",
                "The page can't know where the reader sits, so: Render in the browser: the page sends ISO "
                "timestamps and a small script formats them in the reader's own timezone. No new dependency.",
            ),
        ),
        turn(2, "great, thanks"),
    )
    assert len([t for _, _, t in said if "Render in the browser" in t]) <= 1


def test_a_reported_problem_and_the_fix_the_user_picked_are_one_lesson() -> None:
    explained = (
        "Found it. The export joins orders to shipments, and orders that ship in two parcels have two shipment "
        "rows, so each of them comes out twice."
    )
    offer = (
        "Two ways:\n\n1. aggregate the shipments per order before the join\n2. deduplicate the rows after the join\n\n"
        "I'd go with 1: the totals stay right without a second pass."
    )
    said = memories(
        turn(1, "Bug: the nightly report shows every order twice since Monday.", (explained, offer)), turn(2, "1")
    )
    assert [c for c, _, _ in said] == ["gotcha"]
    (lesson,) = [t for _, _, t in said]
    assert "two shipment rows" in lesson and "Fix: Aggregate the shipments per order" in lesson
    assert lesson.endswith("(reported: Bug: the nightly report shows every order twice since Monday.)")


def test_a_topic_then_nah_turns_the_suggestion_down_with_the_users_reason() -> None:
    offer = (
        "Done, the exporter streams now. One more idea while we're at it: gzip would shrink the nightly files "
        "to a third."
    )
    said = memories(
        turn(1, "make the export stream please", (offer,)),
        turn(2, "Gzip: nah. The warehouse loader only reads plain CSV. Everything else yes, ship it!"),
    )
    rejected = [(who, t) for c, who, t in said if c == "rejected_alternative"]
    assert rejected == [
        (
            "user",
            "Turned down: gzip would shrink the nightly files to a third. The warehouse loader only reads plain CSV.",
        )
    ]


PINNED = "Setup: Django 4.2 on Python 3.10. Our host has no 3.11 yet, so the Python version is not up for discussion."


def test_a_rule_about_the_x_version_carries_the_version_said_just_before() -> None:
    said = memories(turn(1, PINNED))
    assert [t for c, _, t in said if c == "convention"] == [PINNED]
    alone = memories(turn(1, "We ship on Fridays. The Python version is not up for discussion."))
    assert [t for c, _, t in alone if c == "convention"] == ["The Python version is not up for discussion."]
