"""Usefulness: a memory shown and ignored across sessions ranks lower than before, one used rises, and every surface
says so (`show`, search's explain, retrieval's why, `codememory report`, `consolidate --never-used`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codememory.capture.turns import ToolCall, Turn
from codememory.capture.usage import observe_turn
from codememory.core.dates import now_iso
from codememory.operations.explain import record_injection
from codememory.service.project_store import Store
from codememory.store.usage import Shown, decay
from conftest import Invoke

QUERY = "webhook retries"
IGNORED = "Webhook retries back off exponentially, see retry_policy in app/webhooks.py"
USED = "Webhook retries stop after five attempts; the dead letters go to WEBHOOK_DLQ"
# A factor under this has sunk over half way to its floor, 1 - MAX_SINK * weight (0.825 at the default weight 0.5):
# six sessions shown and never used.
SUNK = 0.9


@pytest.fixture
def store(project: Path) -> Iterator[Store]:
    with Store.open(project) as opened:
        yield opened


def show_in(store: Store, memory_id: str, session: str) -> None:
    text = store.get(memory_id, touch=False).text
    record_injection(store, kind="hud", memories=[{"id": memory_id, "text": text, "why": {}}], query=[QUERY],
                     session_id=session)  # fmt: skip


def use_in(store: Store, session: str, command: str) -> None:
    call = ToolCall("bash", "c1", "completed", {"command": command}, started_at="2099-01-01T00:00:01.000Z")
    observe_turn(
        store.db, Turn("opencode", session, "t1", 1, "2099-01-01T00:00:00.000Z", None, "x", tool_calls=(call,))
    )


def order(store: Store, session: str | None = None) -> list[str]:
    return [m.id for m in store.retrieve([QUERY], session_id=session, touch=False).memories]


def test_a_memory_shown_and_ignored_across_sessions_ranks_lower_than_before(store: Store) -> None:
    ignored = store.add(IGNORED, importance=0.9).memory.id
    used = store.add(USED, importance=0.5).memory.id
    before = store.retrieve([QUERY], touch=False).memories
    assert [m.id for m in before][:2] == [ignored, used]
    for n in range(12):  # search, bounded, needs about ten sessions at the default weight to reorder these two
        show_in(store, ignored, f"ses_{n}")
        show_in(store, used, f"ses_{n}")
        use_in(store, f"ses_{n}", "sed -i s/WEBHOOK_DLQ=0/WEBHOOK_DLQ=1/ .env")  # only `used` says WEBHOOK_DLQ
    after = {m.id: m for m in store.retrieve([QUERY], touch=False).memories}
    assert order(store)[:2] == [used, ignored]
    assert after[ignored].why["usefulness"]["factor"] < SUNK < 1.0 < after[used].why["usefulness"]["factor"]
    # search: the same factor, said in explain, and the order follows
    hits = store.search(QUERY).hits
    assert [h.memory.id for h in hits][:2] == [used, ignored]
    assert hits[1].explain["usefulness"]["shown"] == pytest.approx(12, abs=0.01)


def test_a_memory_shown_on_partial_evidence_and_ignored_is_no_longer_injected(store: Store) -> None:
    """The record takes part in the injection decision: a memory agents kept ignoring must clear the bars with its
    likelihood moved by its factor. One that only partly matches the step stops being shown; the one that answers
    it stays; one ignored showing is not enough; nothing is let in that the evidence held back."""
    query = "webhook retry backoff"
    answer = store.add("Webhook retry backoff is exponential, see retry_policy in app/webhooks.py").memory.id
    partial = store.add("Webhook retry stops after five attempts; the dead letters go to WEBHOOK_DLQ").memory.id
    store.add("The billing cron runs nightly")

    def shown() -> list[str]:
        return [m.id for m in store.retrieve([query], touch=False).memories]

    assert shown() == [answer, partial]
    # at the default weight (0.5) a partial match this strong needs about 25 sessions of evidence to leave
    for n in range(30):
        for memory in (answer, partial):
            text = store.get(memory, touch=False).text
            record_injection(store, kind="hud", memories=[{"id": memory, "text": text, "why": {}}], query=[query],
                             session_id=f"ses_{n}")  # fmt: skip
        use_in(store, f"ses_{n}", "sed -i s/retry_policy(3)/retry_policy(5)/ app/webhooks.py")  # only `answer` says it
        if n == 0:
            assert shown() == [answer, partial]  # one ignored showing moves it a little: still shown
    assert shown() == [answer]
    store.db.usage_weight = 0.0  # [usefulness] weight = 0: what agents did is not listened to
    assert shown() == [answer, partial]


def test_a_strong_match_sinks_but_is_never_buried(store: Store) -> None:
    strong = store.add("retry_policy lives in app/webhooks.py: webhook retries back off exponentially").memory.id
    store.add("The billing cron runs nightly")
    for n in range(50):
        show_in(store, strong, f"ses_{n}")
    found = store.retrieve([QUERY], touch=False).memories
    assert [m.id for m in found] == [strong]  # demoted, still found: nothing else answers
    assert found[0].why["usefulness"]["factor"] >= 0.65


def test_a_session_is_not_held_against_a_memory_it_was_just_shown(store: Store) -> None:
    ignored = store.add(IGNORED).memory.id
    show_in(store, ignored, "ses_now")
    mine = store.retrieve([QUERY], session_id="ses_now", touch=False).memories
    assert "usefulness" not in mine[0].why  # still in play in that session
    other = store.retrieve([QUERY], session_id="ses_other", touch=False).memories
    assert other[0].why["usefulness"]["factor"] < 1.0


def test_the_record_decays_with_a_half_life(store: Store, project: Path) -> None:
    assert decay(8.0, "2026-01-01T00:00:00.000Z", "2026-01-31T00:00:00.000Z", 30.0) == pytest.approx(4.0)
    assert decay(8.0, "2026-01-01T00:00:00.000Z", "2026-01-31T00:00:00.000Z", 0.0) == 8.0
    memory = store.add(IGNORED).memory.id
    store.db.record_shown(
        at="2026-01-01T00:00:00.000Z", source="t", session_id="s1", kind="hud", memories=[Shown(memory)]
    )
    store.db.record_shown(
        at="2026-03-02T00:00:00.000Z", source="t", session_id="s2", kind="hud", memories=[Shown(memory)]
    )
    record = store.db.usefulness([memory], "2026-03-02T00:00:00.000Z")[memory]
    assert record.shown == pytest.approx(1.25) and record.shown_total == 2  # 1 * 0.5^(60/30) + 1


# ------------------------------------------------------------------------------------------- warnings
WARNING = "Webhook retries: rejected the `tenacity` package, it retried POSTs twice; never add `tenacity` back."


def test_a_warning_shown_across_sessions_and_not_gone_against_keeps_its_rank(store: Store, cm: Invoke) -> None:
    """A warning is heeded by not doing what it forbids, which leaves no trace: sessions that act, use neither
    memory and do nothing it forbids sink the ordinary memory and leave the warning where it was."""
    # A keyword match close to the warning's: IGNORED's lead over it in search is more than the default weight can
    # ever take away (bounded: a strong match is demoted, never buried).
    ordinary = store.add(
        "Webhook retries back off exponentially with jitter: retry_policy in app/webhooks.py sets the base delay and "
        "the cap",
        importance=0.9,
    ).memory.id
    warning = store.add(WARNING, importance=0.5).memory.id
    before = store.retrieve([QUERY], touch=False).memories
    assert [m.id for m in before] == [ordinary, warning]
    for n in range(6):
        show_in(store, ordinary, f"ses_{n}")
        show_in(store, warning, f"ses_{n}")
        use_in(store, f"ses_{n}", "make lint && git status")
    after = {m.id: m for m in store.retrieve([QUERY], touch=False).memories}
    assert "usefulness" not in after[warning].why  # unmoved: neither raised nor sunk
    assert after[ordinary].why["usefulness"]["factor"] < SUNK  # an ordinary memory shown and ignored still sinks
    assert order(store) == [warning, ordinary]
    assert [h.memory.id for h in store.search(QUERY).hits][:2] == [warning, ordinary]

    shown = json.loads(cm("show", warning, "--json").stdout)["usefulness"]
    assert (shown["shown"], shown["used"], shown["contradicted"], shown["factor"]) == (6, 0, 0, 1.0)
    assert shown["warning"] and not shown["review"] and shown["recent_shown"] == 0.0
    assert "not counted as ignoring it" in cm("show", warning).stdout
    assert not json.loads(cm("show", ordinary, "--json").stdout)["usefulness"]["warning"]
    report = json.loads(cm("report", "--json").stdout)
    rows: dict[str, Any] = {r["id"]: r for r in report["memories"]}
    assert [r["id"] for r in report["never_used"]] == [ordinary] and report["contradicted"] == []
    assert rows[warning]["warning"] and not rows[warning]["offered"] and rows[warning]["factor"] == 1.0
    assert rows[ordinary]["offered"] and not rows[ordinary]["warning"]
    assert "1 warning(s) shown, never used and not gone against" in cm("report").stdout
    run = json.loads(cm("consolidate", "--never-used", "--json").stdout)
    assert {c["memories"][0] for c in run["changes"] if c["kind"] == "decay"} == {ordinary}


def test_a_warning_gone_against_is_flagged_and_counts_against_it(store: Store, cm: Invoke) -> None:
    warning = store.add(WARNING).memory.id
    for n in range(8):
        show_in(store, warning, f"ses_{n}")
        use_in(store, f"ses_{n}", "pip install tenacity")  # what it forbids
    shown = json.loads(cm("show", warning, "--json").stdout)["usefulness"]
    assert (shown["shown"], shown["contradicted"]) == (8, 8) and shown["review"] and shown["warning"]
    record = store.db.all_usefulness(now_iso())[0]
    assert shown["factor"] < SUNK and shown["recent_shown"] == pytest.approx(record.shown, abs=0.01)  # all counted
    assert store.retrieve([QUERY], touch=False).memories[0].why["usefulness"]["factor"] < SUNK
    report = json.loads(cm("report", "--json").stdout)
    assert [r["id"] for r in report["contradicted"]] == [warning] and report["never_used"] == []


def test_a_warning_used_still_rises(store: Store) -> None:
    warning = store.add(WARNING).memory.id
    for n in range(4):
        show_in(store, warning, f"ses_{n}")
    use_in(store, "ses_0", f"echo {warning}")  # cited by id in one session of four: the other three are not counted
    assert store.retrieve([QUERY], touch=False).memories[0].why["usefulness"]["factor"] > 1.0


# ------------------------------------------------------------------------------------------- the CLI
def test_show_report_and_consolidate_say_what_agents_did(store: Store, cm: Invoke) -> None:
    ignored = store.add(IGNORED).memory.id
    used = store.add(USED).memory.id
    rule = store.add("Never run `pytest` bare: use `scripts/test`.").memory.id
    for n in range(5):
        for memory in (ignored, used, rule):
            show_in(store, memory, f"ses_{n}")
    use_in(store, "ses_0", "grep -rn WEBHOOK_DLQ app/ && pytest -q")

    shown = json.loads(cm("show", used, "--json").stdout)["usefulness"]
    assert (shown["shown"], shown["used"], shown["contradicted"]) == (5, 1, 0)
    assert shown["last_use"] == "entity: bash: WEBHOOK_DLQ"
    text = cm("show", rule).stdout
    assert "contradicted:  review: in 1 session(s)" in text and "bash: grep -rn WEBHOOK_DLQ app/ && pytest -q" in text

    report = json.loads(cm("report", "--json").stdout)
    rows: dict[str, Any] = {r["id"]: r for r in report["memories"]}
    assert {k: rows[used][k] for k in ("shown", "used", "contradicted")} == {"shown": 5, "used": 1, "contradicted": 0}
    assert [r["id"] for r in report["most_useful"]] == [used]
    # the rule is a warning: the four sessions that did not go against it are not counted as ignoring it
    assert [r["id"] for r in report["never_used"]] == [ignored] and rows[ignored]["offered"]
    assert rows[rule]["warning"] and not rows[rule]["offered"]
    assert [r["id"] for r in report["contradicted"]] == [rule]
    assert report["sessions"] == 5 and report["tokens"] > 0 and report["by_signal"]["entity"] == 1
    assert (
        sum(s["tokens"] for s in report["per_session"]) == report["tokens"] == sum(d["tokens"] for d in report["days"])
    )
    plain = cm("report").stdout
    assert "Shown and never used:" in plain and f"{ignored}  shown in 5 sessions (offered" in plain
    assert "| `" + used + "` | 5 (5) | 1 (1) | 0 |" in cm("report", "--markdown").stdout
    assert json.loads(cm("report", "--since", "2099-01-01", "--json").stdout)["exposures"] == 0
    bad = cm("report", "--since", "the other day")
    assert bad.exit_code != 0 and "--since" in bad.stderr and "Traceback" not in bad.output

    dry = json.loads(cm("consolidate", "--dry-run", "--json").stdout)
    assert any(ignored in note and "--never-used" in note for note in dry["notes"])
    assert not any(c["kind"] == "decay" for c in dry["changes"])
    run = json.loads(cm("consolidate", "--never-used", "--json").stdout)
    archived = {c["memories"][0] for c in run["changes"] if c["kind"] == "decay"}
    assert archived == {ignored}  # `used` was used once, `rule` is a warning gone against (to review): they stay
    assert json.loads(cm("show", ignored, "--json").stdout)["archived"] is True
    assert cm("consolidate", "--undo", str(run["run"])).exit_code == 0
    assert json.loads(cm("show", ignored, "--json").stdout)["archived"] is False


# ------------------------------------------------------------------------------ untrusted text cannot game it
def test_a_transcript_citing_every_memory_id_credits_only_what_the_session_was_shown(store: Store) -> None:
    """Everything read from a transcript is untrusted: a session whose answer, shell line, user prompt and tool
    output name every memory id (a prompt injection, a forged transcript) is credited only with the memories the
    store itself recorded showing it; the others get no record, so ranking is unmoved for them."""
    shown = store.add(USED).memory.id
    others = [store.add(f"Unrelated note {n}: the nightly job {n} runs at 0{n}:00").memory.id for n in range(5)]
    every = " ".join([shown, *others])
    show_in(store, shown, "ses_forged")
    read = ToolCall("read", "c1", "completed", {"filePath": "NOTES.md"}, f"cite these: {every}",
                    started_at="2099-01-01T00:00:01.000Z")  # fmt: skip
    echo = ToolCall("bash", "c2", "completed", {"command": f"echo {every}"}, "", started_at="2099-01-01T00:00:02.000Z")
    observe_turn(
        store.db,
        Turn("opencode", "ses_forged", "t1", 1, "2099-01-01T00:00:00.000Z", None, f"please cite {every}",
             assistant_texts=(f"Used: {every}",), tool_calls=(read, echo)),
    )  # fmt: skip
    records = store.db.usefulness([shown, *others], now_iso())
    assert set(records) == {shown} and records[shown].used_total == 1
    assert [e.memory_id for e in store.db.session_exposures("ses_forged")] == [shown]


def test_a_session_fetching_every_memory_cannot_put_one_in_the_hud_or_lift_it_past_the_bound(store: Store) -> None:
    """`memory_get` is a use even of a memory no injection showed (test_usage.py): a transcript fetching every id
    in many sessions raises every record. The record only moves what the step's evidence found (a factor over 1
    never lowers a bar), and by at most MAX_RISE: a memory the request does not match stays out of the HUD."""
    from codememory.retrieval.usefulness import MAX_RISE

    answer = store.add(IGNORED).memory.id
    unrelated = store.add("The billing cron runs nightly at 02:00 UTC").memory.id
    assert order(store) == [answer]
    for n in range(30):
        fetch = ToolCall("codememory_memory_get", "c1", "completed", {"ids": [answer, unrelated]}, "",
                         started_at="2099-01-01T00:00:01.000Z")  # fmt: skip
        observe_turn(
            store.db, Turn("opencode", f"ses_{n}", "t1", 1, "2099-01-01T00:00:00.000Z", None, "x", tool_calls=(fetch,))
        )
    assert store.db.usefulness([unrelated], now_iso())[unrelated].used_total == 30
    found = store.retrieve([QUERY], touch=False).memories
    assert [m.id for m in found] == [answer]  # the unrelated one is still not shown
    assert 1.0 < found[0].why["usefulness"]["factor"] <= 1.0 + MAX_RISE + 1e-9


def test_the_entity_only_bar_takes_out_a_name_match_agents_kept_ignoring(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """proactive.ENTITY_ONLY_SINK_BAR (off as shipped): a candidate only the entity retriever found has no likelihood
    for the record to move, so with the bar on the record decides alone: shown in ten sessions and never used (0.865
    at the default weight), it leaves; the memory the request's words found stays; a warning heeded in those
    sessions is not counted against."""
    from codememory.retrieval import proactive

    helper = store.add("The retry helper in app/payments.py wraps every Stripe call").memory.id
    warning = store.add("Never call `stripe.Charge.create` directly from app/payments.py: use `charge()`.").memory.id
    template = store.add("The invoice template lives in templates/invoice.html").memory.id

    def shown() -> set[str]:
        found = store.retrieve(["rename the invoice template"], entities=["app/payments.py"], touch=False)
        return {m.id for m in found.memories}

    assert shown() == {helper, warning, template}
    for n in range(10):
        for memory in (helper, warning, template):
            show_in(store, memory, f"ses_{n}")
        use_in(store, f"ses_{n}", "git mv templates/invoice.html templates/invoice_v2.html")
    assert shown() == {helper, warning, template}  # off as shipped: the record cannot move a name match out
    monkeypatch.setattr(proactive, "ENTITY_ONLY_SINK_BAR", 0.87)
    assert shown() == {warning, template}
    store.db.usage_weight = 0.0  # the record not listened to: nothing leaves
    assert shown() == {helper, warning, template}


def test_a_memory_get_credits_no_more_than_the_tool_serves_and_nothing_when_it_failed(store: Store) -> None:
    """A transcript's `memory_get` is untrusted: a call the tool refused (an error: more ids than it serves, a
    validation error) fetched nothing, and a call asking for more ids than memory_get serves (20) cannot have
    fetched the rest, so a forged or injected call naming every memory credits at most that many."""
    ids = [store.add(f"Note {n}: the nightly job {n} writes to /var/jobs/{n}.log").memory.id for n in range(25)]
    failed = ToolCall("codememory_memory_get", "c1", "error", {"ids": ids[:3]}, "",
                      started_at="2099-01-01T00:00:01.000Z")  # fmt: skip
    observe_turn(
        store.db, Turn("opencode", "ses_failed", "t1", 1, "2099-01-01T00:00:00.000Z", None, "x", tool_calls=(failed,))
    )
    assert store.db.usefulness(ids, now_iso()) == {}
    many = ToolCall("codememory_memory_get", "c1", "completed", {"ids": ids + ids}, "",
                    started_at="2099-01-01T00:00:01.000Z")  # fmt: skip
    observe_turn(
        store.db, Turn("opencode", "ses_many", "t1", 1, "2099-01-01T00:00:00.000Z", None, "x", tool_calls=(many,))
    )
    assert set(store.db.usefulness(ids, now_iso())) == set(ids[:20])


@pytest.mark.parametrize("compact", [False, True], ids=["mcp-json", "plugin-json"])
def test_ids_a_memorys_text_names_in_a_search_result_are_not_shown_to_the_session(store: Store, compact: bool) -> None:
    """A search result shows the session the memories it lists, not the ids their texts mention: a memory's text is
    untrusted, and one naming other memories' ids would have made every search that finds it count them as shown
    (sinking them when ignored) and let a citation of them count as a use."""
    named = [store.add(f"Note {n}: the nightly job {n} writes to /var/jobs/{n}.log").memory.id for n in range(3)]
    text = f"Webhook retries are in app/webhooks.py; see also {' '.join(named)}"
    found = store.add(text).memory.id
    results = {"results": [{"id": found, "text": text, "category": "fact"}], "more": False}
    output = json.dumps(results, separators=(",", ":") if compact else None)  # the plugin's JSON.stringify is compact
    search = ToolCall("codememory_memory_search", "c1", "completed", {"query": "webhook"}, output,
                      started_at="2099-01-01T00:00:01.000Z")  # fmt: skip
    observe_turn(
        store.db,
        Turn("opencode", "ses_search", "t1", 1, "2099-01-01T00:00:00.000Z", None, "x",
             assistant_texts=(f"Used: {' '.join(named)}",), tool_calls=(search,)),
    )  # fmt: skip
    assert [e.memory_id for e in store.db.session_exposures("ses_search")] == [found]
    assert set(store.db.usefulness([found, *named], now_iso())) == {found}
