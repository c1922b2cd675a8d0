"""Use signals (capture/usage.py): what a session did with the memories it was shown, read from each captured turn
against the exposures the injection ledger wrote. Each signal has a case where it fires and one where it must not;
the turns go through `write_turn`, the one path every capture source records a turn through."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codememory.capture.hook_transcripts import capture_transcript
from codememory.capture.tool_actions import action_of
from codememory.capture.turns import ToolCall, Turn
from codememory.capture.usage import observe_turn
from codememory.service.project_store import Store
from support.usage import SESSION, add, call, capture, exposure, shown, turn

LIMIT = "The photo size limit is UPLOAD_MAX_BYTES in app/api/photos.py (10 MB since the 2.0 app)."
PYTEST = "Never run `pytest` bare: use `scripts/test`, which starts the database first."
EXPORT = "CSV exports are encoded as utf-8-sig so that Excel reads them as UTF-8."
SEP = "Do not add a `sep=,` first line to CSV exports: Excel shows it as data."


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    with Store.open(project) as opened:
        yield opened


# ------------------------------------------------------------------------------------------- cues kept
def test_a_turn_reads_the_memory_as_it_was_shown_from_the_exposure(store: Store) -> None:
    """The cues are kept with the exposure when the memory is first shown: a later edit of the memory does not
    change what the session is judged against, and the turn parses no memory text."""
    limit = add(store, LIMIT)
    shown(store, limit)
    kept = json.loads(store.db.session_exposures(SESSION)[0].cues or "")
    assert ["app/api/photos.py", "path"] in kept["terms"] and kept["rules"] == []
    assert ["25", "number"] not in kept["terms"]  # nor anything of the query it was shown for
    store.edit(limit, text="The photo size limit lives in settings.toml now.")
    capture(store, turn(call("bash", 1, command="sed -i 's/10/25/' app/api/photos.py")))
    assert exposure(store, limit)["used_by"] == "entity"


def test_cues_that_do_not_read_back_are_computed_again(store: Store) -> None:
    rule = add(store, PYTEST)
    shown(store, rule, at_query="run the tests")
    store.db.conn.execute("UPDATE memory_exposures SET cues = '{\"terms\": 7}'")  # the file is untrusted input
    assert store.db.session_exposures(SESSION)[0].cues == '{"terms": 7}'
    capture(store, turn(call("bash", 1, command="pytest -q")))
    assert exposure(store, rule)["contradicted_at"] is not None


# ------------------------------------------------------------------------------------------- entity
def test_a_memorys_name_written_by_a_later_edit_is_a_use(store: Store) -> None:
    limit = add(store, LIMIT)
    shown(store, limit)
    edit = call("edit", 1, filePath=f"{store.root}/app/api/upload.py", oldString="A", newString="UPLOAD_MAX_BYTES")
    capture(store, turn(edit))
    got = exposure(store, limit)
    assert got["used_by"] == "entity" and "UPLOAD_MAX_BYTES" in got["evidence"]
    record = store.db.usefulness([limit], "2099-01-01T00:00:10.000Z")[limit]
    assert (record.shown_total, record.used_total) == (1, 1)


def test_an_edit_applies_a_memory_only_by_what_it_writes_not_by_the_file_it_edits(store: Store) -> None:
    """The memory names the file; an edit of that file for another reason (its own text, none of the memory's
    values) is no use of it: OpenCode shows a memory naming a file once the agent opens that file, whatever the
    edit that follows is for. The same file edited to write the memory's value uses it."""
    limit = add(store, LIMIT)
    shown(store, limit, at_query="tidy the photo handler")
    path = f"{store.root}/app/api/photos.py"
    capture(store, turn(call("edit", 1, filePath=path, oldString="def f(x):", newString="def f(x: int):")))
    assert exposure(store, limit)["used_at"] is None
    capture(
        store, turn(call("edit", 2, filePath=path, oldString="10 *", newString="UPLOAD_MAX_BYTES = 25 *"), turn_id="m2")
    )
    assert exposure(store, limit)["evidence"] == "edit: UPLOAD_MAX_BYTES"


def test_an_edit_that_takes_out_what_the_memory_forbids_uses_it(store: Store) -> None:
    sep = add(store, SEP)
    shown(store, sep, at_query="fix the CSV export header")
    old, new = 'out.write("sep=,\\n")\nwriter.writerow(header)', "writer.writerow(header)"
    capture(store, turn(call("edit", 1, filePath="app/export.py", oldString=old, newString=new)))
    got = exposure(store, sep)
    assert got["used_by"] == "entity" and got["evidence"] == "edit: removes sep=," and got["contradicted_at"] is None


def test_taking_out_what_the_request_names_is_the_users_ask_not_a_use(store: Store) -> None:
    """The user asked for the `sep=,` line to go: the edit removing it does what the request says, whatever memory
    also forbids it (as a name the request gives is no evidence when an edit writes it)."""
    sep = add(store, SEP)
    shown(store, sep, at_query="fix the CSV export header")
    old, new = 'out.write("sep=,\\n")\nwriter.writerow(header)', "writer.writerow(header)"
    edit = call("edit", 1, filePath="app/export.py", oldString=old, newString=new)
    capture(store, turn(edit, user="drop the sep=, line from the CSV export"))
    assert exposure(store, sep)["used_at"] is None


def test_an_edit_that_keeps_or_never_had_what_the_memory_forbids_does_not_use_it(store: Store) -> None:
    sep = add(store, SEP)
    shown(store, sep, at_query="fix the CSV export header")
    kept = 'out.write("sep=,\\n")\nwriter.writerow(header)'
    capture(store, turn(call("edit", 1, filePath="app/export.py", oldString=kept, newString=kept + "\nflush()")))
    capture(store, turn(call("edit", 2, filePath="app/export.py", oldString="a = 1", newString="a = 2"), turn_id="m2"))
    assert exposure(store, sep)["used_at"] is None


