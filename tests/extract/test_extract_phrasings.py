"""The rules on phrasings that carry no choice verb and no always/never (issue 15's held-out analysis): each
pattern on realistic positive phrasings, and on the questions, hypotheticals, narration and code that must stay
chatter. None of these sentences is in the extraction benchmark's corpora: the patterns are English, not the
corpus's words."""

from __future__ import annotations

import pytest

from codememory.capture.turns import ToolCall
from codememory.extract import heuristic_candidates
from codememory.extract.rules import classify
from codememory.extract.todos import enumerated_todos
from support.extraction import SESSION, turn


def kinds(sentence: str, role: str = "assistant") -> list[str]:
    return [s.category for s in classify(sentence, role=role)]


def found(user: str, *assistant: str, tools: tuple[ToolCall, ...] = ()) -> list[tuple[str, str]]:
    return [(c.category, c.text) for c in heuristic_candidates([turn(1, user, assistant, tools)], SESSION)]


def failed(command: str, output: str) -> ToolCall:
    # as capture records it: a shell call that exited non-zero is an "error" (capture.turns.shell_status)
    return ToolCall("bash", "c1", "error", {"command": command}, output, exit_code=1)


def ok(command: str, output: str = "") -> ToolCall:
    return ToolCall("bash", "c2", "completed", {"command": command}, output, exit_code=0)


# -------------------------------------------------------------------------------------- decisions
@pytest.mark.parametrize(
    "sentence",
    [
        "SQLite it is: one file, no server to run.",
        "Server-sent events it is, since the updates only flow one way.",
        "For the job queue we're using RabbitMQ, so retries survive a restart.",
        "For logging I'll go with structlog.",
        "A single t3.small is plenty for the internal dashboard.",
        "Audit entries get their own table, keyed by the order id.",
    ],
)
def test_choices_without_a_choice_verb_are_decisions(sentence: str) -> None:
    assert kinds(sentence) == ["decision"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Leave the config as it is.",
        "Here it is.",
        "Whatever it is, the cache hides it.",
        "For now I'll run the tests again.",
        "For example, we're using the default port.",
        "Is SQLite enough for this?",
        "One retry is enough for now.",
        "It gets its own file.",
    ],
)
def test_their_lookalikes_are_not(sentence: str) -> None:
    assert kinds(sentence) == []


def test_a_recommendation_the_user_settles_in_a_few_words_is_one_decision_with_its_reason() -> None:
    answer = "I'd use httpx with a shared client. Requests has no async support, and the scraper is async end to end."
    turns = [turn(1, "Which HTTP client should the scraper use?", (answer,)), turn(2, "Fine, httpx it is. Wire it in.")]
    decisions = [c for c in heuristic_candidates(turns, SESSION) if c.category == "decision"]
    assert [c.text for c in decisions] == [
        "I'd use httpx with a shared client. Requests has no async support, and the scraper is async end to end."
    ]


# ------------------------------------------------------------------------------------- rejections
@pytest.mark.parametrize(
    "sentence",
    [
        "Kubernetes is tempting, but it is a lot to operate for two services.",
        "GraphQL looks attractive, but the clients only ever need three fixed queries.",
        "A message bus adds a second system to operate for one consumer, so I'd rule that out.",
        "Every write rewrites the whole file, so a flat JSON file can't scale here.",
        "We considered DynamoDB, but the reports need ad-hoc joins.",
    ],
)
def test_options_weighed_and_turned_down_are_rejections(sentence: str) -> None:
    assert kinds(sentence) == ["rejected_alternative"]


@pytest.mark.parametrize(
    "sentence",
    [
        "It is tempting to skip the tests, but let's not.",
        "I looked at the logs, but nothing stands out.",
        "I tried running it again, but it still hangs.",
        "Should we rule that out?",
        "If the queue is tempting, but slow, tell me.",
    ],
)
def test_narration_and_questions_that_sound_like_rejections_are_not(sentence: str) -> None:
    assert "rejected_alternative" not in kinds(sentence)


def test_a_weighed_option_joins_the_choice_stated_before_it() -> None:
    assistant = (
        "An advisory lock in Postgres around the import job. I thought about a lock file on the shared volume, "
        "but two hosts mount it with different caching."
    )
    assert found("How do we stop two imports at once?", assistant) == [
        ("decision", assistant),
    ]


def test_the_usual_alternative_after_a_decision_is_part_of_it() -> None:
    assistant = (
        "For the session secret I'm using the platform's secret store, so rotation needs no deploy. "
        "The usual .env file would leave the secret in every developer's shell history."
    )
    assert found("Set up sessions.", assistant) == [("decision", assistant)]


# ------------------------------------------------------------------------------------ conventions
@pytest.mark.parametrize(
    "sentence",
    [
        "Ground rules: nobody pushes to main directly.",
        "Two rules for this service: handlers stay thin and all SQL lives in the repository layer.",
        "No one deploys on Fridays.",
        "The wire format has to stay backwards compatible with the 2.x clients.",
        "I need the p95 latency to stay under 200 ms, otherwise the SLA breaks.",
        "The linters have to pass before you open a PR.",
    ],
)
def test_user_rules_not_phrased_always_or_never_are_conventions(sentence: str) -> None:
    assert kinds(sentence, role="user") == ["convention"]


@pytest.mark.parametrize(
    "sentence",
    [
        "Nobody knows why the job hangs.",
        "I have to stay late today.",
        "What are the rules here?",
        "The tests have to pass.",
    ],
)
def test_chatter_with_rule_words_is_not_a_convention(sentence: str) -> None:
    assert kinds(sentence, role="user") == []


def test_an_assistant_never_sets_a_rule_by_saying_rules() -> None:
    assert kinds("Ground rules: nobody pushes to main directly.", role="assistant") == []


