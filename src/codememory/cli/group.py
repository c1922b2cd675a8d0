"""The click group of the `codememory` command and its `sessions` group: errors a user can cause end as one line on
stderr and a non-zero exit, never a traceback. The top-level group loads each command's module only when that
command is asked for, so `codememory --version` and a single command do not import every other command."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

from codememory.core.bounded_input import valid_text
from codememory.text.scrubbed_click import CommandGroup


class CliGroup(CommandGroup):
    """Turns user-caused errors into one line on stderr and a non-zero exit, never a traceback (a closed standard
    output, `codememory list | head -1`, into a quiet exit 0: `CommandGroup`). Every
    message that may echo an argument (click's usage errors, ours) is scrubbed first: an argument can be
    a pasted key or password (`privacy.scrub_message`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Python decodes argv with surrogateescape: a byte that is not UTF-8 arrives as a lone surrogate,
        # which SQLite, the markdown files and JSON output cannot take. It becomes U+FFFD here, once,
        # for every command (bounded_input explains why replace rather than refuse).
        return super().parse_args(ctx, [valid_text(a) for a in args])


class LazyCliGroup(CliGroup):
    """A CliGroup whose commands are named as "module:attribute" and imported on first use (the pattern of
    click's documentation, "Lazily Loading Subcommands"): the command modules import the operations and the
    store, which a start-up that only prints the version or runs one command should not pay for."""

    def __init__(self, *args: Any, lazy_commands: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in self.lazy_commands:
            return command
        module, _, attribute = self.lazy_commands[cmd_name].partition(":")
        loaded = getattr(importlib.import_module(module), attribute)
        if not isinstance(loaded, click.Command):
            raise TypeError(f"{self.lazy_commands[cmd_name]} is not a click command")
        _help_flags_everywhere(loaded)
        self.add_command(loaded, cmd_name)
        return loaded

    def all_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """Every command, loaded (for the tests and tools that walk the whole tree)."""
        found = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
        return {name: command for name, command in found.items() if command is not None}


def _help_flags_everywhere(command: click.Command) -> None:
    """`-h` on every command, also when a command object was first run on its own (click caches each command's
    help option the first time it builds one, from that run's settings: a test or a script calling `hook`
    directly would otherwise leave `codememory hook -h` without `-h`)."""
    command.context_settings.setdefault("help_option_names", ["-h", "--help"])
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _help_flags_everywhere(sub)
