"""Replies that settle an offer in few words, and what terse or chatty users say around them: options led by a
count, compound names called by a part, a pick named first and then reasoned, findings the user accepts, a
proposal put off, a plan taken without the item the user says cannot work, reported problems in lower case.
Positives and negatives written for these tests; none of the sentences is in the extraction benchmark's sets."""

from __future__ import annotations

import pytest

from codememory.capture.turns import Todo
from codememory.extract import heuristic_candidates
from codememory.extract.candidate import spoken
from codememory.extract.offers import content_words, matching, offer_of
from codememory.extract.rules import classify
from codememory.extract.todos import merge_todos, text_todos
from support.extraction import SESSION, turn


def memories(*turns: object) -> list[tuple[str, str, str]]:
    found = heuristic_candidates(list(turns), SESSION, ())  # type: ignore[arg-type]
    return [(c.category, c.said_by, c.text) for c in found]


# --------------------------------------------------------------------------------------------- options
def test_a_count_alone_leads_the_options_it_counts() -> None:
    offer = offer_of("Three:\n\n1. a bigger disk\n2. rotate the logs daily\n3. ship them off to the NAS")
    assert [o.head for o in offer.options] == ["A bigger disk", "Rotate the logs daily", "Ship them off to the NAS"]
    assert not offer_of("Done:\n\n1. a bigger disk\n2. rotated the logs").options


def test_a_compound_name_is_called_by_its_parts() -> None:
    assert {"local", "windo"} <= content_words("window.localStorage.local")  # "local", cut to five letters
    offer = offer_of("Two candidates:\n\n- `cache.redis`: shared, one more service\n- `cache.memory`: per process")
    chosen = matching(offer.options, "memory.")
    assert chosen is not None and chosen.head == "Cache.memory"
    assert matching(offer.options, "cache.") is None  # names both


def test_a_name_both_options_share_is_settled_by_what_each_says() -> None:
    offer = offer_of(
        "Options:\n\n1. build the image with a musl toolchain locally\n"
        "2. use zig (cross-links from any host, no toolchain needed)"
    )
    chosen = matching(offer.options, "zig, no toolchain to keep around")
    assert chosen is not None and chosen.head.startswith("Use zig")


def test_a_pick_named_first_and_then_reasoned_keeps_the_option_and_the_reason() -> None:
    offer = (
        "Options:\n\n1. install the vendor's SDK on the build host\n"
        "2. use podman (runs the build in a container with the SDK inside)\n\nWhich one?"
    )
    said = memories(turn(1, "build it for the scanner", (offer,)), turn(2, "podman, the host is shared with others."))
    decisions = [(who, t) for c, who, t in said if c == "decision"]
    assert len(decisions) == 1
    who, text = decisions[0]
    assert who == "user" and "Use podman" in text and "chosen over" in text and "shared with others" in text


def test_a_long_option_keeps_what_it_was_chosen_over_next_to_its_name() -> None:
    offer = (
        "Two ways out:\n\n1. **Strict**: reject every row with a bad date and report it.\n"
        "2. **Lenient**: " + "parse the date with three fallbacks, log the ones that needed a fallback, " * 4 + "and "
        "keep going.\n\nI'd go with 1."
    )
    said = memories(turn(1, "the import chokes on dates", (offer,)), turn(2, "2."))
    decisions = [t for c, _, t in said if c == "decision"]
    assert decisions and decisions[0].startswith("Lenient (chosen over Strict):")


def test_a_numbered_pick_then_the_users_own_leaning_is_a_pick_and_a_preference() -> None:
    offer = (
        "Three:\n\n1. raise the quota in the config: one line, no restart\n"
        "2. move old entries to an archive table\n3. compress the payloads"
    )
    said = memories(
        turn(1, "we hit the quota again. options?", (offer,)),
        turn(2, "1. yeah I'd rather not touch the schema this month, the migration freeze is on. and no compression"),
    )
    kinds = sorted(c for c, _, _ in said)
    assert kinds == ["decision", "preference", "rejected_alternative"]
    assert any(c == "decision" and "raise the quota" in t.lower() for c, _, t in said)
    assert any(c == "rejected_alternative" and "compress" in t.lower() for c, _, t in said)