# ------------------------------------------------------------------------------------------ facts
@pytest.mark.parametrize(
    ("sentence", "role"),
    [
        ("For the record, the build box runs Node 20.11 and pnpm 8.15.", "user"),
        ("The staging server has OpenSSL 3.0 installed.", "user"),
        ("The fixtures are stored under /srv/fixtures/shop.", "user"),
        ("On a laptop without Docker, run `make test-unit` instead.", "assistant"),
        ("To lint and format: `make fmt lint`.", "assistant"),
        ("To build: `cargo build --release --locked`.", "assistant"),
    ],
)
def test_facts_given_in_passing_are_facts(sentence: str, role: str) -> None:
    assert kinds(sentence, role=role) == ["fact"]


@pytest.mark.parametrize(
    "sentence",
    [
        "The endpoint now returns 404 for unknown ids, see `curl localhost:8080/items/9`.",
        "The report now formats dates with `strftime`.",
        "The ctest run with `--output-on-failure` failed because the fixture is missing.",
        "For the record, I'm not sure what runs where.",
    ],
)
def test_changes_reported_and_failure_talk_are_not_facts(sentence: str) -> None:
    assert kinds(sentence) == []


# --------------------------------------------------------------------------------------- caveats
def test_a_caveat_about_when_something_is_needed_is_a_gotcha() -> None:
    assert kinds("On Postgres there's no need for a separate sequence table; that's only for MySQL.") == ["gotcha"]
    assert kinds("There's no need to rerun it; that's only for now.") == []
    assert kinds("No need for a retry here.") == []


# -------------------------------------------------------------------------------------------- todos
def test_two_todos_in_one_sentence_are_two_todos() -> None:
    assert enumerated_todos("Two things remain open: the CSV export for admins, and paging on the orders page.") == [
        "The CSV export for admins.",
        "Paging on the orders page.",
    ]
    assert enumerated_todos("Two things remain open: caching.") == []
    assert enumerated_todos("Things are open: yes, and no.") == []
    said = "Still open: a retry for the webhook call, and rate limits on the public API."
    todos = [c.text for c in heuristic_candidates([turn(1, "", (said,))], SESSION) if c.category == "todo"]
    assert todos == ["TODO: A retry for the webhook call.", "TODO: Rate limits on the public API."]


# ---------------------------------------------------------------------------------------- lessons
LOCK_OUTPUT = "Error: timeout acquiring the deploy lock\nlock held by job 4711 (nightly-backup)\n"
MIGRATE_OUTPUT = "Error: column orders.region does not exist\nmigration 0042 expects column region\n"


def test_the_lesson_is_the_sentence_that_explains_the_failure_not_the_plan_before_it() -> None:
    assistant = (
        "The report should stay out of the request path: rendering takes seconds, so it moves to a worker.",
        "The nightly backup job holds the deploy lock until it finishes, but the deploy only waits 30 seconds "
        "for it. Deploys have to wait for the backup window to end.",
    )
    tools = (failed("./deploy.sh staging", LOCK_OUTPUT), ok("./deploy.sh staging"))
    lessons = [text for category, text in found("Deploy it.", *assistant, tools=tools) if category == "gotcha"]
    assert len(lessons) == 1
    assert lessons[0].startswith("The nightly backup job holds the deploy lock until it finishes")
    assert "Deploys have to wait for the backup window" in lessons[0]


def test_a_later_failure_with_other_output_is_its_own_lesson() -> None:
    assistant = (
        "The nightly backup job holds the deploy lock until it finishes, so the deploy times out.",
        "Migration 0042 expects the region column, which was never created on staging because 0041 was skipped.",
    )
    tools = (
        failed("./deploy.sh staging", LOCK_OUTPUT),
        ok("./wait-for-backup.sh"),
        failed("./deploy.sh staging", MIGRATE_OUTPUT),
        ok("./migrate.sh staging 0041"),  # a lesson says what fixed it: here, running the skipped migration
    )
    lessons = [text for category, text in found("Deploy it.", *assistant, tools=tools) if category == "gotcha"]
    assert len(lessons) == 2 and "lock" in lessons[0] and "0042" in lessons[1]


def test_a_bug_the_user_reports_and_its_explained_fix_is_a_lesson_without_a_failing_tool() -> None:
    assistant = (
        "The webhook handler acknowledges after processing, so a slow handler makes the sender retry and each "
        "retry is processed again. Acknowledging first and processing from the queue makes a retry a no-op."
    )
    lessons = [t for c, t in found("Bug: every order confirmation is sent twice.", assistant) if c == "gotcha"]
    assert len(lessons) == 1
    assert lessons[0].startswith("The webhook handler acknowledges after processing")
    assert "(reported: Bug: every order confirmation is sent twice.)" in lessons[0]


def test_no_lesson_from_a_report_the_assistant_does_not_explain() -> None:
    assert found("Bug: the logo is blurry on retina screens.", "Let me look at the image assets.") == []
    assert found("Why is the logo blurry?", "Because it is a 1x PNG, so retina screens upscale it.") == []


def test_a_summary_that_restates_a_lesson_is_not_stored_again() -> None:
    assistant = (
        "The e2e suite starts the browser through Playwright, so it needs the browsers installed with "
        "`npx playwright install`, and they were missing.",
        "Unit tests: `npm test`; e2e tests (Playwright, need the browsers installed): `npm run e2e`.",
    )
    tools = (failed("npm run e2e", "Error: browserType.launch: Executable doesn't exist\n"), ok("npm run e2e"))
    memories = found("Run all the tests.", *assistant, tools=tools)
    assert [c for c, _ in memories] == ["gotcha"]
