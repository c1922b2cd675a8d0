"""A question asking for a number, a place or a person, in a real store with the default model: the memory nearest
its subject that holds no such value is held back, and the one that holds it is kept (retrieval/search.py
`with_asked_value`, text/asks.py)."""

from __future__ import annotations

import json

import pytest

from conftest import Invoke

UPTIME = "Uptime checks hit /health every minute; three failed checks in a row mark the site as down"
REVIEW = "Schema migrations need a review from the database owner before they merge"
UPLOADS = "Uploads are capped at 20 MB by the API gateway"
WEBHOOK = "The payment webhook handler is idempotent: it records the event id before doing any work"
MEMORIES = [
    UPTIME,
    REVIEW,
    UPLOADS,
    WEBHOOK,
    "The storefront is a Remix app served from the edge",
    "Orders are exported to the warehouse as CSV every night",
    "Tests run against a throwaway Postgres started by docker compose",
]


@pytest.mark.slow
@pytest.mark.default_model
def test_a_question_for_a_value_no_memory_holds_gets_nothing_and_one_that_holds_it_is_kept(cm: Invoke) -> None:
    for text in MEMORIES:
        assert cm("store", text, "--json").exit_code == 0

    def search(question: str, *extra: str) -> dict[str, object]:
        result = cm("search", question, "--json", *extra)
        assert result.exit_code == 0, result.output
        data: dict[str, object] = json.loads(result.stdout)
        return data

    # the memory on the subject holds no person, no number: nothing answers, and it says what was held back
    for question, nearest in (
        ("who gets paged when the site is down?", UPTIME),
        ("how many retries does the payment webhook get?", WEBHOOK),
    ):
        found = search(question)
        assert found["results"] == [], (question, found["results"])
        assert isinstance(found["held_back"], int) and found["held_back"] >= 1
        every = search(question, "--all", "--explain")["results"]
        assert isinstance(every, list)
        held = next(r for r in every if r["text"] == nearest)
        assert held["held_back"] and held["explain"]["lacks"] in ("person", "number"), held
    # the memory that holds the value asked for is still the answer
    for question, answer in (("who approves schema migrations?", REVIEW), ("how big can an upload be?", UPLOADS)):
        texts = [r["text"] for r in search(question)["results"]]  # type: ignore[union-attr]
        assert answer in texts[:2], (question, texts)