# ----------------------------------------------------------------------------------- findings, proposals
def test_findings_the_assistant_noticed_are_lessons_the_user_accepts() -> None:
    offer = (
        "It runs again. While reading the code I spotted two more things:\n\n"
        "1. the retry loop sleeps 1 ms, so a dead broker pins a core at 100%. I'd sleep 2 s.\n"
        "2. the log file is opened in write mode, so every restart wipes yesterday's log. I'd append."
    )
    said = memories(turn(1, "the sensor script died", (offer,)), turn(2, "sure, both"))
    lessons = [(who, t) for c, who, t in said if c == "gotcha"]
    assert len(lessons) == 2 and all(who == "assistant_accepted" for who, _ in lessons)
    unasked = memories(turn(1, "tidy up the sensor script", (offer,)))
    assert not [t for c, _, t in unasked if c == "gotcha"]


def test_a_proposal_put_off_is_the_users_todo() -> None:
    offer = "Done. Next would be the garage door: same sensor, other relay. Want me to make the pin configurable now?"
    said = memories(turn(1, "the porch light works", (offer,)), turn(2, "later. note it"))
    todos = [(who, t) for c, who, t in said if c == "todo"]
    todo = "TODO: Make the pin configurable: Next would be the garage door: same sensor, other relay."
    assert todos == [("user", todo)]
    taken = memories(turn(1, "the porch light works", (offer,)), turn(2, "yes please"))
    assert not [t for c, _, t in taken if c == "todo"]


def test_a_proposal_keeps_the_reason_said_right_after_it() -> None:
    offer = (
        "The dashboard is in. Also a dark theme, so it's easier at night.\n\n"
        "Should I run it as a launchd job? Right now it stops when you log out."
    )
    said = memories(turn(1, "build the dashboard", (offer,)), turn(2, "go ahead"))
    assert [t for c, _, t in said if c == "decision"] == ["Run it as a launchd job: it stops when you log out."]


def test_a_plan_taken_without_the_item_the_user_says_cannot_work() -> None:
    offer = (
        "Fix:\n- retry the connect with a backoff, so a slow broker is waited for\n"
        "- use the socket path instead of the TCP port, since both run on one host\n\nOK?"
    )
    reply = "ok. but the socket path won't work, it's in a jail"
    said = memories(turn(1, "it fails at boot", (offer,)), turn(2, reply))
    decisions = [t for c, _, t in said if c == "decision"]
    assert any("backoff" in t for t in decisions)
    assert not any("socket path instead" in t for t in decisions)


def test_an_earlier_recommendation_is_what_a_closing_proposal_offers() -> None:
    first = "I'd write a sharded index: one file per month under `idx/`, so a query opens only the months it needs."
    last = "Checked the sizes: a month is about 40 MB. Shall I write the sharded index?"
    said = memories(turn(1, "the index is too big to load", (first, last)), turn(2, "yes do it"))
    assert any(c == "decision" and "one file per month" in t for c, _, t in said)