def test_a_file_the_turn_had_opened_before_the_memory_was_shown_is_not_a_use(store: Store) -> None:
    """OpenCode's HUD shows a memory naming the file the agent has just read: that read, and a later look at or
    command on the same file, were the agent's own way, not the memory's. A call after the showing that reaches
    something new of the memory still counts."""
    limit = add(store, LIMIT)
    shown(store, limit, at_query="tidy the handler")  # shown now, after the read made in 1999
    early = ToolCall("read", "c0", "completed", {"filePath": "app/api/photos.py"}, started_at="1999-01-01T00:00:00Z")
    calls = (call("read", 3, filePath="app/api/photos.py"), call("bash", 4, command="ruff check app/api/photos.py"))
    capture(store, turn(early, *calls, user="tidy the handler"))
    assert exposure(store, limit)["used_at"] is None
    capture(store, turn(call("bash", 5, command="grep -rn UPLOAD_MAX_BYTES . && make"), turn_id="m2"))
    assert exposure(store, limit)["evidence"] == "bash: UPLOAD_MAX_BYTES"


def test_what_the_agent_was_asked_already_or_only_read_in_output_is_not_a_use(store: Store) -> None:
    limit = add(store, LIMIT)
    shown(store, limit, at_query="raise UPLOAD_MAX_BYTES in app/api/photos.py to 25 MB")  # the agent's own words
    listing = "app/api/photos.py:3:UPLOAD_MAX_BYTES = 10 * 1024 * 1024"
    capture(
        store,
        turn(
            call(
                "edit", 1, filePath=f"{store.root}/app/api/photos.py", oldString="x", newString="UPLOAD_MAX_BYTES = 1"
            ),
            call("grep", 2, output=listing, pattern="limit"),  # a term in a tool's output is what it read, not did
        ),
    )
    assert exposure(store, limit)["used_at"] is None
    assert store.db.usefulness([limit], "2099-01-01T00:00:10.000Z")[limit].used_total == 0


def test_a_name_the_turns_own_request_gives_is_not_a_use(store: Store) -> None:
    """Shown in an earlier turn, the memory names the file a later request asks to change: editing it is doing as
    asked. A term of the memory the request did not give still counts."""
    limit = add(store, LIMIT)
    shown(store, limit, at_query="which endpoints take uploads?")
    edit = call("edit", 1, filePath="app/api/photos.py", oldString="MAX = 10", newString="MAX = 25")
    capture(store, turn(edit, user="In app/api/photos.py, raise the limit to 25 MB."))
    assert exposure(store, limit)["used_at"] is None
    named = call("edit", 2, filePath="app/api/photos.py", oldString="MAX = 25", newString="UPLOAD_MAX_BYTES = 25")
    capture(store, turn(named, user="In app/api/photos.py, name the constant.", turn_id="msg_2"))
    assert exposure(store, limit)["evidence"] == "edit: UPLOAD_MAX_BYTES"


WEBHOOK = "Payment webhooks are delivered at least once: handle each one once, keyed by the `event_id` they carry."


@pytest.mark.parametrize(
    ("request_text", "query"),
    [
        ("Add Payments.refund/2 (customer, event id) and a test.", "refund a payment"),
        ("Keep the event-id of every delivery we handled.", "refund a payment"),
        ("Add a refund endpoint.", "handle each delivery by its event id"),  # the query it was shown for
    ],
)
def test_a_name_the_request_or_its_query_says_in_words_is_not_a_use(
    store: Store, request_text: str, query: str
) -> None:
    """The request asks for the name in its own words ("event id"): new code that writes `event_id` does as asked,
    whatever memory also names it."""
    hook = add(store, WEBHOOK)
    shown(store, hook, at_query=query)
    code = "def refund(customer, event_id):\n    ..."
    capture(store, turn(call("edit", 1, filePath="app/payments.py", oldString="", newString=code), user=request_text))
    assert exposure(store, hook)["used_at"] is None


def test_a_name_no_request_said_in_any_form_is_still_a_use(store: Store) -> None:
    hook = add(store, WEBHOOK)
    shown(store, hook, at_query="retried payment webhooks pay twice")
    code = 'if seen(event["event_id"]):\n    return'
    edit = call("edit", 1, filePath="app/payments.py", oldString="", newString=code)
    capture(
        store, turn(edit, user="A retried webhook paid an order twice (the event identifier was the same). Fix it.")
    )
    assert exposure(store, hook)["evidence"] == "edit: event_id"


def early_turn(*calls: ToolCall, seq: int = 1, session: str = SESSION) -> Turn:
    """A turn of the session that ended before anything was shown to it (in 2000)."""
    at = "2000-01-01T00:00:00.000Z"
    return Turn("opencode", session, f"msg_early{seq}", seq, at, at, "look around", tool_calls=calls)


def later(*calls: ToolCall, seq: int = 2, user: str = "raise the photo limit") -> Turn:
    return replace(turn(*calls, user=user, turn_id=f"msg_later{seq}"), seq=seq)


def test_a_name_the_session_held_before_the_memory_was_shown_is_not_a_use(store: Store) -> None:
    """The session ran `./gradlew` and listed the file before the memory was shown: running the wrapper again, or
    opening that file, is what the session was doing anyway. A name it first met in the memory still counts."""
    rule = add(store, "Instrumented tests run on the managed device: `./gradlew pixel6Api34DebugAndroidTest`.")
    limit = add(store, LIMIT)
    ls = call("bash", 2, output="app/api/photos.py\napp/api/users.py", command="ls app/api")
    capture(store, early_turn(call("bash", 1, command="./gradlew assembleDebug"), ls))
    shown(store, rule, limit, at_query="make the upload test pass")
    test = call("bash", 1, command="./gradlew testDebugUnitTest")
    edit = call("edit", 2, filePath="app/api/photos.py", oldString="MAX = 10", newString="MAX = 25")
    capture(store, later(test, edit))
    assert exposure(store, rule)["used_at"] is None and exposure(store, limit)["used_at"] is None
    named = call("edit", 1, filePath="app/api/photos.py", oldString="MAX = 25", newString="UPLOAD_MAX_BYTES = 25")
    device = call("bash", 2, command="./gradlew pixel6Api34DebugAndroidTest")
    capture(store, later(named, device, seq=3))
    assert exposure(store, limit)["evidence"] == "edit: UPLOAD_MAX_BYTES"
    assert exposure(store, rule)["evidence"].startswith("bash: pixel6Api34DebugAndroidTest")


def test_what_a_session_held_is_kept_scrubbed_and_its_outputs_only_as_digests(store: Store) -> None:
    """The calls' arguments are kept as text with secrets scrubbed; what their outputs showed only as digests (an
    output may hold what the user marked private)."""
    env = call(
        "bash", 1, output="NOTE=my-private-diary-entry\n" + "x" * 50_000, command="deploy --key AKIAIOSFODNN7EXAMPLE"
    )
    capture(store, early_turn(env))
    [(ended_at, said)] = store.db.seen_before(SESSION, 2)
    assert ended_at == "2000-01-01T00:00:00.000Z" and "deploy --key [redacted:aws]" in said
    assert "akiaiosfodnn7example" not in said and "diary" not in said and len(said) < 10_000
    assert store.db.seen_before(SESSION, 1) == []  # a turn is not before itself


