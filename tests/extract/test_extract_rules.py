"""Each extraction rule on realistic phrasings (user and assistant) and on what must stay chatter: questions,
hypotheticals, narration of the next step, quoted code. Built from issue 15's examples and their kin."""

from __future__ import annotations

import pytest

from codememory.capture.turns import ToolCall
from codememory.extract import Todo, heuristic_candidates
from codememory.extract.candidate import Candidate
from codememory.extract.clean import clip, strip_stray_quotes, tidy
from support.extraction import SESSION, bash, edit, turn


def found(user: str, *assistant: str) -> list[tuple[str, str]]:
    return [(c.category, c.text) for c in heuristic_candidates([turn(1, user, assistant)], SESSION)]


def categories(candidates: list[Candidate]) -> list[str]:
    return [c.category for c in candidates]


# ------------------------------------------------------------------------------------------- text
def test_stray_quotes_from_a_command_line_prompt_are_stripped_at_both_ends() -> None:
    assert strip_stray_quotes('"Keep it dependency-free.') == "Keep it dependency-free."
    assert strip_stray_quotes('use Optional."') == "use Optional."
    assert strip_stray_quotes('Name it "links" please') == 'Name it "links" please'
    assert strip_stray_quotes("Don't use mocks") == "Don't use mocks"
    assert tidy('"Ok, let\'s stay with plain sqlite3 then."') == "Let's stay with plain sqlite3."
    assert found('"From now on, always run ruff before committing."') == [
        ("convention", "From now on, always run ruff before committing.")
    ]


def test_fillers_go_at_the_start_and_the_end() -> None:
    assert tidy("ok so let's go with FastAPI then") == "Let's go with FastAPI."
    assert tidy("Alright, please always pin versions") == "Always pin versions."


def test_long_text_is_cut_at_a_sentence_end() -> None:
    text = "First sentence is here. " + "Second sentence goes on and on. " * 20
    cut = clip(text, 80)
    assert cut.endswith(".") and len(cut) <= 80 and cut.startswith("First sentence is here.")
    assert clip("word " * 50, 40).endswith("\u2026")


# -------------------------------------------------------------------------------------- decisions
@pytest.mark.parametrize(
    ("assistant", "expected"),
    [
        (
            "I'll use unicodedata NFKD normalisation instead of python-slugify, because the project has no "
            "dependencies.",
            "I'll use unicodedata NFKD normalisation instead of python-slugify, because the project has no "
            "dependencies.",
        ),
        (
            "I'll store the links in SQLite through the standard library's sqlite3 module rather than SQLAlchemy: "
            "it's one table, and an ORM would be the project's only dependency.",
            "I'll store the links in SQLite through the standard library's sqlite3 module rather than SQLAlchemy: "
            "it's one table, and an ORM would be the project's only dependency.",
        ),
        ("I decided to cache the rates in Redis with a one-hour TTL.", None),
        ("Going with httpx over requests since we need async.", None),
        ("I'm switching the queue to RabbitMQ because Kafka is too heavy for one consumer.", None),
    ],
)
def test_the_assistants_reasoned_choices_are_decisions(assistant: str, expected: str | None) -> None:
    assert found("go ahead", assistant) == [("decision", expected or assistant)]


@pytest.mark.parametrize(
    "user",
    [
        "We decided to ship the cart behind a feature flag.",
        "Let's use Postgres for the job queue.",
        "Going with FastAPI for the admin API.",
        "Use ruff instead of flake8 and black.",
        "Switching to pnpm, npm is too slow on CI.",
    ],
)
def test_the_users_choices_are_decisions(user: str) -> None:
    assert categories(heuristic_candidates([turn(1, user)], SESSION)) == ["decision"]


def test_a_choice_that_settles_the_sentence_before_carries_it() -> None:
    assert found("SQLAlchemy is overkill for three tables. Ok, let's stay with plain sqlite3 then.") == [
        ("decision", "SQLAlchemy is overkill for three tables. Let's stay with plain sqlite3.")
    ]


def test_a_reason_in_the_next_sentence_belongs_to_the_decision() -> None:
    assert found("Let's use uv for the environment. It keeps CI and local installs identical.") == [
        ("decision", "Let's use uv for the environment. It keeps CI and local installs identical.")
    ]


