"""A label (a tag, `entered_by`) is a word or a name: a bare random-looking token there is taken for a secret even
without a context or 32 characters (`text.privacy.scrub_label`). It never reaches the store, whichever way it comes
(`store`, the MCP server, the daemon, a pulled memory file), and never leaves for the organisation's Milvus, even
from a row a committed store holds."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from conftest import invoke_cli
from support.daemon import isolated_env, make_project, spawn
from support.mcp import call, project_session
from support.pulled import put, record

# Bare tokens with nothing around them that marks them (no prefix, under 32 characters)
T = ["Pw61x7Kq2Lm", "aB3dE5gH7jQ", "X9kQ2mR7vT4pL8", "Zq4Wm8Rt2Yp6", "Lk3Jh7Gf5Ds1", "Mn8Bv4Cx2Za6", "Qw5Er9Ty3Ui7"]


def leaks(folder: Path, *texts: str) -> list[str]:
    """The tokens found in the store folder (the pulled files, which are the input, left out) or in `texts`."""
    files = [p for p in folder.rglob("*") if p.is_file() and "memories" not in p.relative_to(folder).parts]
    blobs = [p.read_bytes() for p in files] + [t.encode() for t in texts]
    return [t for t in T if any(t.encode() in b or t.lower().encode() in b for b in blobs)]


def test_a_bare_token_in_a_tag_or_entered_by_never_reaches_the_store(project: Path) -> None:
    stored = invoke_cli(
        "--project", project, "store", "Deploys need the VPN", "--tags", f"ops,{T[0]}", "--entered-by", T[1]
    )
    assert stored.exit_code == 0, stored.output
    put(
        project,
        "mem_7a900001",
        record("mem_7a900001", "Pulled note about the VPN", tags=["vpn", T[2]], entered_by=T[3]),
    )
    synced = invoke_cli("--project", project, "sync", "--json")
    assert json.loads(synced.stdout)["added"] == ["mem_7a900001"]

    async def body(session: ClientSession) -> Any:
        return await call(session, "memory_store", {"text": "The VPN profile is work-vpn", "tags": ["vpn", T[4]]})

    from_mcp = project_session(project, body)
    listed = invoke_cli("--project", project, "list", "--json").stdout
    tags = {m["id"]: m["tags"] for m in json.loads(listed)["memories"]}
    assert tags["mem_7a900001"] == ["vpn"] and tags[from_mcp["memory"]["id"]] == ["vpn"]
    assert ["ops"] in tags.values()
    assert leaks(project / ".codememory", listed) == []


@pytest.mark.slow  # a daemon
def test_the_daemon_keeps_them_out_too(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    project = tmp_path / "project"
    make_project(env, project)
    d = spawn(env)
    try:
        body = {"project_root": str(project), "text": "Deploys need the VPN", "tags": ["ops", T[5]], "entered_by": T[6]}
        stored = d.client().request("POST", "/memory/store", body)
        assert stored.status == 200, stored.data
        assert stored.data["memory"]["tags"] == ["ops"] and T[6] not in json.dumps(stored.data)
    finally:
        d.terminate()
    assert leaks(project / ".codememory", json.dumps(stored.data)) == []


pymilvus = pytest.importorskip("pymilvus", reason='the milvus extra: pip install -e ".[milvus]"')


@pytest.mark.default_model
@pytest.mark.slow  # Milvus Lite and the model
def test_a_committed_rows_random_tag_is_never_published(tmp_path: Path, make_project: Any) -> None:
    db = tmp_path / "org" / "org.db"
    db.parent.mkdir()
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "codememory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(f'[remote]\nuri = "{db}"\n')
    project = make_project("payments")
    shown = json.loads(invoke_cli("--project", project, "store", "Payments retry five times", "--json").stdout)
    with closing(sqlite3.connect(project / ".codememory" / "memory.db")) as conn:  # as a committed store holds it
        pk = conn.execute("SELECT pk FROM memories WHERE id = ?", (shown["memory"]["id"],)).fetchone()[0]
        conn.execute("INSERT INTO tags(name) VALUES (?)", (T[0],))
        conn.execute("INSERT INTO memory_tags(memory_pk, tag_id) SELECT ?, id FROM tags WHERE name = ?", (pk, T[0]))
        conn.commit()
    published = invoke_cli("--project", project, "publish", "--json")
    assert published.exit_code == 0 and json.loads(published.stdout)["sent"] == 1, published.output
    client = pymilvus.MilvusClient(str(db))
    try:
        client.load_collection("codememory_memories")
        rows = client.query("codememory_memories", filter='project != ""', output_fields=["text", "tags", "source"])
    finally:
        client.close()
    assert len(rows) == 1 and T[0] not in json.dumps(rows, default=str)