def test_what_the_session_did_after_the_memory_was_shown_is_still_evidence(store: Store) -> None:
    """Only the turns that ended before the memory's first showing count as the session's own: a memory shown first
    and then acted on over several turns is used in each of them as before."""
    limit = add(store, LIMIT)
    shown(store, limit)
    capture(store, later(call("read", 1, output="MAX = 10", filePath="app/api/photos.py"), seq=1))
    assert exposure(store, limit)["used_at"] is None  # a look, not acted on
    edit = call("edit", 1, filePath="app/api/photos.py", oldString="MAX = 10", newString="UPLOAD_MAX_BYTES = 25")
    capture(store, later(edit))
    assert exposure(store, limit)["evidence"] == "edit: UPLOAD_MAX_BYTES"


def test_an_edit_uses_what_it_adds_not_what_it_replaces(store: Store) -> None:
    export = add(store, EXPORT)
    shown(store, export, at_query="fix the export encoding")
    capture(store, turn(call("edit", 1, filePath="app/export.py", oldString='enc = "utf-8-sig"', newString="x = 1")))
    assert exposure(store, export)["used_at"] is None
    capture(
        store,
        turn(call("edit", 2, filePath="app/export.py", oldString='"utf-8"', newString='"utf-8-sig"'), turn_id="m2"),
    )
    assert exposure(store, export)["evidence"].startswith("edit: utf-8-sig")


JOB = "Exports are built by the export_observations arq job; POST /v1/exports only validates and enqueues (202)."


def test_an_edit_that_rewrites_a_line_holding_the_name_does_not_use_it(store: Store) -> None:
    job = add(store, JOB)
    shown(store, job, at_query="add a format parameter to the export endpoint")
    line = '    await enqueue("export_observations", survey_id, user["email"]{})\n'
    capture(
        store,
        turn(call("edit", 1, filePath="app/api/exports.py", oldString=line.format(""), newString=line.format(", fmt"))),
    )
    assert exposure(store, job)["used_at"] is None  # the line was rewritten: the name was the code's already
    capture(
        store,
        turn(call("edit", 2, filePath="app/jobs.py", oldString="x", newString=line.format(", fmt")), turn_id="m2"),
    )
    assert exposure(store, job)["evidence"] == "edit: export_observations"  # new to the code it edits


def test_an_edit_reusing_a_name_its_file_already_had_is_not_a_use(store: Store) -> None:
    """The file as a read earlier in the turn showed it is the code's own vocabulary: a field it already names,
    written again in new code, says nothing about a memory naming it too. A file the turn did not read, or a name
    only another file holds, still counts."""
    timestamps = add(store, "Timestamps are stored in UTC; observed_at from the phone carries the device's offset.")
    shown(store, timestamps, at_query="add a GeoJSON option to the export")
    source = "writer.writerow([obs.id, obs.observed_at.isoformat()])\n"
    geojson = '"properties": {"observed_at": obs.observed_at.isoformat()}\n'
    capture(
        store,
        turn(
            call("read", 1, output=f"00001| {source}", filePath="app/export.py"),
            call("edit", 2, filePath="app/export.py", oldString=source, newString=source + geojson),
        ),
    )
    assert exposure(store, timestamps)["used_at"] is None
    capture(
        store,
        turn(
            call("read", 3, output=f"00001| {source}", filePath="app/export.py"),
            call("edit", 4, filePath="app/geojson.py", oldString="", newString=geojson),
            turn_id="m2",
        ),
    )
    assert exposure(store, timestamps)["evidence"] == "edit: observed_at"


def test_a_file_read_then_acted_on_in_the_turn_is_a_use(store: Store) -> None:
    """A look (a read, a listing, a search) finds the file the memory names; the turn then acts (an edit, a
    command that changes something): the memory said where to go, and the use is dated at the look."""
    limit = add(store, LIMIT)
    shown(store, limit)
    capture(
        store,
        turn(
            call("read", 1, filePath=f"{store.root}/app/api/photos.py"),
            call("edit", 2, filePath=f"{store.root}/deploy/nginx.conf", oldString="10m", newString="25m"),
        ),
    )
    got = exposure(store, limit)
    assert got["evidence"] == "read: app/api/photos.py" and got["used_at"].startswith("2099-01-01T00:00:01")
    rule = add(store, "Migrations are goose SQL files in db/migrations/, one per change.")
    shown(store, rule, at_query="add a notes column", session="ses_ls")
    capture(
        store,
        turn(
            call("bash", 1, command="ls db/migrations | tail -3"),
            call("bash", 2, command="goose -dir db/migrations create notes sql"),
            session="ses_ls",
        ),
    )
    assert exposure(store, rule, "ses_ls")["evidence"] == "bash: db/migrations"
    fetched = add(store, "The upload limits are explained in docs/uploads.md, under Max bytes.")
    shown(store, fetched, at_query="raise the upload cap", session="ses_web")
    web = call("WebFetch", 1, url="https://github.com/acme/shop/blob/main/docs/uploads.md", prompt="the cap")
    edit = call("Edit", 2, file_path="app/api/photos.py", old_string="10", new_string="25")
    capture(store, turn(web, edit, session="ses_web"))
    assert exposure(store, fetched, "ses_web")["evidence"].startswith("WebFetch: ")


@pytest.mark.parametrize(
    "looks",
    [
        [call("read", 1, filePath="app/api/photos.py")],  # read to answer a question
        [call("bash", 1, command="grep -n UPLOAD_MAX_BYTES app/api/photos.py 2>/dev/null | head -3")],
        [call("grep", 1, pattern="UPLOAD_MAX_BYTES", path="app/api")],
        [call("read", 1, filePath="app/api/photos.py"), call("memory_store", 2, text="the limit is 10 MB")],
        [call("shell", 1, command=["bash", "-lc", "sed -n '1,80p' app/api/photos.py"])],  # Codex reads so
        [call("bash", 1, command="git --no-pager grep -n 'UPLOAD_MAX_BYTES =' -- app/")],
        [call("WebFetch", 1, url="https://example.com/blob/main/app/api/photos.py", prompt="UPLOAD_MAX_BYTES?")],
    ],
)
def test_a_file_only_looked_up_is_not_a_use(store: Store, looks: list[ToolCall]) -> None:
    """The version in go.mod, the JDK the CI workflow sets up: a turn that reads or lists what a memory names and
    then only answers looked something up; nothing was done with the memory."""
    limit = add(store, LIMIT)
    shown(store, limit)
    capture(store, turn(*looks))
    assert exposure(store, limit)["used_at"] is None


