"""The code names a request gives (text/named.py): paths, file names, qualified names, code identifiers, one-token
code spans and XML tags; not capitalised words, commands in code spans, quoted prose or versions."""

from __future__ import annotations

import pytest

from codememory.text.named import held_names, named_words, only_names


@pytest.mark.parametrize(
    ("request_text", "named"),
    [
        ("Which chi version is in go.mod?", {"go", "mod"}),
        ("How many lines does app/config.py have?", {"app", "config", "py"}),
        ("List the files under fastlane/.", {"fastlane"}),
        ("What does money.RoundHalfUp do with negative numbers?", {"money", "roundhalfup"}),
        ("Add #[must_use] to hash::normalize_path.", {"must_use", "hash", "normalize_path"}),
        ("Rename the parameter `m` of onTaken to `medication`.", {"m", "ontaken", "medication"}),
        ("Sort the <uses-permission> lines alphabetically.", {"uses", "permission"}),
        # no code names: a library's name, a command, an error message, a version, an abbreviation
        ("Now add a GeoJSON option to the export endpoint.", set()),
        ("`brisk run --help` does not say what the default is.", set()),
        ("Some users get 401 'token not yet valid' after logging in.", set()),
        ("Prepare release 3.5.0, e.g. bump the version.", set()),
        # products written like identifiers or files: what a memory speaks about as such
        ("What do we target on iOS and macOS?", set()),
        ("Node.js requirements for the ASP.NET backend and the eBay sync", set()),
        ("Is the iPhone layout done?", set()),
        # a file or an identifier nonetheless
        ("Which Node version does server/package.json pin?", {"server", "package", "json"}),
        ("Rename getUserById in userStore.ts", {"getuserbyid", "userstore", "ts"}),
    ],
)
def test_the_names_a_request_gives(request_text: str, named: set[str]) -> None:
    assert named_words(request_text) == named


def test_a_memory_sharing_a_word_beside_the_names_is_not_about_the_names_only() -> None:
    named = named_words("Which tool manages the dependencies in pyproject.toml?")
    assert only_names(["pyproject", "toml"], named)
    assert not only_names(["dependencies", "pyproject", "toml"], named)
    assert not only_names([], named)  # nothing shared: nothing said about it here


@pytest.mark.parametrize(
    "request_text",
    [
        "why does src/db.py lock up?",
        "what's wrong with src/db.py?",
        "anything I should know before editing src/db.py?",
        "parse_config crashes on an empty file",
        "useAuthStore throws",
        "be careful with `useAuthStore`",
        "src/db.py keeps failing under load",
        # another language: whether it asks what is wrong is not read, so nothing is held back
        "¿qué pasa con calcular_total?",
        "Warum hängt src/db.py?",
    ],
)
def test_a_request_asking_what_is_wrong_with_the_named_thing_holds_nothing_back(request_text: str) -> None:
    assert named_words(request_text)  # it names a thing ...
    assert held_names(request_text) == frozenset()  # ... and asks what a memory about the thing says


@pytest.mark.parametrize(
    "request_text",
    [
        "Which chi version is in go.mod?",
        "Add #[must_use] to hash::normalize_path.",
        "Rename the parameter `m` of onTaken to `medication`.",
        "How many lines does src/db.py have?",
    ],
)
def test_a_request_asking_something_small_of_the_named_thing_holds_its_names(request_text: str) -> None:
    assert held_names(request_text) == named_words(request_text) != frozenset()


def test_a_token_longer_than_any_name_is_no_name() -> None:
    assert named_words("see " + "a_" * 150 + "b") == frozenset()  # a pasted blob, not an identifier
    assert named_words("see " + "a_" * 50 + "b") != frozenset()  # an identifier, however long
