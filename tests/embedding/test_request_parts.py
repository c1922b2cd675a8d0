"""A request that asks for several things gets the memory that answers one of them (retrieval/proactive.py asks for
each part of the request, text/clauses.py), through the code path of the daemon's /retrieve and the prompt hooks,
with the default model; a request that needs no memory still gets none."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store

pytestmark = [pytest.mark.default_model, pytest.mark.slow]  # loads the default embedding model

PROJECT = (
    "Use httpx, not requests, for outbound HTTP calls in the webhook worker: we need HTTP/2",
    "The Postgres connection pool is capped at 20 in production (config/db.toml)",
    "Deploys go out on Tuesdays after the billing batch finishes",
    "Alembic migrations live in db/migrations; run them before the integration tests",
)
GREENHOUSE = (
    "I'd rather not pull in pandas for this, it is one more thing to keep alive on the raspberry pi.",
    "Write the export with the csv module rather than joining strings, since quoting commas by hand breaks on sensor "
    "names with commas: the readings are plain rows, so the standard library covers it.",
    "Reading CONTRIBUTING.md first, and the sensor check fails on its own for now.",
)


def retrieved(project: Path, memories: tuple[str, ...], request: str) -> list[str]:
    with Store.open(project) as store:
        assert store.semantic.configured
        for text in memories:
            store.add(text)
        return [m.text for m in store.retrieve([request], touch=False).memories]


def test_the_memory_answering_the_second_ask_of_a_request_is_given(project: Path) -> None:
    shown = retrieved(
        project,
        PROJECT,
        "Add a healthcheck endpoint to the admin app, then check which HTTP client the webhook worker uses.",
    )
    assert shown == [PROJECT[0]]


def test_each_clause_brings_its_own_memory(project: Path) -> None:
    shown = retrieved(
        project,
        GREENHOUSE,
        "Next: export the readings as JSON as well, for the spreadsheet people and the raspberry pi dashboard.",
    )
    assert set(shown) == {GREENHOUSE[0], GREENHOUSE[1]}


@pytest.mark.parametrize(
    "request_text",
    [
        "Rename the file notes.txt to NOTES.md, nothing else.",
        "In README.md, say 'on their phones or tablets' instead of 'on their phones'. Then commit it.",
    ],
)
def test_a_request_needing_no_memory_gets_none(project: Path, request_text: str) -> None:
    assert retrieved(project, PROJECT, request_text) == []
