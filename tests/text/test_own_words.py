"""What is the agent's own in a tool call though a memory names it: a name the request said in words, a changelog
entry."""

from __future__ import annotations

from codememory.text.own_words import accounts_of_work, said_in_words, spelled_out


def test_an_identifier_is_spelled_out_in_its_words() -> None:
    assert [spelled_out(t) for t in ("event_id", "eventId", "EventID", "rate-limit")] == ["event id"] * 3 + [
        "rate limit"
    ]
    assert [spelled_out(t) for t in ("refund", "app/payments.py", "Payments.refund", "x")] == [None] * 4


def test_a_name_too_long_for_prose_is_never_spelled_out() -> None:
    """A memory's term is untrusted: one of thousands of words would be searched for word by word in every request
    (the text's length times its words), and no request says such a name in words."""
    assert spelled_out("max_upload_bytes_per_request_for_photo_api") == "max upload bytes per request for photo api"
    assert spelled_out("-".join(["a"] * 5000) + "-b") is None
    assert spelled_out("a_b_c_d_e_f_g_h_i") is None
    assert not said_in_words("-".join(["a"] * 5000) + "-b", "a " * 10_000)


def test_a_text_says_an_identifier_in_words_only_word_after_word() -> None:
    assert said_in_words("event_id", "add payments.refund/2 (customer, event id)")
    assert said_in_words("event_id", "keep the event-id of each delivery")
    assert not said_in_words("event_id", "the event identifier")  # another word
    assert not said_in_words("event_id", "on each event: id first")  # punctuation between them
    assert not said_in_words("refund", "refund it")  # one word is no identifier's spelling


def test_changelogs_and_release_notes_are_accounts_of_work_code_is_not() -> None:
    accounts = ["CHANGELOG.md", "/r/CHANGES.rst", "docs/release-notes.md", "NEWS", "store/changelogs/30500.txt"]
    code = ["src/news.py", "lib/history.ex", "app/changelog_view.py", "changelogs/build.py", "README.md"]
    assert all(accounts_of_work([p]) for p in accounts)
    assert not any(accounts_of_work([p]) for p in code)
    assert not accounts_of_work(["CHANGELOG.md", "src/app.py"])  # an edit that also changes code
    assert not accounts_of_work([])  # a shell call edits no file the rules can read