def test_an_option_the_assistant_advises_against_is_rejected_with_its_reason() -> None:
    turns = [
        turn(
            1,
            "Should we use Celery for the emails?",
            ("I'd rather not. Celery needs a broker we don't run, and the emails fit in a thread pool.",),
        ),
        turn(2, "Thanks, anything else?"),
    ]
    ((category, text),) = [(c.category, c.text) for c in heuristic_candidates(turns, SESSION)]
    assert category == "rejected_alternative"
    assert text == "Celery rejected: Celery needs a broker we don't run, and the emails fit in a thread pool."


def test_the_users_answer_makes_chosen_rejected_and_why_one_decision() -> None:
    turns = [
        turn(
            1,
            "Should we use SQLAlchemy instead? Might make migrations easier later.",
            ("I'd rather not. SQLAlchemy would be the first dependency of a project that is meant to have none.",),
        ),
        turn(2, "Ok, let's stay with plain sqlite3 then. Add slugs next."),
    ]
    (decision,) = heuristic_candidates(turns, SESSION)
    assert (decision.category, decision.seq) == ("decision", 2)
    assert decision.text == (
        "Let's stay with plain sqlite3, not SQLAlchemy: SQLAlchemy would be the first dependency of a project that "
        "is meant to have none."
    )


def test_the_same_choice_stated_twice_is_one_memory() -> None:
    turns = [
        turn(1, "Store links.", ("I'll use sqlite3 rather than SQLAlchemy because we have one table.",)),
        turn(2, "We decided: sqlite3, not SQLAlchemy."),
    ]
    assert categories(heuristic_candidates(turns, SESSION)) == ["decision"]


# ------------------------------------------------------------------------------------ conventions
@pytest.mark.parametrize(
    "user",
    [
        "CI runs Python 3.9, so no `X | None` syntax, use Optional.",
        "Keep it dependency-free, standard library only.",
        "No new dependencies without asking me.",
        "Never commit the .env file.",
        "From now on, run the linter before every commit.",
        "Don't touch the generated protobuf files.",
        "The service must run on Node 18, the hosting provider has nothing newer.",
        "We use conventional commit messages.",
    ],
)
def test_conventions_and_constraints(user: str) -> None:
    assert categories(heuristic_candidates([turn(1, user)], SESSION)) == ["convention"]


@pytest.mark.parametrize(
    "user",
    [
        "Don't use mocks for the store tests, they hid a locking bug last time.",
        "We decided against Redis for the session cache.",
        "MongoDB is not an option here, the ops team only runs Postgres.",
        "Kubernetes would be overkill for two containers.",
    ],
)
def test_rejected_alternatives(user: str) -> None:
    assert categories(heuristic_candidates([turn(1, user)], SESSION)) == ["rejected_alternative"]


# ------------------------------------------------------------------------------------------ facts
@pytest.mark.parametrize(
    "text",
    [
        "The API listens on port 8080 in development.",
        "Run the integration tests with `make itest`.",
        "Production runs Postgres 15.",
        "The dev server starts on localhost:5173.",
    ],
)
def test_environment_facts(text: str) -> None:
    assert categories(heuristic_candidates([turn(1, text)], SESSION)) == ["fact"]


# ---------------------------------------------------------------------------------------- chatter
@pytest.mark.parametrize(
    "text",
    [
        "Should we use SQLAlchemy instead?",
        "What about using Redis for this?",
        "If we switched to Go, would it be faster?",
        "Maybe we should always squash commits.",
        "thanks! looks good",
        "Can you run the tests on port 8080?",
        "Let's go with that.",
        "Don't worry about the flaky test.",
        "```python\n# always use this helper\nDECISION = 'we decided to use X'\n```",
        "> Never use print in production code",
        "For example, use Optional instead of X | None.",
    ],
)
def test_user_chatter_questions_hypotheticals_and_code_are_not_memories(text: str) -> None:
    assert heuristic_candidates([turn(1, text)], SESSION) == []


