"""One registry says what each assistant is (codememory.assistants): every spec's events are what `codememory init`
installs in its files, and each of them is handled by the hook (no "unknown event", no error in hooks.log), with the
session-start context in the shape that assistant reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codememory import Store, assistants
from codememory.assistants.spec import Assistant, HookJson, Output, Role, RuleFile
from codememory.capture.hook_transcripts import READERS
from codememory.install.edits import is_our_hook
from codememory.install.rule_block import CONTEXT
from codememory.operations import hook_events
from conftest import Invoke

HOOK_RE_EVENT = "codememory-hook {key} {event}"


def our_events(spec: Assistant, root: Path) -> set[str]:
    """The events whose entries in the spec's hook files run our hook for that very event."""
    found: set[str] = set()
    for file in spec.files:
        if not isinstance(file, HookJson):
            continue
        hooks = json.loads(file.place.resolve(root).read_text())["hooks"]
        for event, entries in hooks.items():
            commands = [h for e in entries for h in (e.get("hooks", []) if file.nested else [e])]
            for command in filter(is_our_hook, commands):
                assert all(command[k] == HOOK_RE_EVENT.format(key=spec.key, event=event) for k in file.command_keys)
                found.add(event)
    return found


def minimal_payload(spec: Assistant, role: Role, root: Path) -> dict[str, Any]:
    body: dict[str, Any] = {"hook_event_name": "x", "cwd": str(root), spec.payload.session[0]: "s1"}
    if spec.key == "cursor":
        body["workspace_roots"] = [str(root)]
    if role is Role.START and spec.payload.source:
        body[spec.payload.source] = "startup"
    if role is Role.PROMPT:
        body[spec.payload.prompt] = "How do we deploy the staging server?"
    if role is Role.EDIT and spec.payload.edit_tools:
        body |= {"tool_name": sorted(spec.payload.edit_tools)[0], "tool_input": {"file_path": "src/app.py"}}
    elif role is Role.EDIT:
        body["file_path"] = str(root / "src" / "app.py")  # the event names the file itself (Cursor)
    return body


def context_text(spec: Assistant, out: str) -> str:
    data = json.loads(out)
    if spec.output is Output.HOOK_SPECIFIC:
        return str(data["hookSpecificOutput"]["additionalContext"])
    return str(data[spec.output.value])


def test_the_registry_is_consistent() -> None:
    names = [n for a in assistants.REGISTRY for n in a.names]
    assert len(names) == len(set(names)), "a name or alias used twice"
    assert len({a.recorded_as for a in assistants.REGISTRY}) == len(assistants.REGISTRY)
    for spec in assistants.REGISTRY:
        assert assistants.find(spec.key.upper()) is spec and all(assistants.find(n) is spec for n in spec.aliases)
        assert len({e.name for e in spec.events}) == len(spec.events)
        assert spec.transcript_reader is None or spec.transcript_reader in READERS
        assert all(f.audience in CONTEXT for f in spec.files if isinstance(f, RuleFile))
        assert bool(spec.events) == any(isinstance(f, HookJson) for f in spec.files)
        # the events the daemon answers are exactly the ones the assistant waits on before its model runs
        for event in spec.events:
            assert hook_events.waits_before_model(spec.key, event.name) == (event.role in (Role.START, Role.PROMPT))
    assert assistants.find("claude-code") is assistants.find("claude")


@pytest.mark.slow  # init for every assistant, then each event's hook
def test_every_specs_events_are_installed_by_init_and_handled_by_the_hook(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COPILOT_CLI", raising=False)
    result = invoke("--project", root, "init", "--assistants", "all", "--no-global", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["assistants"] == list(assistants.KEYS)
    with Store.open(root) as store:
        # a standing instruction: what a session start shows (the rest comes when a prompt asks for it)
        store.add("Staging deploys use the deploy-staging make target", category="convention", importance=0.9)
    for spec in assistants.REGISTRY:
        assert our_events(spec, root) == {e.name for e in spec.events}, spec.key
        for event in spec.events:
            raw = json.dumps(minimal_payload(spec, event.role, root))
            out = hook_events.run(spec.key, event.name, raw, str(root))
            if event.role is Role.START:
                assert "deploy-staging" in context_text(spec, out), spec.key
            elif event.role not in spec.context_roles:
                assert out == "" or (event.role is Role.COMPACT and spec.compact_reminder), (spec.key, out)
    log = root / ".codememory" / "logs" / "hooks.log"
    assert not log.exists() or log.read_text() == ""
    journal = root / ".codememory" / "journal"
    edited = {p.name.split("-s1")[0] for p in journal.glob("*-s1.jsonl")}
    assert edited == {a.key for a in assistants.REGISTRY if any(e.role is Role.EDIT for e in a.events)}
    # an alias names the same assistant: the same journal
    claude = assistants.REGISTRY[0]
    hook_events.run("claude-code", "PostToolUse", json.dumps(minimal_payload(claude, Role.EDIT, root)), str(root))
    assert len((journal / "claude-s1.jsonl").read_text().splitlines()) == 2
    assert not list(journal.glob("claude-code-*"))