@pytest.mark.parametrize(
    "command",
    [
        "find app/api/photos.py -exec sed -i 's/10/25/' {} +",
        "grep -c UPLOAD_MAX_BYTES app/api/photos.py > count.txt",
        "(cd app/api && sed -i.bak 's/10/25/' photos.py && grep -n UPLOAD_MAX_BYTES photos.py)",
    ],
)
def test_a_command_that_looks_and_changes_in_one_line_is_a_use(store: Store, command: str) -> None:
    """Lookup programs that write (`-exec`, `-i`, a redirection) act: the line is a use on its own."""
    limit = add(store, LIMIT)
    shown(store, limit)
    capture(store, turn(call("bash", 1, command=command)))
    assert exposure(store, limit)["used_by"] == "entity"


def test_a_lookup_command_the_memory_gives_is_a_use_when_run(store: Store) -> None:
    """ "See what changed since the release with `git log …`": running that lookup is doing what the memory says;
    a lookup that only meets the memory's names (the version, in a grep) is not."""
    howto = add(store, "To see what changed since the release, run `git log --oneline v3.4.2..HEAD -- src/`.")
    shown(store, howto, at_query="what changed since the last release?")
    capture(store, turn(call("bash", 1, command="git log --oneline v3.4.2..HEAD -- src/ | head -20")))
    assert exposure(store, howto)["evidence"].endswith("git log --oneline v3.4.2..HEAD -- src/")
    released = add(store, "Release v3.4.2 moved the upload limit into settings.toml (UPLOAD_MAX_BYTES).")
    shown(store, released, at_query="what changed since the last release?", session="ses_grep")
    capture(store, turn(call("bash", 1, command="grep -rn UPLOAD_MAX_BYTES settings.toml"), session="ses_grep"))
    assert exposure(store, released, "ses_grep")["used_at"] is None


DEDUP = (
    "The trip export repeats a trip_id when the operator corrects a trip; stg_operator__trips keeps only the latest "
    "row (qualify row_number() over (partition by trip_id order by updated_at desc) = 1)."
)
DEDUP_READ = call("read", 1, filePath="dbt/models/staging/operator/stg_operator__trips.sql")


def test_a_memory_read_to_answer_a_question_is_used_when_the_answer_states_it(store: Store) -> None:
    """The turn reads the file the memory names and only answers; the answer states the memory's values (trip_id,
    row_number, updated_at) that the question did not hold: it was read to answer the question."""
    dedup = add(store, DEDUP)
    shown(store, dedup, at_query="fix the late trip corrections")
    question = "Could a corrected trip now be counted twice, since corrections come back as new rows?"
    answer = "No. stg_operator__trips keeps only the latest row per trip_id (row_number() by updated_at desc)."
    capture(store, turn(DEDUP_READ, texts=(answer,), user=question))
    got = exposure(store, dedup)
    assert got["used_by"] == "answered" and got["used_at"].startswith("2099-01-01T00:00:01")  # dated at the read
    assert got["evidence"] == "read: stg_operator__trips; the answer states trip_id, row_number, updated_at"
    record = store.db.usefulness([dedup], "2099-01-01T00:00:10.000Z")[dedup]
    assert record.used_total == 1
    schedule = add(store, "The daily_trips schedule in orchestration/schedules.py runs at 05:30 (cron '30 5 * * *').")
    shown(store, schedule, at_query="the trips job", session="ses_when")
    reply = "At 05:30 Europe/Oslo (cron '30 5 * * *'), after the export lands."
    read = call("read", 1, filePath="orchestration/schedules.py")
    capture(store, turn(read, texts=(reply,), user="When does the job run?", session="ses_when"))
    assert exposure(store, schedule, "ses_when")["used_by"] == "answered"  # a time of day and a quoted literal


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # the answer only repeats what the question held
        ("Does stg_operator__trips keep one row per trip_id?", "Yes: stg_operator__trips keeps one row per trip_id."),
        # one of the memory's names and common words: anyone's answer about that model
        ("Could a corrected trip be counted twice?", "No, stg_operator__trips keeps the latest row of each trip."),
        # the file was read, the answer says nothing of the memory
        ("Which columns does the model rename?", "It casts the station ids to varchar and converts the timestamps."),
        # nothing after the read: no answer
        ("Could a corrected trip be counted twice?", ""),
    ],
)
def test_an_answer_that_does_not_state_the_memory_is_no_use(store: Store, question: str, answer: str) -> None:
    dedup = add(store, DEDUP)
    shown(store, dedup, at_query="fix the late trip corrections")
    capture(store, turn(DEDUP_READ, texts=(answer,) if answer else (), user=question))
    assert exposure(store, dedup)["used_at"] is None


MAILER = (
    "Outgoing mail goes through the smtp_relay adapter set in config/app.toml; bounce_webhook_secret rotates monthly."
)
OTHERS_OF_APP_TOML = [
    "The log level is set in config/app.toml.",
    "config/app.toml holds the feature flags.",
    "Timeouts live in config/app.toml under [http].",
    "config/app.toml is read once at boot.",
]


@pytest.mark.parametrize(
    ("answer", "used"),
    [
        ("Through the smtp_relay adapter; its bounce_webhook_secret rotates monthly.", True),  # two of its values
        ("Through the smtp_relay adapter, set in config/app.toml.", False),  # one value and the common file
        ("The file sets the log level and the feature flags.", False),  # the file, not the memory
    ],
)
def test_a_look_at_a_file_many_memories_name_can_be_the_look_behind_an_answer(
    store: Store, answer: str, used: bool
) -> None:
    """config/app.toml is named by too many memories to say which one a read of it used, but a turn that reads it
    and answers in one memory's values read it for that memory; an edit of it is still no one's use."""
    mailer = add(store, MAILER)
    for text in OTHERS_OF_APP_TOML:
        add(store, text)
    shown(store, mailer, at_query="how is mail sent?")
    read = call("read", 1, filePath=f"{store.root}/config/app.toml")
    capture(store, turn(read, texts=(answer,), user="By the way, how do we send mail?"))
    got = exposure(store, mailer)
    assert (got["used_by"] == "answered") is used
    if used:
        assert got["evidence"].startswith("read: config/app.toml; the answer states smtp_relay")


