"""The daemon's log: the root logger (and so uvicorn's) to a rotating file, every line scrubbed of secrets
(`privacy.scrub`) and kept on one line. Rotated at `[daemon] log_max_bytes`, `[daemon] log_backups` kept."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Sequence
from pathlib import Path

from codememory.core.safe_text import printable_line
from codememory.text.privacy import scrub


class ScrubFilter(logging.Filter):
    """Every message, with its arguments merged in, and every traceback pass through `privacy.scrub`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the line
            message = f"{record.msg} {record.args}"
        record.msg = scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class OneLineFormatter(logging.Formatter):
    """One line per record, traceback included: a message may carry text from a project's files or
    database (an error message with newlines or terminal escapes), which must not forge log lines."""

    def format(self, record: logging.LogRecord) -> str:
        return printable_line(super().format(record))


def configure_logging(path: Path, max_bytes: int, backups: int, *, stderr: bool = False) -> list[logging.Handler]:
    """Send the root logger (and so uvicorn's) to a rotating, scrubbed log file, and to stderr when asked.
    Returns the handlers added, for `remove_logging`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file_handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=max(max_bytes, 0), backupCount=max(backups, 1), encoding="utf-8"
    )
    handlers = [attach(file_handler)]
    if stderr:
        handlers.append(attach(logging.StreamHandler(sys.stderr)))
    root = logging.getLogger()
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handlers


def attach(handler: logging.Handler) -> logging.Handler:
    handler.addFilter(ScrubFilter())
    handler.setFormatter(OneLineFormatter(LOG_FORMAT))
    logging.getLogger().addHandler(handler)
    return handler


def remove_logging(handlers: Sequence[logging.Handler]) -> None:
    root = logging.getLogger()
    for handler in handlers:
        root.removeHandler(handler)
        handler.close()
