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
from codememory.operations.explain import record_injection
from codememory.service.project_store import Store
from codememory.store.usage import Shown, decay
from conftest import Invoke

QUERY = "webhook retries"
IGNORED = "Webhook retries back off exponentially, see retry_policy in app/webhooks.py"
USED = "Webhook retries stop after five attempts; the dead letters go to WEBHOOK_DLQ"


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
    for n in range(6):
        show_in(store, ignored, f"ses_{n}")
        show_in(store, used, f"ses_{n}")
        use_in(store, f"ses_{n}", "sed -i s/WEBHOOK_DLQ=0/WEBHOOK_DLQ=1/ .env")  # only `used` says WEBHOOK_DLQ
    after = {m.id: m for m in store.retrieve([QUERY], touch=False).memories}
    assert order(store)[:2] == [used, ignored]
    assert after[ignored].why["usefulness"]["factor"] < 0.8 < 1.0 < after[used].why["usefulness"]["factor"]
    # search: the same factor, said in explain, and the order follows
    hits = store.search(QUERY).hits
    assert [h.memory.id for h in hits][:2] == [used, ignored]
    assert hits[1].explain["usefulness"]["shown"] == pytest.approx(6, abs=0.01)


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
    for n in range(6):
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
    assert {r["id"] for r in report["never_used"]} == {ignored, rule} and rows[ignored]["offered"]
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
    assert archived == {ignored, rule}  # `used` was used once: it stays
    assert json.loads(cm("show", ignored, "--json").stdout)["archived"] is True
    assert cm("consolidate", "--undo", str(run["run"])).exit_code == 0
    assert json.loads(cm("show", ignored, "--json").stdout)["archived"] is False
