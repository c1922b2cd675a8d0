"""A sentence's mood (text.mood) and what it keeps out of memory: a question, the assistant's narration of its own
steps and a printed line are never a decision, a rule, a fact or a lesson, whatever else the sentence holds. The
sentences here are written for these tests, not taken from the benchmark sets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from codememory.extract.candidate import ASSISTANT, USER, Candidate
from codememory.extract.gotchas import gotcha_candidates
from codememory.extract.heuristic import heuristic_candidates, in_a_memory_s_mood
from codememory.extract.rules import classify
from codememory.text.mood import asks, conjectures, logged, mood, narration
from support.extraction import bash, edit, turn

QUESTIONS = [
    "Should we pin the protobuf version",  # no "?": the form asks
    "do you want the cache in redis or on disk",
    "Want me to move the fixtures into conftest",
    "Why does the worker restart every night",
    "What about the old API tokens",
    "Is the staging bucket public?",
    "So, can I drop the legacy column)",
    "The migration runs before the deploy, right",
    "should invoices be numbered per year",
]
NOT_QUESTIONS = [
    "Do not commit the generated client.",
    "When the queue is empty the worker sleeps for a minute.",
    "Which is why the tokens expire after an hour.",
    "How we release: tag, then the pipeline publishes.",
    "Do it with the provider's default labels, not one resource at a time.",  # "do" + object: a command
    "Have it retry twice before giving up.",
    "Could not be simpler: one table, one index.",
]


@pytest.mark.parametrize("sentence", QUESTIONS)
def test_a_question_is_read_from_its_form_with_or_without_its_question_mark(sentence: str) -> None:
    assert asks(sentence) and mood(sentence) == "question"


@pytest.mark.parametrize("sentence", NOT_QUESTIONS)
def test_a_statement_that_opens_on_a_question_word_states(sentence: str) -> None:
    assert not asks(sentence)


PLANS = [
    "Let me look at the nginx config first.",
    "Ok, let's see what the linter says.",
    "Now I'll rename the column in the model too.",
    "Next, I'm going to split the view into two templates.",
    "First I'll run the migrations on a copy.",
    "I'll check whether the cron job still exists.",
    "Next: the settings page and its tests.",
]
STEPS = [
    "Opening the Dockerfile first, and the image build is broken on its own for now.",
    "Rewriting the loader with a generator: it streams the rows one by one.",
    "Moving the constants into settings.py.",
    "I'm updating the lockfile now.",
]
NOT_NARRATION = [
    "Caching the token saves a round trip on every request.",
    "Parsing dates with strptime ignores the time zone.",
    "Deploying on Fridays is not allowed.",
    "Logging goes to stderr so journald keeps it.",
    "I'll use httpx instead of requests because it has timeouts per call.",
    "Nothing past Python 3.9 runs on the build box.",
    "The settings file is read once at start-up.",
]


@pytest.mark.parametrize("sentence", PLANS)
def test_the_plan_of_the_next_step_is_narration(sentence: str) -> None:
    assert narration(sentence) == "plan"


@pytest.mark.parametrize("sentence", STEPS)
def test_a_step_under_way_is_narration(sentence: str) -> None:
    assert narration(sentence) == "step"


@pytest.mark.parametrize("sentence", NOT_NARRATION)
def test_a_gerund_subject_or_a_choice_with_its_reason_is_no_narration(sentence: str) -> None:
    assert narration(sentence) is None and mood(sentence) == "statement"


LOG_LINES = [
    "2025-10-02 08:14:55,120 ERROR worker: connection reset by peer",
    "[WARN] disk usage above 90%",
    "E       AssertionError: expected 3 rows, got 2",
    "npm ERR! code ERESOLVE",
    "src/billing/tax.py:88: error: Incompatible return value type",
    "level=error ts=2025-10-02T08:14:55Z msg=timeout",
    "14:02:11 retrying upload in 5s",
]


@pytest.mark.parametrize("line", LOG_LINES)
def test_a_printed_line_is_a_log_line(line: str) -> None:
    assert logged(line) and mood(line) == "log"


@pytest.mark.parametrize("sentence", ["Error messages go to the user in German.", "Timestamps are stored in UTC."])
def test_a_sentence_about_errors_or_times_is_no_log_line(sentence: str) -> None:
    assert not logged(sentence)


def test_no_prose_rule_reads_a_question_a_plan_or_a_printed_line() -> None:
    assert classify("should we always use tabs in the makefiles", role="user") == []
    assert classify("Now I'll always run the formatter before committing.", role="assistant") == []
    assert classify("2025-10-02 08:14:55 WARN never retry a failed payment", role="user") == []
    # the same rules, stated, are rules
    assert classify("We always use tabs in the makefiles.", role="user")
    assert classify("Never retry a failed payment.", role="user")


def test_a_step_under_way_is_a_choice_only_when_it_says_why() -> None:
    assert classify("Switching to pnpm.", role="assistant") == []
    said = classify("Switching to pnpm instead of npm because the workspace links need it.", role="assistant")
    assert said and said[0].rule == "decision"
    # a user's terse fragment is an instruction, not narration
    assert classify("Switching to pnpm because npm is too slow here.", role="user")


def test_narration_next_to_a_failure_is_no_lesson() -> None:
    failing = bash("python3 check_env.py", "Traceback (most recent call last):\nRuntimeError: boom", "error")
    said = ("Opening README.md first, and the env check fails on its own for now.",)
    turns = [turn(1, "Add a JSON export of the orders.", said, (failing,))]
    assert gotcha_candidates(turns) == []
    assert not [c for c in heuristic_candidates(turns) if c.category in ("gotcha", "fact", "convention")]


def test_a_failure_explained_is_still_a_lesson() -> None:
    failing = bash("pytest -q", "E   sqlite3.OperationalError: no such table: orders\n1 failed", "error")
    explained = (
        "The in-memory SQLite database is per connection, so the fixture's tables were never created on the "
        "test's connection. I'll share one connection between the fixture and the app."
    )
    lessons = gotcha_candidates([turn(1, "Fix the order tests.", (explained,), (failing,))])
    assert lessons and "per connection" in lessons[0].text


@pytest.mark.parametrize(
    ("text", "category", "said_by", "kept"),
    [
        ("Now I'll wire the exporter into the CLI.", "decision", ASSISTANT, False),
        ("Adding the retry wrapper: three attempts, five seconds apart.", "gotcha", ASSISTANT, False),
        ("Switching to orjson instead of json: it is three times faster on our payloads.", "decision", ASSISTANT, True),
        ("INFO: exporter started on port 8080", "fact", ASSISTANT, False),
        ("should the exporter run hourly", "convention", USER, False),
        ("Where does it run? On the office NAS, no root there.", "fact", USER, True),
        ("Using UTC everywhere.", "convention", USER, True),
        ("The exporter needs the NAS mounted, or it writes to the SD card.", "gotcha", ASSISTANT, True),
    ],
)
def test_every_memory_opens_on_a_statement(text: str, category: str, said_by: str, kept: bool) -> None:
    candidate = Candidate(text, category, 0.5, 1, (), rule=category, said_by=said_by)
    assert in_a_memory_s_mood(candidate) is kept


CAUSE = "The report job reads the config before the vault is unsealed, because the unit has no ordering on vault."
VAULT_FAIL = "Error: config key db.password is empty\nexit status 1\n"


def test_a_lesson_says_what_fixed_it_said_done_or_seen_passing() -> None:
    failing = bash("./report.sh", VAULT_FAIL, "error")
    fix_said = f"{CAUSE} I'll add After=vault.service to the unit so it waits for the unseal."
    assert gotcha_candidates([turn(1, "Run the report.", (fix_said,), (failing,))])
    # the fix done: a file changed after the failure, or the same command passing later
    done = (failing, edit("deploy/report.service"))
    assert gotcha_candidates([turn(1, "Run the report.", (CAUSE,), done)])
    passed = (failing, bash("systemctl restart vault-unseal"), bash("./report.sh", "report written"))
    assert gotcha_candidates([turn(1, "Run the report.", (CAUSE,), passed)])


def test_a_failure_explained_and_left_as_it_was_is_no_lesson() -> None:
    failing = bash("./report.sh", VAULT_FAIL, "error")
    looked = (failing, bash("cat deploy/report.service"))  # looking changes nothing
    assert gotcha_candidates([turn(1, "Run the report.", (CAUSE,), looked)]) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "No clue who set that flag, the previous admin must have turned it on for a demo.",
        "The nightly job might have skipped the Sunday backup when the disk filled up.",
    ],
)
def test_a_conjecture_about_the_past_is_no_rule(sentence: str) -> None:
    assert conjectures(sentence)
    assert classify(sentence, role="user") == []


@pytest.mark.parametrize(
    "sentence",
    ["Every release must have a changelog entry.", "Builds must never have debug symbols stripped on staging."],
)
def test_an_obligation_to_have_something_is_still_a_rule(sentence: str) -> None:
    assert not conjectures(sentence)
    assert classify(sentence, role="user")


def test_the_fix_told_as_a_step_stays_in_the_lesson_and_a_step_alone_is_none() -> None:
    failing = bash("make check", "FAIL: expected 0.3, got 0.30000000000000004\nmake: *** [check] Error 1", "error")
    said = (
        "The totals are summed as binary floats instead of decimals, so 0.1 three times never equals 0.3 in the check. "
        "Switching the totals to decimal.Decimal."
    )
    passing = bash("make check", "all checks passed")

    def lessons(*texts: str) -> list[str]:
        # the texts come right after the failing call, before the fix (text_calls: calls before each text)
        said_after_the_failure = replace(
            turn(1, "Run the checks.", texts, (failing, edit("totals.py"), passing)), text_calls=(1,) * len(texts)
        )
        return [c.text for c in gotcha_candidates([said_after_the_failure])]

    got = lessons(said)
    assert got and "binary floats" in got[0] and "decimal.Decimal" in got[0], got
    assert lessons("Switching the totals over to decimal.Decimal in the module and in every one of its callers.") == []


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Could you never touch the generated files, please.", "Never touch the generated files."),
        ("Can you always run ruff before committing?", "Always run ruff before committing."),
        ("WARNING: never run migrations on prod without a backup.", "never run migrations on prod"),
    ],
)
def test_a_users_polite_or_prefixed_rule_is_the_users_convention_and_no_one_elses(said: str, kept: str) -> None:
    mine = heuristic_candidates([turn(1, f"{said}\nThen add the export.", ("Done.",))])
    assert [(c.category, c.said_by) for c in mine if kept in c.text] == [("convention", USER)]
    # the same words from the assistant, or in what a tool printed, are not the user's convention
    told = heuristic_candidates([turn(1, "Add the export.", (said,))])
    printed = heuristic_candidates([turn(1, "Run the migrations.", ("Ran them.",), (bash("./migrate.sh", said),))])
    assert not [c for c in [*told, *printed] if c.said_by == USER or c.category == "convention"]


@pytest.mark.parametrize(
    ("sentence", "kept"),
    [
        ("Has to be UTC everywhere in the logs", True),  # chat drops the final period: still a rule
        ("Should always use pnpm for this repo", True),
        ("Do the migration first before the deploy", True),
        ("should we pin the version here", False),
        ("what does the cache hold after a restart", False),
        ("is the staging box still on postgres 14?", False),
    ],
)
def test_a_sentence_is_kept_or_asked_by_its_mood_with_or_without_its_final_period(sentence: str, kept: bool) -> None:
    from codememory.extract.rules import usable

    assert usable(sentence) is kept
