"""The query compiler: grep-like syntax in, a safe FTS5 expression out."""

from __future__ import annotations

import sqlite3

import pytest

from codememory.text.query import MAX_TERMS, is_exclusion, parse_query


def test_implicit_and_quotes_every_term() -> None:
    assert parse_query("docker compose").fts == '("docker" AND "compose")'


def test_operators_phrase_prefix_and_groups() -> None:
    assert parse_query("docker OR podman").fts == '("docker" OR "podman")'
    assert parse_query("docker NOT swarm").fts == '("docker" NOT "swarm")'
    assert parse_query('"exact phrase"').fts == '"exact phrase"'
    assert parse_query("migrat*").fts == '"migrat"*'
    assert parse_query("(redis OR memcached) cache").fts == '(("redis" OR "memcached") AND "cache")'


def test_lowercase_operators_are_words() -> None:
    assert parse_query("salt and pepper").fts == '("salt" AND "and" AND "pepper")'


def test_not_excludes_term_from_positive_terms() -> None:
    parsed = parse_query("docker NOT swarm")
    assert [t.text for t in parsed.terms] == ["docker"]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "*",
        "(",
        ")",
        "NOT",
        "OR docker",
        "docker OR",
        "a:b",
        "@user",
        "#tag",
        "a=b",
        "C++",
        "src/auth/oauth.py",
        'say "hi',
        "((((a",
        "naïve café 東京",
        "x\x00y",
        "AND AND",
        '"*"',
        "-docker",
        "docker^2",
        "col:value",
        "NEAR(a b)",
        "{a b}",
        "a" * 10_000,
        " ".join(["w"] * 5000),
    ],
)
def test_any_input_compiles_to_valid_fts5(query: str) -> None:
    parsed = parse_query(query)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO f VALUES ('docker compose C++ src/auth/oauth.py naive cafe')")
    if parsed.fts is not None:
        conn.execute("SELECT count(*) FROM f WHERE f MATCH ?", (parsed.fts,)).fetchone()


def test_invalid_syntax_falls_back_to_literal_words() -> None:
    parsed = parse_query("(docker compose")
    assert parsed.literal
    assert parsed.fts == '("docker" AND "compose")'


def test_punctuation_only_terms_are_not_indexable() -> None:
    assert parse_query("@ #").fts is None
    assert parse_query("docker @").fts == '"docker"'


def test_term_count_is_capped() -> None:
    parsed = parse_query(" ".join(f"w{i}" for i in range(500)))
    assert parsed.literal
    assert len(parsed.terms) == MAX_TERMS


def test_nul_and_control_characters_are_removed() -> None:
    assert "\x00" not in (parse_query("do\x00cker").fts or "")


def test_lower_case_not_is_a_stopword_in_the_keyword_words() -> None:
    parsed = parse_query("why not requests?")
    assert parsed.fts == '("why" AND "not" AND "requests?")' and not parsed.negated
    assert parsed.content_words() == ["requests"]
    assert parsed.keyword_fts() == '"requests"'  # the hybrid keyword half too
    assert parse_query("why don't we use requests").content_words() == ["use", "requests"]


def test_relaxed_is_the_content_words_ored_for_plain_words_only() -> None:
    relaxed = parse_query("why did we choose httpx?").relaxed()
    assert relaxed is not None and relaxed.fts == '("choose" OR "httpx")' and not relaxed.explicit
    assert [t.text for t in relaxed.terms] == ["choose", "httpx"]
    assert parse_query("why httpx?").relaxed().fts == '"httpx"'  # type: ignore[union-attr]
    for strict in ('"connection pool" why', "docker OR podman", "docker NOT swarm", "migrat* tool", "(a b) c"):
        assert parse_query(strict).relaxed() is None, strict
    assert parse_query("httpx").relaxed() is None  # one term: nothing to relax
    assert parse_query("what is it?").relaxed() is None  # nothing but stopwords
    assert parse_query("(docker compose").relaxed() is not None  # invalid syntax is read as plain words


def test_a_leading_hyphen_excludes_a_word_from_the_whole_query() -> None:
    parsed = parse_query("payment -sandbox")
    assert parsed.fts == '("payment" NOT "sandbox")'
    assert [t.text for t in parsed.terms] == ["payment"] and [t.text for t in parsed.excluded] == ["sandbox"]
    assert not parsed.explicit and not parsed.negated  # plain words with an exclusion: the usual passes, filtered
    assert parse_query("-sandbox payment").fts == '("payment" NOT "sandbox")'
    several = parse_query('why did we pick stripe -sandbox -"test mode" -stag*')
    assert several.excluded_fts() == '"sandbox" OR "test mode" OR "stag"*'
    # Every keyword pass carries it: the hybrid keyword half and the any-word fallback.
    assert several.keyword_fts() == '("pick" OR "stripe") NOT ("sandbox" OR "test mode" OR "stag"*)'
    relaxed = several.relaxed()
    assert relaxed is not None and relaxed.fts == '(("pick" OR "stripe") NOT ("sandbox" OR "test mode" OR "stag"*))'
    unbalanced = parse_query("(payment -sandbox")
    assert unbalanced.literal and unbalanced.fts == '("payment" NOT "sandbox")'


@pytest.mark.parametrize(
    ("query", "fts"),
    [
        ("e-mail pre-commit", '("e-mail" AND "pre-commit")'),
        ("x-forwarded-for", '"x-forwarded-for"'),
        ("payment - sandbox", '("payment" AND "sandbox")'),  # a lone hyphen is literal (and unsearchable)
        ("pytest -k", '("pytest" AND "-k")'),  # a one-letter option
        ("git push --force", '("git" AND "push" AND "--force")'),
        ("offset -1", '("offset" AND "-1")'),
        ("a-b -c-d", '("a-b" NOT "c-d")'),
    ],
)
def test_hyphens_inside_or_before_non_words_stay_literal(query: str, fts: str) -> None:
    assert parse_query(query).fts == fts


def test_a_query_of_exclusions_alone_searches_nothing() -> None:
    parsed = parse_query("-sandbox -staging")
    assert parsed.fts is None and parsed.terms == [] and [t.text for t in parsed.excluded] == ["sandbox", "staging"]


def test_is_exclusion_reads_a_whole_argument() -> None:
    assert is_exclusion("-sandbox") and is_exclusion('-"test mode"') and is_exclusion("-x-forwarded-for")
    assert not any(is_exclusion(a) for a in ("-", "-k", "--force", "-1", "e-mail", "-a b", ""))
