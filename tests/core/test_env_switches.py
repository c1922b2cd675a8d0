"""One rule for every environment switch: unset, "", "0", "false", "no" (any case, blanks ignored) mean off."""

from __future__ import annotations

import json
import os

import pytest

from codememory.core import loopback
from codememory.core.env_switches import NO_CAPTURE, capture_disabled, switched_off, switched_on
from codememory.core.paths import state_dir

SWITCH = "CODEMEMORY_TEST_SWITCH"


@pytest.mark.parametrize("value", ["", "0", "false", "FALSE", " no ", "No"])
def test_values_that_leave_a_switch_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(SWITCH, value)
    assert not switched_on(SWITCH)


@pytest.mark.parametrize("value", ["1", "true", "yes", "on", "off", "2"])
def test_any_other_value_turns_it_on(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(SWITCH, value)
    assert switched_on(SWITCH)


@pytest.mark.parametrize(
    ("value", "off"), [("off", True), (" OFF ", True), ("0", True), ("no", True), ("", False), ("1", False)]
)
def test_a_switch_on_by_default_is_turned_off_by_off_too(
    monkeypatch: pytest.MonkeyPatch, value: str, off: bool
) -> None:
    monkeypatch.setenv(SWITCH, value)
    assert switched_off(SWITCH) is off


def test_an_unset_switch_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SWITCH, raising=False)
    assert not switched_on(SWITCH)


def test_capture_disabled_reads_codememory_no_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_CAPTURE, "1")
    assert NO_CAPTURE == "CODEMEMORY_NO_CAPTURE" and capture_disabled()
    monkeypatch.setenv(NO_CAPTURE, "false")
    assert not capture_disabled()


def test_the_hooks_daemon_switch_follows_the_same_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """`CODEMEMORY_HOOK_NO_DAEMON=false` means "ask the daemon" (it meant the opposite when only "" and "0"
    were off). The daemon's address is written by hand: this process stands in for the running daemon."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "daemon.json").write_text(json.dumps({"port": 40123, "pid": os.getpid()}), encoding="utf-8")
    (folder / "token").write_text("t0ken\n", encoding="utf-8")
    monkeypatch.setenv(loopback.ENV_NO_DAEMON, "false")
    assert loopback.daemon_address() == (40123, "t0ken")
    monkeypatch.setenv(loopback.ENV_NO_DAEMON, "1")
    assert loopback.daemon_address() is None