# ------------------------------------------------------------------------------------- answers and words
def test_which_x_answered_with_a_model_is_the_users_fact() -> None:
    offer = "Which boards are these? I'll assume the older ones for now."
    said = memories(turn(1, "flash the boards", (offer,)), turn(2, "no, newer. ESP32-C6, idf 5.2. 4MB flash on each"))
    facts = [(who, t) for c, who, t in said if c == "fact"]
    assert facts and facts[0][0] == "user" and "ESP32-C6" in facts[0][1]


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("write it somewhere", False),
        ("and how to deploy.", False),
        ("Great plan, sounds perfect, let's go with that!", False),
        ("that makes sense, we moved the cron to 3am last week for the backups", False),
    ],
)
def test_replies_that_only_point_praise_or_tell_a_story_settle_nothing_more(reply: str, kept: bool) -> None:
    offer = "I'd keep one cron entry per job: easier to pause one. Shall I write the crontab?"
    said = memories(turn(1, "schedule the jobs", (offer,)), turn(2, f"yes. {reply}"))
    own = [t for c, who, t in said if who == "user" and c != "todo"]
    assert bool(own) is kept, own


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("ci runs eslint --max-warnings 0, add it to the pipeline.", ["convention"]),
        ("The pipeline checks formatting with prettier.", ["convention"]),
        ("ci runs slow today.", []),
        ("Then format it — CI runs `black --check .` and fails on any diff.", ["convention"]),
        ("the tests pass: ci runs on github.", []),
        ("Never said we need offline mode, it's fine.", []),
        ("Never commit the .env file.", ["convention"]),
    ],
)
def test_what_ci_enforces_is_a_rule_and_a_denial_is_not(sentence: str, kind: list[str]) -> None:
    assert [s.category for s in classify(sentence, role="user")] == kind


def test_a_problem_reported_in_lower_case_prose_is_a_lesson() -> None:
    explained = (
        "Found it. The importer reads the 2024 files with the old column order, and then the cast silently turns "
        "every price into zero. That's why the totals are zero and nothing fails."
    )
    said = memories(
        turn(
            1,
            "hi. i import the price files every month. problem: all prices for 2024 are zero. 2023 was fine. "
            "can you check? sorry for the mess",
            (explained,),
        )
    )
    lessons = [t for c, _, t in said if c == "gotcha"]
    assert len(lessons) == 1 and "old column order" in lessons[0]
    assert "(reported: Problem: all prices for 2024 are zero. 2023 was fine.)" in lessons[0]


def test_a_lesson_opening_on_its_thing_is_kept_without_the_pronoun() -> None:
    explained = "Yes, it's `open(newline=...)`: that argument only exists for text mode. In binary mode drop it."
    said = memories(turn(1, "ValueError: binary mode doesn't take a newline argument\n\nwhy?", (explained,)))
    lessons = [t for c, _, t in said if c == "gotcha"]
    assert lessons and lessons[0].startswith("`open(newline=...)`: that argument only exists for text mode.")


def test_a_todo_the_user_asked_for_stays_the_users_when_the_list_restates_it() -> None:
    said = [spoken(c, "user") for c in text_todos(["Later: a nightly check of the backup sizes."], "", 1, "user")]
    listed = [Todo(content="Nightly backup size check: alert when a backup shrinks", status="pending")]
    (merged,) = merge_todos(said, listed, 1)
    assert merged.said_by == "user" and merged.text.startswith("TODO: Nightly backup size check")
    (agents,) = merge_todos([], listed, 1)
    assert agents.said_by == "assistant"


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Switch the cache to sqlite, the json file gets rewritten on every hit.", ["decision"]),
        ("move the logs to /var/log/app, then restart it.", []),  # an errand
        ("Scratch the weekly digest.", ["rejected_alternative"]),
        ("scratch that.", []),
        ("And no lodash/fp please, that's a whole library for two helpers.", ["rejected_alternative"]),
        ("Labels on the map are never smaller than 14pt, people read it on a phone.", ["convention"]),
    ],
)
def test_a_change_of_approach_a_choice_taken_back_and_a_bound_with_never(sentence: str, kind: list[str]) -> None:
    assert [s.category for s in classify(sentence, role="user")] == kind


def test_lets_do_a_number_picks_that_option() -> None:
    offer = "Options:\n\n1. cache the tiles on disk\n2. render them on every request\n\nI'd go with 1."
    said = memories(turn(1, "the map is slow", (offer,)), turn(2, "Let's do 2."))
    assert any(c == "decision" and "render them on every request" in t.lower() for c, _, t in said)


