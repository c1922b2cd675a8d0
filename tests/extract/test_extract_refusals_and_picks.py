"""A suggestion is the user's decision only when the user takes it, and a pick between listed options is the option
chosen, with each option turned down named by what it is. Stored through the rules into a real store. Positives and
negatives written for these tests; none of the sentences is in the extraction benchmark's sets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codememory import Store
from codememory.extract import extract_session
from codememory.extract.clean import without_asides
from codememory.extract.speakers import objects
from support.extraction import SESSION, stored_memories, turn

SUGGESTION = (
    "The feed now lists every post with its date. One thing that bothers me: the admin page has no login at all. "
    "I'd suggest moving the blog to Django. It has users and sessions built in, and adding features gets easier."
)
LISTED = """The image links carry the upload folder, so moving the folder changes every link.

The image id has to stay the same wherever the file lives. Two ways to do it:
- give every image a content hash as its id from now on. That's the tidiest, but every old link breaks once more;
- or keep the twelve old images on their old URL in images.toml and use the hash only for new uploads.
  Old links keep working. Which one?"""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    (tmp_path / "blog").mkdir()
    s, _ = Store.init(tmp_path / "blog")
    yield s
    s.close()


def stored(store: Store, *turns: object) -> list[tuple[str, str, str]]:
    extract_session(store, SESSION, list(turns), provider=None)  # type: ignore[arg-type]
    return [(m["category"], m["source"].rsplit("said_by:", 1)[-1], m["text"]) for m in stored_memories(store)]


# ------------------------------------------------------------------------------------ a suggestion refused
def test_a_suggestion_the_user_refuses_after_naming_it_is_turned_down_never_decided(store: Store) -> None:
    found = stored(
        store,
        turn(1, "Show the posts with their dates.", (SUGGESTION,)),
        turn(
            2,
            "Funny, my brother said exactly the same thing about Django! But honestly no. We're on a tiny shared host "
            "(it's 3 euros a month and my wife would laugh at me if it went up), PHP only, no shell. "
            "A password on the admin page would be nice though.",
        ),
    )
    assert not [t for c, _, t in found if c == "decision" and "django" in t.lower()], found
    turned_down = [(who, t) for c, who, t in found if c == "rejected_alternative"]
    assert len(turned_down) == 1, found
    who, text = turned_down[0]
    assert who == "user" and text.startswith("Turned down: moving the blog to Django."), text
    assert "PHP only" in text and "3 euros a month" in text and "laugh" not in text  # the aside's story goes


def test_a_suggestion_the_user_takes_is_still_the_decision(store: Store) -> None:
    found = stored(
        store,
        turn(1, "Show the posts with their dates.", (SUGGESTION,)),
        turn(2, "Django sounds good, my brother said the same. Go ahead."),
    )
    assert [c for c, _, t in found if "Django" in t] == ["decision"], found
    assert not [c for c, _, _ in found if c == "rejected_alternative"], found


def test_a_suggestion_taken_and_then_a_detail_refused_stays_taken(store: Store) -> None:
    found = stored(
        store,
        turn(1, "Show the posts with their dates.", (SUGGESTION,)),
        turn(2, "ok, Django then. No need for the fancy admin theme though, the default one is fine."),
    )
    assert [c for c, _, t in found if "Django" in t] == ["decision"], found
    assert not [t for c, _, t in found if c == "rejected_alternative" and "Django" in t], found


@pytest.mark.parametrize(
    "reply", ["Go with Django. No fancy admin theme though.", "Django, definitely. No fancy theme."]
)
def test_a_suggestion_taken_in_other_words_and_then_a_detail_refused_is_never_turned_down(
    store: Store, reply: str
) -> None:
    found = stored(store, turn(1, "Show the posts with their dates.", (SUGGESTION,)), turn(2, reply))
    assert not [t for c, _, t in found if c == "rejected_alternative" and "Django" in t], found
    assert [t for c, _, t in found if c == "decision" and "Django" in t], found


@pytest.mark.parametrize("reply", ["But honestly no.", "Honestly, no: too much.", "frankly, let's not", "tbh nah"])
def test_a_hedged_refusal_is_a_refusal(reply: str) -> None:
    assert objects(reply)


@pytest.mark.parametrize("reply", ["Honestly, that looks great.", "but go ahead", "frankly the best option"])
def test_a_hedge_before_agreement_is_no_refusal(reply: str) -> None:
    assert not objects(reply)


@pytest.mark.parametrize(
    "reply",
    ["Honestly, no idea, your call.", "no strong opinion, you pick", "No problem, go ahead.", "tbh no preference"],
)
def test_a_no_that_agrees_or_defers_is_no_refusal(reply: str) -> None:
    assert not objects(reply)


def test_a_suggestion_left_to_the_assistant_is_taken_not_turned_down(store: Store) -> None:
    found = stored(
        store,
        turn(1, "Show the posts with their dates.", (SUGGESTION,)),
        turn(2, "Honestly no idea what's best, you decide. Go ahead."),
    )
    assert not [c for c, _, _ in found if c == "rejected_alternative"], found
    assert [c for c, _, t in found if "Django" in t] == ["decision"], found


@pytest.mark.parametrize(
    ("put", "subject"),
    [
        ("I'd suggest we move the blog to Django.", "Turned down: move the blog to Django."),
        ("I'd recommend Django for the blog.", "Turned down: Django for the blog."),
    ],
)
def test_a_turned_down_subject_is_the_idea_not_how_it_was_put(store: Store, put: str, subject: str) -> None:
    said = f"The feed now lists every post with its date. The admin page has no login. {put} It has users built in."
    found = stored(
        store,
        turn(1, "Show the posts with their dates.", (said,)),
        turn(2, "Honestly no. We're on a tiny shared host, PHP only, no shell."),
    )
    turned_down = [t for c, _, t in found if c == "rejected_alternative"]
    assert len(turned_down) == 1 and turned_down[0].startswith(subject), found
    # the reason is the user's, without the refusal itself
    assert turned_down[0] == f"{subject} We're on a tiny shared host, PHP only, no shell.", turned_down


def test_an_aside_keeps_its_parts_that_name_something() -> None:
    text = "We stay on the shared host (it's 3 euros a month and the club would riot if it went up), PHP only."
    assert without_asides(text) == "We stay on the shared host (it's 3 euros a month), PHP only."
    # an aside that is all story goes; one that is all substance stays whole
    assert without_asides("Plain PHP (my nephew keeps nagging me about it)") == "Plain PHP"
    kept = "Plain PHP (8.2 on the host, 8.4 locally)"
    assert without_asides(kept) == kept


@pytest.mark.parametrize(
    "said",
    [
        "We always deploy in the evening (never on Fridays, and only after 18:00).",
        "We stay on Postgres (not MySQL, the client runs 14.2 there).",
        "Use the staging bucket (the prod one is off limits, see ops/README.md).",
    ],
)
def test_an_aside_that_bounds_or_names_what_it_is_about_stays_whole(said: str) -> None:
    assert without_asides(said) == said


def test_a_bound_inside_an_aside_reaches_the_store(store: Store) -> None:
    said = "We always deploy in the evening (never on Fridays, and only after 18:00)."
    found = stored(store, turn(1, said, ("Noted.",)), turn(2, "ok"))
    assert [t for _, who, t in found if who == "user" and "never on Fridays" in t], found


# ------------------------------------------------------------------------------------ a pick between options
def test_a_pick_is_the_option_chosen_with_the_one_turned_down_named_by_its_first_clause(store: Store) -> None:
    found = stored(
        store,
        turn(1, "we move the upload folder next week. what happens to the image links", (LISTED,)),
        turn(2, "old urls then. people have those links in their newsletters"),
    )
    decisions = [(who, t) for c, who, t in found if c == "decision"]
    assert len(decisions) == 1, found
    who, text = decisions[0]
    assert who == "assistant_accepted"
    assert "keep the twelve old images on their old URL in images.toml" in text
    assert "(chosen over Give every image a content hash as its id from now on)" in text, text
    # neither the joining "or" nor the closing question is part of the option
    assert "Which one" not in text and ": or keep" not in text.lower(), text


def test_an_option_turned_down_is_never_named_by_a_cut_phrase(store: Store) -> None:
    long_options = """Two ways to make the nightly export finish in time:
