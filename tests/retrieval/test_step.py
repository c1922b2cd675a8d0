"""The step an agent is at (retrieval/step.py): which tool calls are routine, what a call touches, and how the HUD's
retrieval uses both (a memory about the file the agent opened is shown; after a routine call nothing about the
request is). Keyword-only stores (the tests' user config switches the embedding model off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory import Store
from codememory.retrieval.step import Step, step_from_call

ROOT = "/home/dev/shop"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("bash", {"command": "ls internal/tax"}),
        ("bash", {"command": "git status --short"}),
        ("bash", {"command": "git diff --stat && git log --oneline -3"}),
        ("bash", {"command": "gofmt -l internal/pdf"}),
        ("bash", {"command": "go build ./..."}),
        ("bash", {"command": "go test ./internal/money/"}),
        ("bash", {"command": "cd api && python -m pytest -q tests/"}),
        ("bash", {"command": "wc -l Makefile"}),
        ("grep", {"pattern": "leeway"}),
        ("glob", {"pattern": "**/*.go"}),
    ],
)
def test_looking_around_and_checking_are_routine(tool: str, args: dict[str, str]) -> None:
    assert step_from_call(tool, args, root=ROOT).routine


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("read", {"filePath": f"{ROOT}/internal/tax/compute.go"}, False),  # working on a file
        ("edit", {"filePath": f"{ROOT}/app/api/photos.py"}, False),
        ("bash", {"command": "make generate"}, False),  # a project's own target: a memory may prescribe it
        ("bash", {"command": "git add -A && git commit -m 'fix: leeway'"}, False),  # changes history
        ("bash", {"command": "goose -dir migrations create counters sql -s"}, False),
        ("bash", {"command": "npm run deploy"}, False),
        ("bash", {"command": "go test ./internal/pdf"}, True),  # a failure: its error is what a memory may answer
        ("memory_search", {"query": "invoice numbers"}, False),
    ],
)
def test_working_failing_and_unknown_calls_are_not_routine(tool: str, args: dict[str, str], error: bool) -> None:
    assert not step_from_call(tool, args, error, root=ROOT).routine


def test_what_a_call_touches_its_file_its_folder_and_a_prescribed_command() -> None:
    read = step_from_call("read", {"filePath": f"{ROOT}/internal/pdf/render.go"}, root=ROOT)
    assert read.paths == ("internal/pdf/render.go",) and read.folders == ("internal/pdf",)
    assert read.touches("Fonts in render.go are cp1252 only") == "file render.go"
    assert read.touches("internal/pdf/render.go draws the invoice") == "file internal/pdf/render.go"
    assert read.touches("prerender.go is generated") is None  # a longer name is another file
    assert read.in_folder("golden files in internal/pdf/testdata") == "folder internal/pdf"
    assert read.in_folder("internal/pdfgen is the old one") is None

    goldens = step_from_call("bash", {"command": "go test ./internal/pdf -update"}, root=ROOT)
    assert goldens.touches("After a layout change run `go test ./internal/pdf -update`.") == (
        "command go test ./internal/pdf"
    )
    other_tests = step_from_call("bash", {"command": "go test ./internal/tax/..."}, root=ROOT)
    assert other_tests.folders == ("internal/tax",)
    assert other_tests.touches("After a layout change run `go test ./internal/pdf -update`.") is None
    db = step_from_call("bash", {"command": "make test-db"}, root=ROOT)
    assert db.touches("`make test-db` starts Postgres on 55432") == "command make test-db"
    assert db.touches("`make test` runs everything") is None


MEMORIES = {
    "font": "fpdf core fonts are cp1252 only: use the embedded DejaVuSans font in internal/pdf/render.go",
    "vat": "VAT is computed per invoice line and rounded half-up, then summed",
    "reverse": "EU reverse charge: business customers with a verified VAT id get 0 % VAT",
    "testdb": "Integration tests need Postgres: `make test-db` starts it on port 55432",
    "lint": "The tax tests freeze time with clock.Fixed; run them with go test -count=1 so nothing is cached",
}
REQUEST = "Add EU reverse charge to the VAT calculation for business customers"


@pytest.fixture
def ids(project: Path) -> dict[str, str]:
    with Store.open(project) as store:
        assert not store.semantic.configured
        return {key: store.add(text).memory.id for key, text in MEMORIES.items()}


def shown(project: Path, ids: dict[str, str], tool: str, args: dict[str, str], judged: bool = True) -> list[str]:
    """The memories retrieved for the request and the call (as the plugin asks: the request, then the call's words),
    the call judged as the step or not."""
    names = {v: k for k, v in ids.items()}
    root = str(project.resolve())
    args = {k: v.replace("{root}", root) for k, v in args.items()}
    step = step_from_call(tool, args, root=root) if judged else None
    with Store.open(project) as store:
        result = store.retrieve([REQUEST, f"{tool} {' '.join(args.values())}"], step=step, touch=False)
    return [names[m.id] for m in result.memories]


def test_after_a_routine_call_what_only_its_words_found_leaves(project: Path, ids: dict[str, str]) -> None:
    tests = {"command": "go test ./internal/tax/...", "description": "Run the tax tests"}
    assert "lint" in shown(project, ids, "bash", tests, judged=False)  # "tests" found it
    after_tests = shown(project, ids, "bash", tests)
    assert "lint" not in after_tests and "testdb" not in after_tests
    assert "reverse" in after_tests  # the request's memory stays: the answer may come next


def test_a_step_opening_the_file_a_gotcha_is_about_gets_it(project: Path, ids: dict[str, str]) -> None:
    read = {"filePath": "{root}/internal/pdf/render.go"}
    assert "font" not in shown(project, ids, "read", read, judged=False)
    got = shown(project, ids, "read", read)
    assert got[0] == "font" and "reverse" in got  # the file brought it; a read is work on the task


def test_a_routine_step_keeps_a_memory_prescribing_its_command(project: Path, ids: dict[str, str]) -> None:
    assert "testdb" in shown(project, ids, "bash", {"command": "make test-db"})
    assert "testdb" not in shown(project, ids, "bash", {"command": "make lint"}, judged=False)


def test_a_file_several_memories_name_brings_none_of_them(project: Path, ids: dict[str, str]) -> None:
    with Store.open(project) as store:
        store.add("internal/pdf/render.go is drawn in millimetres, A4 portrait")
    assert "font" not in shown(project, ids, "read", {"filePath": "{root}/internal/pdf/render.go"})


def test_a_long_shell_line_is_looked_at_in_bounded_pieces() -> None:
    """The call's text is the agent's: a line of a hundred commands is judged by its first MAX_SEGMENTS, and a
    memory's code spans are parsed once each, not once per command."""
    from codememory.retrieval.step import MAX_SEGMENTS

    line = " && ".join(f"make target{i} --verbose" for i in range(100))
    step = step_from_call("bash", {"command": line})
    assert len(step.commands) == MAX_SEGMENTS
    assert step.touches("Run `make target3 --verbose` before a release.") == "command make target3 --verbose"
    assert step.touches("Run `make target42 --verbose` before a release.") is None


def test_a_tool_name_longer_than_the_daemon_keeps_is_cut_not_refused() -> None:
    from codememory.daemon.server import StepCall

    assert StepCall(tool="mcp__" + "x" * 150, args={}).tool == ("mcp__" + "x" * 150)[:100]


def test_a_later_call_keeps_the_request_and_the_step_not_what_the_tool_words_found(
    project: Path, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a working call (an edit, not routine) the call's words found the test-database memory; the turn's request
    did not ask for it and the call touches nothing it names: it leaves. The request's memory stays."""
    from codememory.retrieval import proactive

    names = {v: k for k, v in ids.items()}
    path = f"{project.resolve()}/internal/tax/compute_test.go"
    edit = step_from_call("edit", {"filePath": path})

    def later(step: Step) -> list[str]:
        with Store.open(project) as store:
            result = store.retrieve([REQUEST, "integration tests need Postgres"], step=step, touch=False)
        return [names[m.id] for m in result.memories]

    monkeypatch.setattr(proactive, "FOLLOW_TURN", False)
    assert "testdb" in later(edit)
    monkeypatch.setattr(proactive, "FOLLOW_TURN", True)
    got = later(edit)
    assert "testdb" not in got and "reverse" in got
    # the same words as a failed call's error lines: a question a memory may answer, so what they found stays
    assert "testdb" in later(step_from_call("bash", {"command": "go test ./internal/invoices/..."}, error=True))


def test_a_later_call_shows_at_most_the_later_slots(
    project: Path, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap of a later call (proactive.LATER_MAX, set low here: the five-memory store has three for the request)
    keeps the request's strongest; the turn's first call is not capped by it."""
    from codememory.retrieval import proactive

    monkeypatch.setattr(proactive, "LATER_MAX", 1)
    names = {v: k for k, v in ids.items()}
    request = "reverse charge VAT per invoice line, the tax tests with clock.Fixed, Postgres for integration tests"
    with Store.open(project) as store:
        first = store.retrieve([request], touch=False)
        later = store.retrieve(
            [request, "read internal/tax/compute.go"],
            step=step_from_call("read", {"filePath": f"{project.resolve()}/internal/tax/compute.go"}),
            touch=False,
        )
    assert len(first.memories) > 1
    assert len(later.memories) == 1
    assert names[later.memories[0].id] in {names[m.id] for m in first.memories}


def test_a_chore_turn_gets_only_what_its_step_opens(
    project: Path, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that called for no memory (a chore) gets none at its first call, nothing its tool calls' words find
    at a later call, and the gotcha about the file its step opens (render.go); the quiet bar, raised, holds that
    back too."""
    from codememory.retrieval import proactive

    names = {v: k for k, v in ids.items()}
    chore = "Fix the typo 'recieve' in the footer comment"
    read = f"{project.resolve()}/internal/pdf/render.go"
    step = step_from_call("read", {"filePath": read})
    with Store.open(project) as store:
        assert store.retrieve([chore], touch=False).memories == []
        opened = store.retrieve([chore, f"read {read}"], step=step, touch=False)
        worded = store.retrieve([chore, "integration tests need Postgres"], step=step, touch=False)
        monkeypatch.setattr(proactive, "QUIET_STEP_LIKELIHOOD", 0.05)
        quiet = store.retrieve([chore, f"read {read}"], step=step, touch=False)
    assert [names[m.id] for m in opened.memories] == ["font"]
    assert "testdb" not in [names[m.id] for m in worded.memories]
    assert quiet.memories == []


def test_a_weak_request_memory_is_shown_at_the_turns_first_call_only(
    project: Path, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory the request's words make only somewhat likely (here the reverse-charge memory, about 0.59 in this
    keyword-only store, with the later bar raised above it) is shown at the turn's first call and not repeated at a
    later call whose step is about something else."""
    from codememory.retrieval import proactive

    names = {v: k for k, v in ids.items()}
    root = str(project.resolve())
    elsewhere = step_from_call("read", {"filePath": f"{root}/internal/api/doc.go"}, root=root)

    def shown_at(step: Step | None, *extra: str) -> list[str]:
        with Store.open(project) as store:
            result = store.retrieve([REQUEST, *extra], step=step, touch=False)
        return [names[m.id] for m in result.memories]

    assert shown_at(elsewhere, "read internal/api/doc.go") == ["reverse"]  # shipped bar: strong enough to repeat
    monkeypatch.setattr(proactive, "LATER_REQUEST_LIKELIHOOD", 0.7)
    assert shown_at(None) == ["reverse"]  # the turn's first call
    assert shown_at(elsewhere, "read internal/api/doc.go") == []  # a later call, a step about something else


LONG_REQUEST = (
    "Add EU reverse charge to the VAT calculation for business customers. Keep the API the same. Update the changelog.",
    "Then run the integration tests against Postgres with make test-db.",
)


def test_a_later_call_keeps_what_the_requests_later_sentences_found(project: Path, ids: dict[str, str]) -> None:
    """A long request comes as two phrases (its first sentences, then the rest; the plugin says so with
    request_phrases=2): what its later sentences found is the request's, and stays at a later call as it does when
    the request comes as one phrase. Counted as a tool phrase, it would leave."""
    names = {v: k for k, v in ids.items()}
    edit = step_from_call("edit", {"filePath": f"{project.resolve()}/internal/tax/compute.go"})
    with Store.open(project) as store:
        whole = store.retrieve([" ".join(LONG_REQUEST), "edit internal/tax/compute.go"], step=edit, touch=False)
        split = store.retrieve(
            [*LONG_REQUEST, "edit internal/tax/compute.go"], step=edit, touch=False, request_phrases=2
        )
        as_tool = store.retrieve([*LONG_REQUEST, "edit internal/tax/compute.go"], step=edit, touch=False)
    assert {"reverse", "testdb"} <= {names[m.id] for m in whole.memories}
    assert {"reverse", "testdb"} <= {names[m.id] for m in split.memories}
    assert "testdb" not in {names[m.id] for m in as_tool.memories}  # request_phrases=1: the second phrase is a tool's


def test_without_a_request_what_the_tool_words_found_is_not_the_requests(project: Path, ids: dict[str, str]) -> None:
    """An empty user text (request_phrases=0): every phrase is a tool call's, so at a later call what their words
    found leaves, as it does after a request; taken for the request, it would stay."""
    names = {v: k for k, v in ids.items()}
    edit = step_from_call("edit", {"filePath": f"{project.resolve()}/internal/tax/compute_test.go"})
    with Store.open(project) as store:
        none = store.retrieve(["integration tests need Postgres"], step=edit, touch=False, request_phrases=0)
        taken = store.retrieve(["integration tests need Postgres"], step=edit, touch=False)
        first = store.retrieve(["integration tests need Postgres"], touch=False, request_phrases=0)
    assert "testdb" in {names[m.id] for m in taken.memories}
    assert none.memories == []
    assert "testdb" in {names[m.id] for m in first.memories}  # no step: the phrases still find it


def test_a_memory_naming_the_steps_folder_is_no_reason_of_its_own_at_a_later_call(
    project: Path, ids: dict[str, str]
) -> None:
    """A memory an earlier call's words found (a grep) that names the folder of the file the step reads ranks higher,
    but at a later call of a turn whose request did not find it (a chore here), it leaves like anything else the tool
    words found; the memory naming the file itself stays."""
    with Store.open(project) as store:
        folder = store.add("The invoice layout in internal/pdf uses millimetre margins on A4 pages").memory.id
    chore = "Fix the typo 'recieve' in the footer comment"
    read = f"{project.resolve()}/internal/pdf/render.go"
    step = step_from_call("read", {"filePath": read}, root=str(project.resolve()))
    phrases = [chore, f"read {read}", "grep invoice layout margins"]
    with Store.open(project) as store:
        result = store.retrieve(phrases, step=step, touch=False)
        unjudged = store.retrieve(phrases, touch=False)
    assert folder in {m.id for m in unjudged.memories}  # the tool words found it
    assert [m.id for m in result.memories] == [ids["font"]]


def test_with_the_request_carried_a_later_call_gets_only_what_its_step_brings(
    project: Path, ids: dict[str, str]
) -> None:
    """The caller keeps the turn's first answer for the whole turn (`request_carried`): a later call does not show the
    request's memories again, a routine step gets nothing, and a step opening the file a gotcha is about gets the
    gotcha. Without it the same call shows the request's memories again."""
    names = {v: k for k, v in ids.items()}
    root = str(project.resolve())
    with Store.open(project) as store:
        turn = [m.id for m in store.retrieve([REQUEST], touch=False).memories]
    assert "reverse" in [names[i] for i in turn]

    def later(tool: str, arg: str, exclude: list[str], carried: bool = True) -> list[str]:
        key = "command" if tool == "bash" else "filePath"
        step = step_from_call(tool, {key: arg.replace("{root}", root)}, root=root)
        with Store.open(project) as store:
            result = store.retrieve(
                [REQUEST, f"{tool} {arg}"], step=step, exclude=exclude, request_carried=carried, touch=False
            )
        return [names[m.id] for m in result.memories]

    assert later("bash", "go test ./internal/tax/...", turn) == []  # a routine step inside the task: nothing
    assert later("read", "{root}/internal/pdf/render.go", turn) == ["font"]  # the file it opened: its gotcha only
    assert later("edit", "{root}/internal/tax/compute_test.go", turn) == []
    # not carried (a caller that does not keep the turn's block): the request's memories come again
    assert "reverse" in later("edit", "{root}/internal/tax/compute_test.go", [], carried=False)
    assert later("edit", "{root}/internal/tax/compute_test.go", []) == []
