"""`codememory remember-scan`: *Remember* notes on stdin become memories with tags and expiry."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from support.cli import (
    Invoke,
    ok,
    ok_json,
    parse_ts,
    search_ids,
)

# ------------------------------------------------------------------------------ remember-scan
REMEMBER_TEXT = """Done with the refactor.

*Remember*: Docker build fails with an error when the BuildKit cache is full; fix with `docker builder prune`.
Valid until March 2099.

*Remember*: The temporary staging token rotates weekly

*Remember*: Feature flag cleanup for the postgres migration is planned for Q1 2099

Some unrelated closing text.
"""


def test_remember_scan_stores_each_note_with_tags_and_expiry(cm: Invoke) -> None:
    data = ok_json(cm("remember-scan", "--json", input=REMEMBER_TEXT))
    assert (data["found"], data["stored"]) == (3, 3)
    mems = [r["memory"] for r in data["results"]]
    docker, temp, flag = mems
    assert docker["text"].startswith("Docker build fails") and docker["text"].endswith("Valid until March 2099.")
    assert "Some unrelated" not in flag["text"] and "Done with" not in docker["text"]
    assert {"docker", "troubleshooting"} <= set(docker["tags"])
    assert "postgresql" in flag["tags"]
    assert docker["expires_at"] == "2099-03-31T23:59:59.999Z"
    assert flag["expires_at"] == "2099-03-31T23:59:59.999Z"
    expected_temp = datetime.now(UTC) + timedelta(days=90)
    assert abs(parse_ts(temp["expires_at"]) - expected_temp) < timedelta(minutes=5)
    assert {m["entered_by"] for m in mems} == {"auto-extract"}
    stored = {m["id"] for m in ok_json(cm("list", "--json"))["memories"]}
    assert stored == {m["id"] for m in mems}
    assert search_ids(cm, "BuildKit") == [docker["id"]]


def test_remember_scan_is_idempotent_and_takes_entered_by(cm: Invoke) -> None:
    ok(cm("remember-scan", input=REMEMBER_TEXT))
    again = ok_json(cm("remember-scan", "--json", input=REMEMBER_TEXT))
    assert (again["found"], again["stored"]) == (3, 0)
    out = ok(cm("remember-scan", "--entered-by", "claude", "--source", "session-9", input="*Remember*: new fact here"))
    assert "Stored mem_" in out.stdout
    mem = ok_json(cm("list", "--entered-by", "claude", "--json"))["memories"]
    assert [(m["text"], m["source"]) for m in mem] == [("new fact here", "session-9")]


def test_remember_scan_with_no_notes(cm: Invoke) -> None:
    result = ok(cm("remember-scan", input="nothing to remember here\n"))
    assert result.stdout == "" and "No *Remember* notes found" in result.stderr
    assert ok_json(cm("list", "--json"))["total"] == 0