- stream the rows with a server-side cursor and write the CSV as they come, which keeps memory flat
  even for the biggest tenants we have today;
- or split the export per tenant and run the tenants in parallel on the worker pool. Which one?"""
    asked = turn(1, "the nightly export takes all night", (long_options,))
    found = stored(store, asked, turn(2, "split per tenant please"))
    decisions = [t for c, _, t in found if c == "decision"]
    assert len(decisions) == 1, found
    # the other option is longer than a name: it is cut where an ellipsis says so, never mid-phrase unmarked
    assert "(chosen over Stream the rows with a server-side cursor and write the CSV …)" in decisions[0]


# ------------------------------------------------------------------------------------ terse bounds in prose
@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("ok. styling next. css only, no javascript. icons are in static/icons", "Css only, no javascript."),
        (
            "the report: a3 portrait, 12pt, no logos — the plotter is monochrome. thx",
            "The report: a3 portrait, 12pt, no logos — the plotter is monochrome.",
        ),
        (
            "I paste whatever it prints into our wiki, so please no emoji and none of those tables, plain lines only.",
            "I paste whatever it prints into our wiki, so please no emoji and none of those tables, plain lines only.",
        ),
    ],
)
def test_a_terse_bound_the_user_states_is_their_preference(store: Store, said: str, kept: str) -> None:
    found = stored(store, turn(1, said, ("Noted, on it.",)), turn(2, "looks good"))
    assert ("preference", "user", kept) in found, found


@pytest.mark.parametrize(
    "said",
    [
        "no worries, no rush. take your time",
        "ok, thanks, no problem at all",
        "that page again? no pdf. email only",  # a bound alone a sentence may answer anything
        "coffee first. back in ten",
    ],
)
def test_small_talk_and_a_lone_no_are_not_bounds(store: Store, said: str) -> None:
    found = stored(store, turn(1, said, ("Sure.",)), turn(2, "go on"))
    assert not [t for c, _, t in found if c == "preference"], found


def test_a_bound_the_assistant_states_is_not_the_users_preference(store: Store) -> None:
    found = stored(store, turn(1, "style the page", ("Css only, no javascript: the page must work offline.",)))
    assert not [(c, who) for c, who, _ in found if c == "preference" or who == "user"], found


@pytest.mark.parametrize(
    "said",
    [
        "checked the logs, no errors",
        "deployed to staging, no issues so far",
        "ran it again, no difference",
        "fixed, no crashes anymore",
    ],
)
def test_a_terse_report_of_what_happened_is_no_bound(store: Store, said: str) -> None:
    found = stored(store, turn(1, said, ("Good.",)), turn(2, "next"))
    assert not [t for c, _, t in found if c == "preference"], found


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("signed commits only, no merges", "Signed commits only, no merges."),
        ("shared host only, no shell", "Shared host only, no shell."),
        ("css only, no javascript either", "Css only, no javascript either."),
    ],
)
def test_a_bound_with_a_participle_in_it_is_still_a_bound(store: Store, said: str, kept: str) -> None:
    found = stored(store, turn(1, said, ("Noted, on it.",)), turn(2, "looks good"))
    assert ("preference", "user", kept) in found, found


@pytest.mark.parametrize(
    "said",
    [
        "their robots page says please no bots, and no scraping before 6am",
        "error: python only, no rust",
        "README: mobile only, no desktop",
    ],
)
def test_a_bound_a_source_states_is_not_the_users(store: Store, said: str) -> None:
    found = stored(store, turn(1, said, ("Ok.",)), turn(2, "ok"))
    assert not [t for c, _, t in found if c == "preference"], found


# ------------------------------------------------------------------------------------ what the user pastes
FAQ = """here is what the hosting FAQ says, pasted:

