"""The daemon's log: the root logger (and so uvicorn's) to a rotating file, every line scrubbed of secrets
(`privacy.scrub`) and kept on one line. Rotated at `[daemon] log_max_bytes`, `[daemon] log_backups` kept. The file
and its backups are the owner's only (0600): scrubbing is a rule set, and paths, project names and errors are
nobody else's business on a shared machine."""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
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


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose file is created 0600 (and made 0600 if an older one was not), at start and at
    every rollover: the standard handler creates it with the process's umask, 0644 as a rule."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def configure_logging(path: Path, max_bytes: int, backups: int, *, stderr: bool = False) -> list[logging.Handler]:
    """Send the root logger (and so uvicorn's) to a rotating, scrubbed log file (0600, see the module doc), and to
    stderr when asked. Returns the handlers added, for `remove_logging`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file_handler = PrivateRotatingFileHandler(
        path, maxBytes=max(max_bytes, 0), backupCount=max(backups, 1), encoding="utf-8"
    )
    for backup in path.parent.glob(path.name + ".*"):  # rotated by an older codememory with the umask's mode
        if backup.is_file() and not backup.is_symlink():
            backup.chmod(0o600)
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
