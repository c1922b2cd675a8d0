"""The terms a memory is judged on: its own names first (from its entities and its text), then its commit forms
and its text as shown."""

from __future__ import annotations

from codememory.text.usage_cues import MAX_TERMS, Action, accounts_of_work, memory_terms, said_in_words, spelled_out


def test_commit_forms_and_the_phrase_never_push_out_a_memorys_names() -> None:
    forms = " ".join(f"`{kind}(x): ...`" for kind in ("fix", "feat", "docs", "test", "refactor", "perf"))
    paths = [f"src/module_{i}/file_{i}.py" for i in range(MAX_TERMS)]
    text = f"Commit messages follow Conventional Commits ({forms}); the modules are {', '.join(paths)}."
    terms = memory_terms(text, [(path, "file") for path in paths])
    assert [t.text for t in terms if t.kind == "path"] == paths
    assert {t.kind for t in terms} >= {"commit", "phrase"}


def test_a_memory_that_is_one_name_keeps_the_name() -> None:
    terms = memory_terms("UPLOAD_MAX_BYTES", [("UPLOAD_MAX_BYTES", "identifier")])
    assert [(t.text, t.kind) for t in terms] == [("UPLOAD_MAX_BYTES", "symbol"), ("UPLOAD_MAX_BYTES", "phrase")]


def test_an_identifier_is_spelled_out_in_its_words() -> None:
    assert [spelled_out(t) for t in ("event_id", "eventId", "EventID", "rate-limit")] == ["event id"] * 3 + [
        "rate limit"
    ]
    assert [spelled_out(t) for t in ("refund", "app/payments.py", "Payments.refund", "x")] == [None] * 4


def test_a_text_says_an_identifier_in_words_only_word_after_word() -> None:
    assert said_in_words("event_id", "add payments.refund/2 (customer, event id)")
    assert said_in_words("event_id", "keep the event-id of each delivery")
    assert not said_in_words("event_id", "the event identifier")  # another word
    assert not said_in_words("event_id", "on each event: id first")  # punctuation between them
    assert not said_in_words("refund", "refund it")  # one word is no identifier's spelling


def test_changelogs_and_release_notes_are_accounts_of_work_code_is_not() -> None:
    def edits(path: str) -> Action:
        return Action("edit", paths=(path,), edited=(path,), added="x")

    accounts = ["CHANGELOG.md", "/r/CHANGES.rst", "docs/release-notes.md", "NEWS", "store/changelogs/30500.txt"]
    code = ["src/news.py", "lib/history.ex", "app/changelog_view.py", "changelogs/build.py", "README.md"]
    assert all(accounts_of_work(edits(p)) for p in accounts)
    assert not any(accounts_of_work(edits(p)) for p in code)
    assert not accounts_of_work(Action("bash", shell=("echo x >> CHANGELOG.md",)))  # not an edit it can read
