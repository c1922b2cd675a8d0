"""XDG locations: one rule for ours (config, state) and for the other programs' folders we read (OpenCode's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codememory.core.paths import config_dir, state_dir, xdg_home


def test_an_absolute_xdg_variable_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert xdg_home("XDG_DATA_HOME", ".local/share") == tmp_path / "data"


@pytest.mark.parametrize("value", [None, "", "relative/data"])
def test_an_unset_or_relative_one_means_the_default_under_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", value)
    assert xdg_home("XDG_DATA_HOME", ".local/share") == tmp_path / ".local" / "share"


def test_our_folders_are_codememory_under_the_xdg_homes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_STATE_HOME", "not/absolute")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "c" / "codememory"
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "codememory"
