"""Global options and help: --agent-context, --version, --help for every command, unknown commands."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

import codememory
from codememory.cli.main import cli
from support.cli import (
    Invoke,
    ok,
)

# Every command, loaded (the group imports a command's module only when it is used).
COMMANDS = cli.all_commands(click.Context(cli))


# ------------------------------------------------------------------------ global options, help
def test_agent_context_prints_guide_without_a_store(invoke: Invoke, tmp_path: Path) -> None:
    result = ok(invoke("--project", tmp_path, "--agent-context"))
    assert "guide for AI agents" in result.stdout or "guide for coding agents" in result.stdout
    assert "codememory search" in result.stdout and "codememory store" in result.stdout
    assert not (tmp_path / ".codememory").exists()


def test_version(invoke: Invoke) -> None:
    out = ok(invoke("--version")).stdout
    assert "codememory" in out and codememory.__version__ in out


def test_top_level_help_lists_every_command(invoke: Invoke) -> None:
    out = ok(invoke("--help")).stdout
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_for_each_command(invoke: Invoke, tmp_path: Path, command: str) -> None:
    for flag in ("--help", "-h"):
        result = ok(invoke("--project", tmp_path, command, flag))
        assert result.stdout.startswith("Usage:") and command in result.stdout
    assert not (tmp_path / ".codememory").exists()


def test_every_command_option_is_documented(invoke: Invoke) -> None:
    for name, command in COMMANDS.items():
        out = ok(invoke(name, "--help")).stdout
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in out, (name, opt)


def test_unknown_command(invoke: Invoke) -> None:
    result = invoke("frobnicate")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_the_agent_guide_does_not_promise_that_every_word_must_match(invoke: Invoke) -> None:
    """It said a plain query of two words meant "all words must match (implicit AND)", while search goes on to
    memories with some of the words or the same meaning (docs/search.md): an agent would read a partial hit as
    a match of every word."""
    guide = ok(invoke("--agent-context")).stdout
    assert "implicit AND" not in guide and '"partial"' in guide and '"semantic"' in guide
