"""Consolidation with no model (no LLM) and the default embedding model: plain paraphrases of one fact are
squashed; near-duplicates that differ in a number, a path, a version, a name or polarity are not, and the dry
run says for every cluster it leaves alone why."""

from __future__ import annotations

import pytest

from support.cli import Invoke, ok, ok_json, store

pytestmark = [pytest.mark.default_model, pytest.mark.slow]

HTTPX = [
    "Use httpx instead of requests for outbound HTTP calls because we need HTTP/2",
    "For outbound HTTP we went with httpx rather than the requests library, since HTTP/2 support is required",
    "We chose httpx over requests for all outgoing HTTP traffic: requests cannot speak HTTP/2",
]


def _dry_run(cm: Invoke) -> dict:  # type: ignore[type-arg]
    return ok_json(cm("consolidate", "--dry-run", "--no-model", "--json"))  # type: ignore[no-any-return]


def test_three_plain_paraphrases_of_one_decision_are_squashed(cm: Invoke) -> None:
    ids = [store(cm, text, "--category", "decision") for text in HTTPX]
    store(cm, "Log lines are JSON via structlog with a request_id field", "--category", "convention")
    plan = _dry_run(cm)
    squashes = [c for c in plan["changes"] if c["kind"] == "squash"]
    assert [sorted(c["memories"]) for c in squashes] == [sorted(ids)], (plan["left_alone"], plan["changes"])
    assert "plain paraphrases" in squashes[0]["reason"] and squashes[0]["text"] in HTTPX


@pytest.mark.parametrize(
    "pair",
    [
        ("The Android app's minimum SDK is 26.", "Android builds target a minimum SDK level of 26."),
        (
            "Sentry alerts for the API go to the #api-alerts Slack channel.",
            "The API's Sentry alerts are posted in #api-alerts on Slack.",
        ),
    ],
)
def test_other_plain_paraphrases_are_squashed(cm: Invoke, pair: tuple[str, str]) -> None:
    ids = [store(cm, text, "--category", "fact") for text in pair]
    plan = _dry_run(cm)
    squashes = [c for c in plan["changes"] if c["kind"] == "squash"]
    assert [sorted(c["memories"]) for c in squashes] == [sorted(ids)], (plan["similarity"], plan["left_alone"])


@pytest.mark.parametrize(
    ("pair", "why"),
    [
        (
            (
                "Alembic migrations live in migrations/versions.",
                "Our Alembic revision files are kept under db/migrations/versions.",
            ),
            "differ in a path: migrations/versions vs db/migrations/versions",
        ),
        (
            ("CI runs the test suite on Python 3.11 and 3.12.", "Our CI matrix tests Python 3.12 and 3.13."),
            "differ in a version: 3.11 vs 3.13",
        ),
        (
            ("Always run migrations before deploying the API.", "Never run migrations before deploying the API."),
            "opposite",
        ),
        (
            (
                "We moved transactional email from SendGrid to Resend last year.",
                "Transactional email moved from Resend to SendGrid.",
            ),
            "another order around a direction",
        ),
    ],
)
def test_near_duplicates_that_differ_are_never_squashed_and_the_dry_run_says_why(
    cm: Invoke, pair: tuple[str, str], why: str
) -> None:
    ids = [store(cm, text, "--category", "fact") for text in pair]
    plan = _dry_run(cm)
    assert not [c for c in plan["changes"] if c["kind"] == "squash"], plan
    said = [p["reason"] for c in plan["left_alone"] for p in c["pairs"] if sorted(p["memories"]) == sorted(ids)]
    said += [c["reason"] for c in plan["changes"] if sorted(c["memories"]) == sorted(ids)]
    assert any(why in reason for reason in said), (plan["similarity"], plan["left_alone"], plan["changes"])
    text = ok(cm("consolidate", "--dry-run", "--no-model")).stdout
    assert why in text, text
