"""The click group of the `codememory` command and its `sessions` group: errors a user can cause end as one line on
stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import sys
from typing import Any

import click

from codememory.core.bounded_input import valid_text
from codememory.text.scrubbed_click import CommandGroup


class CliGroup(CommandGroup):
    """Turns user-caused errors into one line on stderr and a non-zero exit, never a traceback. Every
    message that may echo an argument (click's usage errors, ours) is scrubbed first: an argument can be
    a pasted key or password (`privacy.scrub_message`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Python decodes argv with surrogateescape: a byte that is not UTF-8 arrives as a lone surrogate,
        # which SQLite, the markdown files and JSON output cannot take. It becomes U+FFFD here, once,
        # for every command (bounded_input explains why replace rather than refuse).
        return super().parse_args(ctx, [valid_text(a) for a in args])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # an error of the tree: its line on stderr, its exit code
        except BrokenPipeError:
            sys.stderr.close()  # e.g. `codememory list | head`
            ctx.exit(0)
        return None
