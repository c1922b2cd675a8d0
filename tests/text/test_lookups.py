"""Requests the project's files answer by looking (text/lookups.py): a count, a listing, a value read from a file
the request names; never a question about a reason, a way or a fault, nor one that names no file to read."""

from __future__ import annotations

import pytest

from codememory.text.lookups import answered_by_looking


@pytest.mark.parametrize(
    "request_text",
    [
        "How many staging models are there?",
        "List the migration files.",
        "Show me the last three commits.",
        "Which Python version does pyproject.toml require?",
        "What is config-version set to in dbt/dbt_project.yml?",
        "Is app/__init__.py empty?",
        '"How many lines does app/config.py have?"',  # the whole request in quotes, as some callers pass it
    ],
)
def test_a_count_a_listing_or_a_value_read_from_a_named_file_is_a_look(request_text: str) -> None:
    assert answered_by_looking(request_text)


@pytest.mark.parametrize(
    "request_text",
    [
        "Which Stripe API version are we pinned to?",  # names no file: the memory may hold the answer
        "Which tool manages the dependencies in pyproject.toml?",  # what the project chose, not a value the file states
        "What caps the connection pool in config/db.toml?",
        "Which JDK does the CI workflow set up?",
        "Why does app/db.py lock up?",
        "Is it safe to bump the version in mix.exs?",
        "Show me how to run the tests.",
        "Does this need a database migration? And how do I run the tests that need Postgres?",
        "Which version does pyproject.toml pin, and why?",
        "List the migration files. Then add one for the notes column.",  # asks more than a look
        "Add a notes column to medications.",
        "How many retries does the webhook get?",  # a setting a memory may state (text/asks.py), not a count
        "Show me what we decided about retries",  # what was decided, agreed or allowed is what a memory holds
        "List the reasons we chose Postgres over MySQL",
        "Show me the rule for naming branches",
        "Is it OK to edit migrations/0003.py?",
        "Which port does docker-compose.yml expose for redis, and what must I avoid?",
    ],
)
def test_a_question_a_memory_may_answer_is_no_look(request_text: str) -> None:
    assert not answered_by_looking(request_text)