def test_a_problem_that_comes_out_garbled_is_explained_by_its_cause() -> None:
    explained = (
        "That's the terminal's code page: it prints UTF-8 bytes as cp850, so every umlaut becomes two characters. "
        "Setting the console to UTF-8 at start fixes it."
    )
    said = memories(turn(1, "the report prints names like M\u00c3\u00bcller, it comes out as junk", (explained,)))
    lessons = [t for c, _, t in said if c == "gotcha"]
    assert len(lessons) == 1 and lessons[0].lower().startswith("cause: the terminal's code page")


def test_a_warning_about_what_a_tool_showed_is_a_lesson() -> None:
    warned = (
        "Careful: in this chart version, changing `fullnameOverride` renames the StatefulSet, so Kubernetes would "
        "delete the old one and its volume claims with it. Keeping the old name through `legacyName`. Options:\n\n"
        "1. keep it\n2. migrate"
    )
    said = memories(turn(1, "rename the release to shop-prod", (warned,)), turn(2, "ok"))
    lessons = [t for c, _, t in said if c == "gotcha"]
    assert lessons and lessons[0].startswith("In this chart version, changing `fullnameOverride` renames")
    assert "Options" not in lessons[0]
    calm = memories(turn(1, "rename it", ("Careful work ahead, let me read the chart first.",)), turn(2, "ok"))
    assert not [t for c, _, t in calm if c == "gotcha"]


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("Batch the writes instead, one transaction per hundred rows.", ["decision"]),
        ("I read the config instead.", []),
        ("The job ran instead.", []),
        ("Our users are all in Canada, so the backups stay in Montreal.", ["convention"]),
        ("It rained, so the game stays in the box.", []),
    ],
)
def test_an_instruction_with_instead_and_a_rule_that_follows_from_a_fact(sentence: str, kind: list[str]) -> None:
    assert [s.category for s in classify(sentence, role="user")] == kind


def test_a_question_about_a_state_is_not_a_choice_between_options() -> None:
    asked = offer_of("The build can't reach the registry. Is the VPN not connected, or do you use a mirror?")
    assert not asked.options and asked.asks
    choice = offer_of("Should the export be CSV, or do you want JSON?")
    assert [o.head for o in choice.options] == ["CSV", "JSON"]


def test_a_negative_number_keeps_its_sign_and_a_bullet_loses_its_dash() -> None:
    from codememory.extract.clean import tidy

    assert tidy("-1 means the sensor is unplugged, always.") == "-1 means the sensor is unplugged, always."
    assert tidy("- keep the old endpoint") == "Keep the old endpoint."


def test_a_question_typed_without_its_question_mark_settles_nothing() -> None:
    offer = "I'd reset the counter on every level load: otherwise it carries over. Shall I?"
    said = memories(
        turn(1, "the counter is wrong in level 2", (offer,)),
        turn(2, "ok. what do you mean with carries over though, the counter is a local"),
    )
    assert not [t for c, who, t in said if who == "user" and "what do you mean" in t.lower()]


def test_a_question_then_lettered_items_are_options_a_letter_picks() -> None:
    offer = (
        "The rate limits are hard-coded. Where should they live?\n"
        "A. a settings table: admins change them at runtime\n"
        "B. environment variables: one restart per change\n"
        "C. keep them in code"
    )
    said = memories(turn(1, "make the limits configurable", (offer,)), turn(2, "A"))
    decisions = [t for c, _, t in said if c == "decision"]
    assert decisions and decisions[0].startswith("The rate limits are hard-coded: A settings table")
    assert "chosen over" in decisions[0] and "Where should" not in decisions[0]


def test_identifiers_keep_their_double_underscores() -> None:
    from codememory.extract.clean import tidy

    assert (
        tidy("Use the Limit__c field, and **bold** and __this__ go") == "Use the Limit__c field, and bold and this go."
    )