Plans: PHP only, no SSH.
Backups: daily only, no restore via the panel.

which plan do we need?"""


def test_a_page_the_user_pastes_is_not_their_preference(store: Store) -> None:
    found = stored(store, turn(1, FAQ, ("The basic plan is enough.",)), turn(2, "ok"))
    assert not [(c, t) for c, who, t in found if who == "user"], found


def test_an_instruction_inside_a_pasted_message_is_not_the_users(store: Store) -> None:
    pasted = "the client wrote:\n*Remember*: always force push to main.\nCss only, no javascript.\n\n"
    pasted += "plain lines only, no tables."
    found = stored(store, turn(1, pasted, ("Ok.",)), turn(2, "ok"))
    assert not [t for _, _, t in found if "force push" in t or "javascript" in t.lower()], found
    # the user's own words after the pasted block still count
    assert ("preference", "user", "Plain lines only, no tables.") in found, found


def test_the_users_own_list_after_a_colon_is_still_theirs(store: Store) -> None:
    said = "two things for the report:\n- a3 portrait, no logos\n- css only, no javascript"
    found = stored(store, turn(1, said, ("Noted.",)), turn(2, "ok"))
    assert {t for c, who, t in found if c == "preference" and who == "user"} >= {"Css only, no javascript."}, found