@pytest.mark.parametrize(
    "text",
    [
        "I'll use grep to find the price fields.",
        "Let me run the tests on port 8080 first.",
        "Instead of guessing, I read the file.",
        "I'll run `pytest -q` now.",
        "Done: `linkshort add URL` stores the link and prints a code. The test passes.",
        "You're welcome! Let me know if you want anything else.",
        "I added the migration and updated the README.",
        "Files changed: linkshort/slug.py, tests/test_slug.py.",
    ],
)
def test_assistant_narration_is_not_a_memory(text: str) -> None:
    assert heuristic_candidates([turn(1, "go on", (text,))], SESSION) == []


# ---------------------------------------------------------------------------------------- lessons
MEMORY_DB_FAIL = """\
F                                                                        [100%]
E       sqlite3.OperationalError: no such table: links
1 failed in 0.05s
"""


def test_a_failure_and_its_explanation_make_a_lesson_not_a_symptom() -> None:
    turns = [
        turn(
            1,
            "Add the store.",
            (
                "The failure is about `:memory:`: an in-memory SQLite database exists only for the connection that "
                "opened it, so the table created on one connection is gone on the next. I'll keep a single "
                "connection per Store.",
                "Done, the tests pass.",
            ),
            (bash("pytest -q", MEMORY_DB_FAIL + "exit code 1"), edit("src/store.py"), bash("pytest -q", "1 passed")),
        )
    ]
    (lesson,) = heuristic_candidates(turns, SESSION)
    assert lesson.category == "gotcha"
    assert "exists only for the connection" in lesson.text and "single connection per Store" in lesson.text
    assert "OperationalError" in lesson.text and "fixed by editing" not in lesson.text
    assert "no such table" not in lesson.text  # the error's own text is never copied


def test_a_slip_or_an_unexplained_edit_is_no_lesson() -> None:
    fail = "E   NameError: name 're' is not defined\n1 failed\nexit code 1"
    slip = [turn(1, "Add slugs.", ("Forgot to import `re`.",), (bash("pytest", fail), bash("pytest", "2 passed")))]
    silent = [turn(1, "Add slugs.", (), (bash("pytest", fail), edit("src/slug.py"), bash("pytest", "2 passed")))]
    assert heuristic_candidates(slip, SESSION) == [] and heuristic_candidates(silent, SESSION) == []


def test_a_failure_fixed_by_a_command_is_kept_with_the_command() -> None:
    tools = (
        bash("npm test", "Error: Cannot find module 'decimal.js'\nexit code 1"),
        bash("ls node_modules"),
        bash("npm install decimal.js"),
        bash("npm test", "Tests 12 passed (12)"),
    )
    (lesson,) = heuristic_candidates([turn(1, "Run the web tests.", (), tools)], SESSION)
    assert lesson.text == ("`npm test` failed (exit code 1); fixed by running `npm install decimal.js`.")


# ------------------------------------------------------------------------------------------ todos
def todowrite(*items: tuple[str, str]) -> ToolCall:
    todos = [{"content": c, "status": s, "priority": "medium", "id": str(i)} for i, (c, s) in enumerate(items)]
    return ToolCall("todowrite", "t", "completed", {"todos": todos}, "ok")


def test_a_todo_said_and_listed_is_one_memory() -> None:
    turns = [
        turn(
            1,
            "TODO: add an expiry date to links",
            ("Still open: links should get an expiry date (a `links.expires_at` column).",),
            (todowrite(("Add an expiry date to links (links.expires_at)", "pending")),),
        )
    ]
    assert [c.text for c in heuristic_candidates(turns, SESSION)] == [
        "TODO: Add an expiry date to links (links.expires_at)."
    ]


def test_closed_and_in_progress_todos_are_not_open_todos() -> None:
    turns = [turn(1, "We still need to add rate limiting to the login endpoint.")]
    done = [Todo("Add rate limiting to the login endpoint", "completed"), Todo("Add the open command", "in_progress")]
    assert heuristic_candidates(turns, SESSION, done) == []


@pytest.mark.parametrize(
    "text",
    [
        "Later: add pagination to the links list.",
        "Don't forget to bump the version before the release.",
        "We haven't written tests for the CLI yet.",
        "Leave the Windows support for a follow-up.",
    ],
)
def test_todo_phrasings(text: str) -> None:
    assert categories(heuristic_candidates([turn(1, text)], SESSION)) == ["todo"]


def test_a_question_about_work_left_is_no_todo() -> None:
    assert heuristic_candidates([turn(1, "Do we still need to add tests for the CLI?")], SESSION) == []