def test_an_answer_that_restates_what_the_common_file_showed_is_no_use(store: Store) -> None:
    """A look at a place is no evidence of which memory was read: when the file itself showed the values the answer
    states, the answer took them from the file (a tool's output), not from the memory."""
    mailer = add(store, MAILER)
    for text in OTHERS_OF_APP_TOML:
        add(store, text)
    shown(store, mailer, at_query="how is mail sent?")
    content = '[mail]\nadapter = "smtp_relay"\n# bounce_webhook_secret rotates monthly\n'
    read = call("read", 1, output=content, filePath=f"{store.root}/config/app.toml")
    answer = "Through the smtp_relay adapter; its bounce_webhook_secret rotates monthly."
    capture(store, turn(read, texts=(answer,), user="By the way, how do we send mail?"))
    assert exposure(store, mailer)["used_at"] is None


def test_a_look_at_a_common_file_before_the_memory_was_shown_is_not_the_look_behind_the_answer(store: Store) -> None:
    """As for any look: one made before the session was shown the memory cannot have been made for it (a use
    dated at it would precede the memory's showing)."""
    mailer = add(store, MAILER)
    for text in OTHERS_OF_APP_TOML:
        add(store, text)
    read = call("read", 1, filePath=f"{store.root}/config/app.toml")
    result = json.dumps({"results": [{"id": mailer, "text": MAILER}]})
    search = call("memory_search", 2, output=result, query="mail")
    answer = "Through the smtp_relay adapter; its bounce_webhook_secret rotates monthly."
    capture(store, turn(read, search, texts=(answer,), user="By the way, how do we send mail?"))
    got = exposure(store, mailer)
    assert got["used_at"] is None or got["used_at"] >= got["first_shown_at"]


def test_an_edit_of_a_file_many_memories_name_is_no_use(store: Store) -> None:
    mailer = add(store, MAILER)
    for text in OTHERS_OF_APP_TOML:
        add(store, text)
    shown(store, mailer, at_query="raise the http timeout")
    edit = call("edit", 1, filePath=f"{store.root}/config/app.toml", oldString="timeout = 5", newString="timeout = 9")
    capture(store, turn(edit, texts=("Raised it.",), user="Raise the http timeout to 9 s."))
    assert exposure(store, mailer)["used_at"] is None


def test_an_answer_stating_a_memory_nothing_looked_up_is_no_use(store: Store) -> None:
    """Without a look at what the memory names, an answer in its words may be the agent's own account of its
    work: the answer decides only a look the turn made."""
    dedup = add(store, DEDUP)
    shown(store, dedup, at_query="fix the late trip corrections")
    answer = "No. stg_operator__trips keeps only the latest row per trip_id (row_number() by updated_at desc)."
    capture(store, turn(call("bash", 1, command="git status --short"), texts=(answer,), user="Counted twice?"))
    assert exposure(store, dedup)["used_at"] is None


def test_a_tool_call_made_before_the_memory_was_shown_is_not_a_use(store: Store) -> None:
    limit = add(store, LIMIT)
    shown(store, limit)  # shown now, in 2026: the calls below were made in 1999
    early = ToolCall(
        "read", "c1", "completed", {"filePath": "app/api/photos.py"}, started_at="1999-01-01T00:00:00.000Z"
    )
    capture(store, turn(early))
    assert exposure(store, limit)["used_at"] is None


def test_a_memory_no_injection_showed_this_session_is_not_judged(store: Store) -> None:
    limit = add(store, LIMIT)
    shown(store, limit, session="ses_other")
    capture(store, turn(call("read", 1, filePath="app/api/photos.py")))
    assert store.db.session_exposures(SESSION) == []
    assert exposure(store, limit, "ses_other")["used_at"] is None


def test_a_name_many_memories_share_is_not_evidence(store: Store) -> None:
    common = [add(store, f"Note {i} about app/common.py and its job number {i}.") for i in range(5)]
    shown(store, common[0], at_query="something else")
    capture(store, turn(call("edit", 1, filePath="app/common.py", oldString="a", newString="b")))
    assert exposure(store, common[0])["used_at"] is None


# ------------------------------------------------------------------------------------- commit forms
CONVENTIONAL = (
    "Commit messages follow Conventional Commits with the module as scope (`fix(cache): ...`, `feat(cli): ...`)."
)
AREA = "Commit messages: an imperative subject with the area as prefix (api:, jobs:, auth:), a body that says why."


def commit(seq: int, message: str) -> ToolCall:
    return call("bash", seq, command=f"git add -A && git commit -q -m '{message}' && git log --oneline -1")


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        (CONVENTIONAL, "fix(hash): include env var values in task keys"),
        (AREA, "jobs: retry failed exports once"),
        (AREA, "api: paginate the observations"),
    ],
)
def test_a_commit_written_in_the_memorys_form_uses_it(store: Store, memory: str, message: str) -> None:
    convention = add(store, memory)
    shown(store, convention, at_query="commit the fix")
    capture(store, turn(commit(1, message)))
    got = exposure(store, convention)
    assert got["used_by"] == "entity" and message in got["evidence"]


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        (CONVENTIONAL, "Include env var values in task keys"),  # no form at all
        (CONVENTIONAL, "fix: include env var values"),  # the type without the scope the memory's examples have
        (CONVENTIONAL, "chore(deps): bump clap"),  # a type the memory does not give
        (AREA, "billing: round totals"),  # a prefix the memory does not list
        (AREA, "messages: an imperative subject"),  # prose before a colon is not an example
    ],
)
def test_a_commit_in_another_form_does_not_use_it(store: Store, memory: str, message: str) -> None:
    convention = add(store, memory)
    shown(store, convention, at_query="commit the fix")
    capture(store, turn(commit(1, message), call("bash", 2, command="git commit --amend --no-edit")))
    assert exposure(store, convention)["used_at"] is None


def test_names_in_a_commit_message_are_not_a_use(store: Store) -> None:
    """The message is the agent's account of what it did: the edits are the evidence, not their summary."""
    limit = add(store, LIMIT)
    shown(store, limit, at_query="raise the photo limit")
    capture(store, turn(commit(1, "raise UPLOAD_MAX_BYTES in app/api/photos.py to 25 MB")))
    assert exposure(store, limit)["used_at"] is None


