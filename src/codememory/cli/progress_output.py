"""Progress and waiting lines on standard error while a command works: best effort.

A write to a closed pipe raises BrokenPipeError, which ends a command quietly with exit 0 (`CommandGroup`, for
`codememory list | head -1`). Raised by a progress line in the middle of the work (`codememory import big.jsonl
2>&1 | head -c 5`) it rolled back an import that would have succeeded and still exited 0: a line meant to show the
work must not be what stops it. What a command prints once its work is done goes to click.echo as before.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, TextIO, cast

import click


def progress_note(line: str, *, nl: bool = True) -> None:
    """`line` on standard error; nothing when standard error cannot be written to."""
    with contextlib.suppress(OSError, ValueError):  # a closed pipe (BrokenPipeError), or a stream already closed
        click.echo(line, nl=nl, err=True)


class _ProgressStream:
    """Standard error for click.progressbar: writes that fail are dropped (see the module's docstring)."""

    def __init__(self) -> None:
        self._stream = sys.stderr

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, ...: as standard error says
        return getattr(self._stream, name)


def progress_stream() -> TextIO:
    """Standard error for click.progressbar, its failed writes dropped (`_ProgressStream`)."""
    return cast(TextIO, _ProgressStream())
