"""The kind of memory a question's form asks for (text/asks.py)."""

from __future__ import annotations

import pytest

from codememory.text.asks import HOW_DO, SYMPTOM, WHY, WHY_NOT, asked_categories, asked_value, category_fit, holds_value


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        ("why not use YOLO?", WHY_NOT),
        ("Why don’t we persist player progress with resource files?", WHY_NOT),
        ("why isn't staging vs prod done with workspaces?", WHY_NOT),
        ("why can't we upgrade pandas?", WHY),  # a limit: a gotcha as often as a decision
        ("why didn't we put message search on a dedicated search engine?", WHY_NOT),
        ("why did we choose httpx?", WHY),
        ("how do I run the unit tests without opening the editor?", HOW_DO),
        ("How to rotate the signing key", HOW_DO),
        ("photos taken on iPhones never get a preview thumbnail", SYMPTOM),
        ("the sender sees their own message duplicated right after sending", SYMPTOM),
    ],
)
def test_a_question_form_asks_for_its_kinds(query: str, asked: frozenset[str]) -> None:
    assert asked_categories(query) == asked


@pytest.mark.parametrize(
    "query",
    [
        "which database do the tests use?",  # "which", "what", "where": too many kinds to say
        "what Kubernetes version are our clusters running?",
        "how long are CloudWatch logs kept in prod?",  # "how long" is no "how do I"
        "Hammer",  # a keyword lookup
        "POOL_SIZE env var",
        "inventory/aws_ec2.yml",
        "is the staging database shared?",
        "whyfinder config",  # "why" only as a word of its own
        # keywords without a word of failure: a lookup however many there are
        "redis cache eviction policy config",
        "postgres connection pool size settings",
        "upload limit photos api",
        # other languages: their question words are not read
        "Warum nutzen wir nicht Redis für Caching",
        "Pourquoi pas utiliser Redis pour le cache",
        "为什么不用 Redis 做缓存 的 原因 是 什么",
    ],
)
def test_other_queries_ask_for_no_kind_in_particular(query: str) -> None:
    assert asked_categories(query) is None


def test_the_fit_is_neutral_where_nothing_is_known() -> None:
    assert category_fit(WHY_NOT, "rejected_alternative") == 1.0
    assert category_fit(WHY_NOT, "gotcha") == -1.0
    assert category_fit(None, "gotcha") == 0.0  # the question asks for no kind in particular
    assert category_fit(WHY_NOT, "note") == 0.0  # the default kind: nobody said what the memory is
    assert category_fit(WHY_NOT, None) == 0.0


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("how many retries does the payment webhook get?", "number"),
        ("which Node version does CI use?", "number"),
        ("what port does the admin app listen on?", "number"),
        ("where is the uptime check configured?", "place"),
        ("which config file sets the log level?", "place"),
        ("who approves schema migrations?", "person"),
        ("Who’s on call this week?", "person"),
        ("why did we choose httpx?", None),
        ("how do I run the tests?", None),
        ("stripe webhook", None),
    ],
)
def test_a_question_asks_for_a_kind_of_value(query: str, kind: str | None) -> None:
    assert asked_value(query) == kind


def test_a_memory_holds_a_value_of_a_kind_or_not() -> None:
    assert holds_value("number", "Uploads are capped at 20 MB")
    assert holds_value("number", "Backups run nightly")
    assert not holds_value("number", "The webhook handler is idempotent")
    assert holds_value("place", "Retries are set in config/retry.toml")
    assert holds_value("place", "Run `make test` first")
    assert holds_value("place", "Feature flags live in LaunchDarkly")
    assert not holds_value("place", "Retries back off exponentially")
    assert holds_value("person", "Schema migrations need a review from the database owner")
    assert holds_value("person", "Ask Priya before touching billing")
    assert not holds_value("person", "Uptime checks mark the site as down after three failures")