@pytest.mark.parametrize(
    "path", ["CHANGELOG.md", "docs/release-notes.md", "fastlane/metadata/android/en-US/changelogs/412.txt", "NEWS"]
)
def test_words_written_into_a_changelog_are_not_a_use(store: Store, path: str) -> None:
    """A changelog entry is the agent's account of its work, as a commit message is: the memory's words and names
    in it restate what the turn's edits did."""
    jobs, limit = add(store, JOBS), add(store, LIMIT)
    shown(store, jobs, limit, at_query="add the release to the changelog")
    entry = "- The default --jobs is now the number of logical CPUs minus one, at most 8 (UPLOAD_MAX_BYTES: 25 MB)."
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/{path}", oldString="", newString=entry)))
    assert exposure(store, jobs)["used_at"] is None and exposure(store, limit)["used_at"] is None


def test_the_same_words_in_code_or_a_changelog_a_memory_names_are_a_use(store: Store) -> None:
    """The words count where they are written as code or its docs (`src/news.py` is code), and a memory that says
    where changes are recorded is used by an edit of that file: its path is no account."""
    jobs = add(store, JOBS)
    notes = add(store, "Every user-visible change gets a line under Unreleased in CHANGES.rst, in the same commit.")
    shown(store, jobs, notes, at_query="ship the jobs default")
    code = '"""The default --jobs: the number of logical CPUs minus one, at most 8."""'
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/src/news.py", oldString="", newString=code)))
    assert exposure(store, jobs)["used_by"] == "entity"
    entry = "- Faster default for --jobs."
    capture(
        store,
        turn(call("edit", 2, filePath=f"{store.root}/CHANGES.rst", oldString="", newString=entry), turn_id="msg_2"),
    )
    assert exposure(store, notes)["evidence"] == "edit: CHANGES.rst"


CLAUDE_COMMIT = """git add app/api/photos.py && git commit -m "$(cat <<'EOF'
{message}

Co-Authored-By: Claude <noreply@anthropic.com>
EOF
)\""""


@pytest.mark.parametrize(
    "command",
    [
        CLAUDE_COMMIT,  # the form Claude Code writes
        CLAUDE_COMMIT.replace("commit -m ", "commit --message="),
        "git commit -am '{message}'",
        'git commit -m"{message}"',
        "git commit --message='{message}'",
    ],
)
def test_a_commit_in_the_memorys_form_counts_however_the_message_is_given(store: Store, command: str) -> None:
    convention = add(store, CONVENTIONAL)
    shown(store, convention, at_query="commit the fix")
    message = "fix(hash): include env var values in task keys"
    capture(store, turn(call("bash", 1, command=command.format(message=message))))
    got = exposure(store, convention)
    assert got["used_by"] == "entity" and message in got["evidence"]


def test_names_in_a_heredoc_commit_message_are_not_a_use(store: Store) -> None:
    limit = add(store, LIMIT)
    shown(store, limit, at_query="raise the photo limit")
    message = "feat: raise UPLOAD_MAX_BYTES in app/api/photos.py to 25 MB"
    capture(store, turn(call("bash", 1, command=CLAUDE_COMMIT.format(message=message).replace("app/api/", "api/"))))
    assert exposure(store, limit)["used_at"] is None


def test_taking_the_message_out_leaves_the_rest_of_the_command(store: Store) -> None:
    """The message `photos` is also part of the path the same command adds: only the message goes."""
    limit = add(store, LIMIT)
    shown(store, limit, at_query="raise the limit")
    capture(store, turn(call("bash", 1, command="git add app/api/photos.py && git commit -m 'photos'")))
    assert exposure(store, limit)["used_by"] == "entity"


# ------------------------------------------------------------------------------------------ phrases
JOBS = "Since 0.9 the default --jobs is the number of logical CPUs minus one, at most 8: CI ran out of memory."


def help_edit(seq: int, new: str, old: str = "/// How many tasks run at once") -> ToolCall:
    return call("edit", seq, filePath="src/cli.rs", oldString=old, newString=new)


def test_an_edit_that_copies_the_memorys_words_uses_it(store: Store) -> None:
    jobs = add(store, JOBS)
    shown(store, jobs, at_query="say what --jobs defaults to in the help text")
    capture(store, turn(help_edit(1, "/// How many tasks run at once [default: logical CPUs minus one, at most 8]")))
    got = exposure(store, jobs)
    assert got["used_by"] == "entity" and "minus one at most 8" in got["evidence"]


@pytest.mark.parametrize(
    ("query", "new", "old"),
    [
        # the words were the request's: the agent was asked to write them
        (
            "default the jobs to logical CPUs minus one, at most 8",
            "/// [default: logical CPUs minus one, at most 8]",
            "x",
        ),
        # the edit keeps a line that already said so
        (
            "fix the typo",
            "/// tasks: logical CPUs minus one, at most 8 (see docs)",
            "/// logical CPUs minus one, at most 8",
        ),
        # five of its words only
        ("say what --jobs defaults to", "/// the number of logical CPUs", "x"),
    ],
)
def test_words_the_request_or_the_file_had_or_too_few_are_no_copy(store: Store, query: str, new: str, old: str) -> None:
    jobs = add(store, JOBS)
    shown(store, jobs, at_query=query)
    capture(store, turn(help_edit(1, new, old)))
    assert exposure(store, jobs)["used_at"] is None


FLAGS = "Retired feature flags stay in the flags file with enabled: false (old app versions still parse them)."
RETRY = "Workers that call the payment provider carry @retry_on_timeout: a slow answer is retried, not failed."


@pytest.mark.parametrize(
    ("memory", "path", "added", "evidence"),
    [
        (FLAGS, "config/flags.yml", "legacy_checkout:\n  enabled: false\n", "edit: enabled: false"),
        (RETRY, "lib/workers/charge.ex", "  @retry_on_timeout true\n  use Worker", "edit: @retry_on_timeout"),
    ],
)
def test_an_edit_that_sets_the_memorys_switch_or_attribute_uses_it(
    store: Store, memory: str, path: str, added: str, evidence: str
) -> None:
    mid = add(store, memory)
    shown(store, mid, at_query="retire the legacy checkout")
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/{path}", oldString="", newString=added)))
    assert exposure(store, mid)["evidence"] == evidence


