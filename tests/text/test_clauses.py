"""The parts of a request (text/clauses.py): each sentence and clause with an ask of its own, never a lone word."""

from __future__ import annotations

import subprocess
import sys

import pytest

from codememory.text.clauses import MAX_PARTS, request_parts


def test_each_sentence_of_a_several_sentence_request_is_a_part() -> None:
    parts = request_parts("Users with new phones cannot upload photos over 10 MB. Raise the limit to 25 MB.")
    assert "Raise the limit to 25 MB" in parts
    assert "Users with new phones cannot upload photos over 10 MB" in parts


def test_clauses_joined_by_commas_and_conjunctions_are_parts() -> None:
    parts = request_parts(
        "Next: export the readings as JSON as well, for the spreadsheet people and the raspberry pi dashboard."
    )
    assert "export the readings as JSON as well" in parts
    assert "the raspberry pi dashboard" in parts
    assert "Next" not in parts  # one word is no ask of its own


def test_a_choice_between_two_things_is_cut_at_the_comparison() -> None:
    assert request_parts("why did we choose httpx over the alternatives?") == ["why did we choose httpx"]
    assert request_parts("Next, scrape the results page the way we scrape fixtures.") == [
        "scrape the results page",
        "we scrape fixtures",
    ]


@pytest.mark.parametrize(
    "request_text",
    ["Commit the fix.", "What is the package version in pyproject.toml?", "Is app/__init__.py empty?", "Fix it."],
)
def test_a_request_of_one_part_has_no_parts_besides_itself(request_text: str) -> None:
    assert request_parts(request_text) == []


def test_a_path_a_number_or_a_lone_word_is_no_part() -> None:
    # "In README.md" holds one token that is not a stopword; "10 MB" only one with letters
    assert request_parts("In README.md, say 'on their phones or tablets' instead of 'on their phones'.") == [
        "say 'on their phones or tablets"
    ]
    assert "10 MB" not in request_parts("Upload photos over 10 MB. Raise the limit.")


def test_a_long_paste_gives_only_the_first_parts() -> None:
    text = " ".join(f"Sentence number {i} talks about topic{i}." for i in range(20))
    parts = request_parts(text)
    assert len(parts) == MAX_PARTS and parts[0] == "Sentence number 0 talks about topic0"


def test_a_bracketed_list_is_never_cut_into_parts() -> None:
    parts = request_parts(
        "Members should be able to cancel a booking themselves. Add Bookings.cancel_booking/2 (member, booking id) "
        "and a test for it."
    )
    assert "booking id)" not in parts and "Add Bookings.cancel_booking/2 (member" not in parts
    assert "Add Bookings.cancel_booking/2 (member, booking id)" in parts
    # a sentence end inside brackets ("e.g.") does not end the sentence either
    parts = request_parts("Keep a note per medication (e.g. 'take with food'). Add a notes column to medications.")
    assert "Keep a note per medication (e.g. 'take with food')" in parts


def test_a_bracket_never_closed_does_not_stop_the_cutting() -> None:
    # ":(" or "(see the README" left open is no bracketed list: the asks after it are parts as before
    parts = request_parts(
        "The export is slow :( Fix the GeoJSON export timeout. Then add a GeoPackage download option."
    )
    assert "Then add a GeoPackage download option" in parts
    parts = request_parts("Fix the GeoJSON export timeout (see the README. Then add a GeoPackage download option.")
    assert "Then add a GeoPackage download option" in parts
    # a stray closing bracket ("1)" numbering) does not open one either
    parts = request_parts("1) fix the GeoJSON export timeout 2) add a GeoPackage option (zip, shp). Then update docs.")
    assert "add a GeoPackage option (zip" not in parts


def test_long_whitespace_runs_are_cut_in_linear_time() -> None:
    # A cut starting with whitespace was tried from every space of a run and scanned the rest of it each time: 8,000
    # spaces took 11 s and 100k (this test) would take hours, inside the request parts of any prompt or tool text.
    code = "import sys\nfrom codememory.text.clauses import request_parts\nprint(request_parts(sys.argv[1]))\n"
    text = "choose httpx for calls" + " " * 100_000 + "- keep ruff for lint, and never black"
    done = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "keep ruff for lint" in done.stdout and "never black" in done.stdout


def test_an_indented_dash_after_a_line_break_is_cut_as_before_the_linear_time_fix() -> None:
    # "(?<!\s)" let no dash cut start in the indentation after a line break (the break was already cut), so the item
    # kept its dash and a "— then …" line gave one part more; these are the parts from before that change
    assert request_parts("Fix the flaky login test;\n  — then update the deploy docs for staging") == [
        "Fix the flaky login test",
        "then update the deploy docs for staging",
    ]
    assert request_parts("Please:\n\t- bump numpy version pin\n\t- rerun benchmark suite") == [
        "- bump numpy version pin",
        "rerun benchmark suite",
    ]
    # and stays linear where line breaks and blanks alternate
    code = "import sys\nfrom codememory.text.clauses import request_parts\nprint(request_parts(sys.argv[1]))\n"
    text = "choose httpx for calls" + "\n " * 50_000 + "- keep ruff for lint, and never black"
    done = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "keep ruff for lint" in done.stdout
