"""Click groups whose usage errors do not echo secrets: click quotes the offending argument ("No such option
'-----BEGIN OPENSSH PRIVATE KEY-----…'", "Got unexpected extra argument (…)", "'…' is not one of …"), and
an argument can be a pasted key or password. The message goes through `privacy.scrub_message` first.
`CommandGroup` also ends every error of the tree (codememory.errors) the same way: one scrubbed line on stderr,
`codememory: error: <message>`, and the error's exit code (`errors.exit_code`), never a traceback.

Here, below the entry points, because two of them parse arguments with click: the `codememory` CLI and
`python -m codememory.daemon` (the daemon's own command group, which `daemon start` spawns)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from codememory.errors import CodememoryError, exit_code


def scrubbed(exc: click.ClickException) -> click.ClickException:
    """The same error (a usage error still shows the usage first, and exits with 2) with its message
    scrubbed, on one line, long echoed arguments cut."""
    from codememory.text.privacy import scrub_message  # its patterns compile on import: only when an error shows

    message = scrub_message(exc.format_message(), limit=300)
    if isinstance(exc, click.UsageError):
        return click.UsageError(message, ctx=exc.ctx)
    return click.ClickException(message)


class ScrubbedGroup(click.Group):
    """Parsing a group's arguments (make_context) and running a subcommand (invoke, which parses the
    subcommand's arguments) both raise usage errors: both are scrubbed."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            raise scrubbed(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            raise scrubbed(exc) from None


def error_line(error: CodememoryError) -> str:
    """How a command shows an error of the tree on stderr: one line, scrubbed (it may quote an argument)."""
    from codememory.text.privacy import scrub_message

    return f"codememory: error: {scrub_message(error)}"


class CommandGroup(ScrubbedGroup):
    """A scrubbed group whose commands end on an error of the tree with its one line on stderr and its exit
    code, and quietly with exit 0 when the reader of standard output went away (`codememory daemon status | head
    -1`): here, in the innermost group, before a group's own OSError handling could take it for a failure."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:  # `codememory --help | head -1`: the help is printed while parsing
            end_quietly_on_closed_stdout()
            raise click.exceptions.Exit(0) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CodememoryError as exc:
            click.echo(error_line(exc), err=True)
            ctx.exit(exit_code(exc))
        except BrokenPipeError:
            end_quietly_on_closed_stdout()
            ctx.exit(0)
        return None


def end_quietly_on_closed_stdout() -> None:
    """What Python's documentation (signal module, "Note on SIGPIPE") advises: point standard output at /dev/null
    so that the flush at exit does not fail again and print "Exception ignored ... BrokenPipeError"."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stream)
        pass
