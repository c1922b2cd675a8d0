"""The record of what an assistant session was given (codememory.operations.hook_injected): a file anyone who can
write to the project may have put there, so it is bounded, checked entry by entry and never followed through a
link; at worst a memory is shown once more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codememory import Store
from codememory.errors import UnsafePath
from codememory.operations.hook_injected import MAX_BYTES, MAX_LINES, Injected, digest
from codememory.operations.hook_journal import Journal

HOOK = Path(sys.executable).with_name("codememory-hook")
LINE = "- `mem_0000000a` [note] Staging deploys use the deploy-staging make target"


def test_a_line_is_fresh_until_added_and_again_once_its_text_changes() -> None:
    injected = Injected()
    assert injected.fresh("mem_0000000a", LINE) and not injected.changed
    injected.add("mem_0000000a", LINE)
    assert not injected.fresh("mem_0000000a", LINE) and injected.changed
    assert injected.fresh("mem_0000000a", LINE + " (v2)")
    injected.clear()
    assert injected.fresh("mem_0000000a", LINE) and len(injected) == 0


def test_only_our_keys_are_kept_and_the_oldest_go_first() -> None:
    injected = Injected()
    for bad in ("mem_0000000A", "mem_0000000a\n", "../journal", "start:evil", ""):
        injected.add(bad, LINE)
    assert len(injected) == 0 and not injected.changed
    for n in range(MAX_LINES + 5):
        injected.add(f"mem_{n:08x}", LINE)
    assert len(injected) == MAX_LINES
    assert injected.fresh("mem_00000000", LINE) and not injected.fresh(f"mem_{MAX_LINES + 4:08x}", LINE)
    injected.add("start:hint", "hint")
    assert list(injected.lines)[-1] == "start:hint"


def test_a_record_read_back_keeps_only_well_formed_entries() -> None:
    good = digest(LINE)
    data = {
        "version": 1,
        "lines": [
            ["mem_0000000a", good],
            ["mem_0000000b", good.upper()],  # not our digest
            ["mem_0000000c", good[:8]],
            ["mem_000000zz", good],
            ["start:last", good],
            ["mem_0000000d"],
            "mem_0000000e",
            [1, good],
            ["mem_0000000f", None],
        ],
    }
    assert list(Injected.from_json(data).lines) == ["mem_0000000a", "start:last"]
    for other in (None, [], "x", {"version": 2, "lines": data["lines"]}, {"version": 1, "lines": "x"}):
        assert len(Injected.from_json(other)) == 0
    many = {"version": 1, "lines": [[f"mem_{n:08x}", good] for n in range(MAX_LINES * 2)]}
    kept = Injected.from_json(many).lines
    assert len(kept) == MAX_LINES and f"mem_{MAX_LINES * 2 - 1:08x}" in kept and "mem_00000000" not in kept


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    store, _ = Store.init(root)
    with store:
        # a standing instruction: what a session start shows before any step is known
        store.add("Staging deploys use the deploy-staging make target", category="convention", importance=0.95)
    return root


def test_an_unusable_record_file_counts_as_nothing_injected(project: Path) -> None:
    journal = Journal(project, "claude", "s1")
    journal.injected_path.write_text("{not json")
    assert len(journal.load_injected()) == 0
    record = Injected()
    record.add("mem_0000000a", LINE)
    journal.save_injected(record)
    assert journal.load_injected().lines == record.lines
    padded = json.dumps(record.to_json()) + " " * MAX_BYTES  # valid JSON, but over the limit: not ours
    journal.injected_path.write_text(padded)
    assert len(journal.load_injected()) == 0


def test_a_record_file_that_is_a_link_is_neither_read_nor_written(project: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.json"
    record = Injected()
    record.add("mem_0000000a", LINE)
    victim.write_text(json.dumps(record.to_json()))
    before = victim.read_bytes()
    journal = Journal(project, "claude", "s1")
    journal.injected_path.symlink_to(victim)
    assert len(journal.load_injected()) == 0
    with pytest.raises(UnsafePath):
        journal.save_injected(record)
    # through the hook: the memories are still injected, the link is logged and left as it was
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    env = {**os.environ, "CODEMEMORY_HOOK_NO_DAEMON": "1"}
    for _ in range(2):  # nothing could be recorded, so the second start shows the memory again
        done = subprocess.run(
            [str(HOOK), "claude", "SessionStart"], input=json.dumps(payload), capture_output=True, text=True, env=env
        )
        assert "deploy-staging" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert victim.read_bytes() == before and journal.injected_path.is_symlink()
    log = (project / ".codememory" / "logs" / "hooks.log").read_text()
    assert "saving what was injected: UnsafePath" in log