@pytest.mark.parametrize(
    ("memory", "path", "added"),
    [
        (FLAGS, "config/flags.yml", "legacy_checkout:\n  enabled: true\n"),  # the other value
        (RETRY, "lib/workers/charge.ex", "  @retry_on_failure true\n  use Worker"),  # another attribute
    ],
)
def test_another_value_or_attribute_is_not_a_use(store: Store, memory: str, path: str, added: str) -> None:
    mid = add(store, memory)
    shown(store, mid, at_query="retire the legacy checkout")
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/{path}", oldString="", newString=added)))
    assert exposure(store, mid)["used_at"] is None


# ---------------------------------------------------------------------------- a term two memories hold
WALK = "The ignore crate's WalkBuilder skips hidden files; build it with a filter_entry that skips .git and .brisk."
WATCH = "`brisk watch` re-runs on input changes only, so writes into .brisk/ and .git/ never retrigger it."


def test_a_term_two_shown_memories_hold_goes_to_the_one_that_explains_the_call(store: Store) -> None:
    walk, watch = add(store, WALK), add(store, WATCH)
    shown(store, walk, watch, at_query="dotfiles are not task inputs")
    code = '.filter_entry(|e| e.file_name() != ".git" && e.file_name() != ".brisk")'
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/src/inputs.rs", oldString="x", newString=code)))
    assert exposure(store, walk)["used_by"] == "entity"  # .git, .brisk and filter_entry: all three are its words
    assert exposure(store, watch)["used_at"] is None  # .git and .brisk alone: the other memory holds them too


def test_two_memories_that_explain_a_call_as_well_are_both_used(store: Store) -> None:
    walker = add(store, "Task inputs are walked in src/inputs.rs by collect_inputs.")
    order = add(store, "collect_inputs sorts the paths before hashing them.")
    shown(store, walker, order, at_query="dotfiles are not task inputs")
    edit = call("edit", 1, filePath=f"{store.root}/src/lib.rs", oldString="x", newString="collect_inputs(root)")
    capture(store, turn(edit))
    assert exposure(store, walker)["used_by"] == exposure(store, order)["used_by"] == "entity"


def test_which_memory_explains_a_call_better_is_judged_on_the_text_as_shown(store: Store) -> None:
    """An edit of the walker memory after it was shown names `hash_inputs` too; the session was shown the text
    without it, so the call's `hash_inputs` is still the other memory's."""
    walker = add(store, "Task inputs are walked in src/inputs.rs by collect_inputs.")
    hashing = add(store, "The `hash_inputs` function must sort the paths before hashing them.")
    shown(store, walker, hashing, at_query="dotfiles are not task inputs")
    store.edit(walker, text="Task inputs are walked in src/inputs.rs by collect_inputs, then hash_inputs hashes them.")
    code = "let key = hash_inputs(collect_inputs(root));"
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/src/inputs.rs", oldString="x", newString=code)))
    assert exposure(store, walker)["used_by"] == exposure(store, hashing)["used_by"] == "entity"


# ------------------------------------------------------------------------------------ cited, fetched
def test_an_id_the_agent_writes_is_a_citation(store: Store) -> None:
    limit, export = add(store, LIMIT), add(store, EXPORT)
    shown(store, limit, export)
    capture(store, turn(texts=(f"Per {limit}, the limit lives in the presigned policy.",)))
    assert exposure(store, limit)["used_by"] == "cited"
    assert exposure(store, export)["used_at"] is None  # shown beside it, not cited


# the tools' names as each assistant's transcript gives them (Claude Code and Codex, OpenCode, Gemini, Copilot)
MCP_NAMES = ["mcp__codememory__{}", "codememory_{}", "mcp_codememory_{}", "codememory-{}"]


@pytest.mark.parametrize("name", ["{}", *MCP_NAMES])
def test_ids_in_a_search_result_are_shown_not_cited(store: Store, name: str) -> None:
    limit = add(store, LIMIT)
    result = json.dumps({"results": [{"id": limit, "text": LIMIT}]})
    capture(store, turn(call(name.format("memory_search"), 1, output=result, query="photo limit")))
    got = exposure(store, limit)
    assert got["kind"] == "search" and got["used_at"] is None
    edit = call("edit", 2, filePath="app/api/photos.py", oldString="1", newString="UPLOAD_MAX_BYTES = 2")
    capture(store, turn(edit, turn_id="m2"))  # ...then acted on
    assert exposure(store, limit)["used_by"] == "entity"


@pytest.mark.parametrize("name", MCP_NAMES)
def test_memory_get_is_a_fetch_even_of_a_memory_no_injection_showed(store: Store, name: str) -> None:
    limit, export = add(store, LIMIT), add(store, EXPORT)
    shown(store, export)
    capture(store, turn(call(name.format("memory_get"), 1, ids=[limit])))
    got = exposure(store, limit)
    assert (got["kind"], got["used_by"]) == ("fetched", "fetched")
    assert exposure(store, export)["used_at"] is None
    capture(store, turn(call("codememory_memory_get", 2, ids=["mem_00000000"]), turn_id="m2"))  # no such memory
    assert [e.memory_id for e in store.db.session_exposures(SESSION)] == [export, limit]


# ---------------------------------------------------------------------------------------- contradicted
def test_running_what_the_memory_forbids_is_a_contradiction(store: Store) -> None:
    rule = add(store, PYTEST)
    shown(store, rule, at_query="run the tests")
    capture(store, turn(call("bash", 1, command="cd app && uv run pytest -q tests/")))
    got = exposure(store, rule)
    assert got["contradicted_at"] is not None and "pytest -q" in got["contradiction"]
    assert store.db.usefulness([rule], "2099-01-02T00:00:00.000Z")[rule].contradicted_total == 1


def test_doing_what_the_memory_prescribes_is_no_contradiction(store: Store) -> None:
    rule, sep = add(store, PYTEST), add(store, SEP)
    shown(store, rule, sep, at_query="run the tests")
    capture(
        store,
        turn(
            call("bash", 1, command="scripts/test tests/test_export.py"),
            call(
                "edit", 2, filePath="app/export.py", oldString="out = io.StringIO()", newString="out = io.StringIO()\n"
            ),
        ),
    )
    assert exposure(store, rule)["contradicted_at"] is None
    assert exposure(store, rule)["used_by"] == "entity"  # scripts/test is what it says to run
    assert exposure(store, sep)["contradicted_at"] is None
    capture(
        store,
        turn(call("edit", 3, filePath="app/export.py", oldString="a", newString='out.write("sep=,\\n")'), turn_id="m3"),
    )
    assert "sep=," in exposure(store, sep)["contradiction"]


@pytest.mark.parametrize(
    ("memory", "added"),
    [
        ("Don't add @skip_ci to the workflows: the release job needs every check.", "  @skip_ci\n  job: build"),
        (SEP, 'out.write("sep=,\\n")'),
    ],
)
def test_doing_what_the_memory_forbids_is_no_use_of_it(store: Store, memory: str, added: str) -> None:
    """The forbidden thing is one of the memory's terms, but a call that does it went against the memory: a
    contradiction, never also a use that would raise the memory's usefulness for being disobeyed."""
    mid = add(store, memory)
    shown(store, mid, at_query="update the exports")
    capture(store, turn(call("edit", 1, filePath="app/export.py", oldString="", newString=added)))
    got = exposure(store, mid)
    assert got["contradicted_at"] is not None and got["used_at"] is None
    assert store.db.usefulness([mid], "2099-01-02T00:00:00.000Z")[mid].used_total == 0


def test_the_memorys_other_terms_in_a_call_that_names_what_it_forbids_still_use_it(store: Store) -> None:
    """Only the forbidden thing is taken out of the call's hits: an edit of the file the memory names, mapping the
    error it says never to leak, does as the memory says however the rule reads the error's name."""
    errors = add(
        store,
        "Errors crossing the API boundary are mapped in API_ERRORS (app/api/errors.py); never leak `TimeoutError`.",
    )
    shown(store, errors, at_query="the upstream call hangs")
    code = "API_ERRORS[TimeoutError] = 504"
    capture(store, turn(call("edit", 1, filePath="app/api/errors.py", oldString="", newString=code)))
    assert exposure(store, errors)["evidence"] == "edit: API_ERRORS"


def test_a_changelog_entry_naming_what_the_memory_forbids_is_no_contradiction(store: Store) -> None:
    """A changelog entry is the agent's account of its work (it is no use either): "no longer writes a `sep=,`
    line" records that the memory was heeded, it does not write the line."""
    sep = add(store, SEP)
    shown(store, sep, at_query="fix the CSV export")
    entry = "- CSV exports no longer start with a `sep=,` line (Excel showed it as data)."
    capture(store, turn(call("edit", 1, filePath=f"{store.root}/CHANGELOG.md", oldString="", newString=entry)))
    assert exposure(store, sep)["contradicted_at"] is None
    code = 'out.write("sep=,\\n")'
    capture(store, turn(call("edit", 2, filePath="app/export.py", oldString="", newString=code), turn_id="m2"))
    assert "sep=," in exposure(store, sep)["contradiction"]  # the same words written as code still are


# --------------------------------------------------------------------------------------------- ignored
def test_a_memory_shown_in_sessions_that_never_use_it_is_ignored_there(store: Store) -> None:
    limit = add(store, LIMIT)
    for n in range(3):
        shown(store, limit, session=f"ses_{n}")
        capture(store, turn(call("read", 1, filePath="README.md"), session=f"ses_{n}"))
    record = store.db.usefulness([limit], "2099-01-01T00:00:10.000Z")[limit]
    assert (record.shown_total, record.used_total) == (3, 0)
    shown(store, limit, session="ses_0")  # shown again in a session: still one session
    assert store.db.usefulness([limit], "2099-01-01T00:00:10.000Z")[limit].shown_total == 3


def test_a_session_with_nothing_shown_costs_one_read(store: Store) -> None:
    assert observe_turn(store.db, turn(call("read", 1, filePath="app/api/photos.py"))) == 0


# --------------------------------------------------------------------------------------- tool shapes
def test_tool_calls_as_each_assistant_writes_them() -> None:
    multi = action_of(
        call("MultiEdit", file_path="a.py", edits=[{"old_string": "x = 1", "new_string": "x = 1\ny = 2"}])
    )
    assert (multi.edited, multi.added) == (("a.py",), "y = 2")
    patch = "*** Begin Patch\n*** Update File: app/x.py\n@@\n-old\n+new line\n*** End Patch"
    applied = action_of(call("apply_patch", input=patch))
    assert applied.edited == ("app/x.py",) and applied.added == "new line"
    shell = action_of(call("shell", command=["bash", "-lc", "pytest -q"]))
    assert shell.shell == ("bash -lc pytest -q",) and not shell.look
    assert action_of(call("shell", command=["bash", "-lc", "ls migrations | head"])).look
    assert action_of(call("Read", file_path="app/x.py")).look and action_of(call("Grep", pattern="x")).look
    assert not action_of(call("Edit", file_path="a.py", old_string="x", new_string="y")).look
    write = action_of(call("Write", file_path="b.py", content="print(1)"))
    assert write.added == "print(1)"


# ------------------------------------------------------------------------------ through a real transcript
def test_a_claude_code_transcript_captured_by_the_hooks_records_the_use(store: Store, tmp_path: Path) -> None:
    limit = add(store, LIMIT)
    session = "5d1c2b9a-0000-4000-8000-000000000001"
    shown(store, limit, session=session, at_query="raise the photo limit")
    lines = [
        {"type": "user", "uuid": "u1", "promptId": "p1", "sessionId": session, "cwd": str(store.root),
         "timestamp": "2099-01-01T00:00:00.000Z", "message": {"role": "user", "content": "raise the photo limit"}},
        {"type": "assistant", "uuid": "a1", "sessionId": session, "timestamp": "2099-01-01T00:00:01.000Z",
         "message": {"id": "m1", "role": "assistant", "stop_reason": "tool_use", "content": [
             {"type": "tool_use", "id": "t1", "name": "Edit", "input": {
                 "file_path": f"{store.root}/app/api/photos.py", "old_string": "10",
                 "new_string": "UPLOAD_MAX_BYTES = 25"}}]}},
        {"type": "user", "uuid": "u2", "sessionId": session, "timestamp": "2099-01-01T00:00:02.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        {"type": "assistant", "uuid": "a2", "sessionId": session, "timestamp": "2099-01-01T00:00:03.000Z",
         "message": {"id": "m2", "role": "assistant", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "Done."}]}},
    ]  # fmt: skip
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = capture_transcript(store, path, "claude-code", final=True)
    assert report.turns_captured == 1, report
    assert exposure(store, limit, session)["used_by"] == "entity"
