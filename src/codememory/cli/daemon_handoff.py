"""`search` and `store` through the running daemon (`POST /cli/search`, `/cli/store`, see daemon/cli_api.py).

The daemon has the store open and the embedding model loaded; a CLI process that hands it the work skips its own
imports of the search engine, the store's opening and the model's loading, and prints the daemon's answer, which is
the command's own `--json` output. It fails open: when no daemon runs, the daemon does not serve this project
(`init --no-global`), answers an error or does not answer in time, the command does the work in this process, which
then reports any error itself, as it always has.

The work is handed over only when the daemon would do exactly what this process would: no
`CODEMEMORY_<SECTION>_<KEY>` setting in this process's environment (the daemon has its own), and
`CODEMEMORY_HOOK_NO_DAEMON` unset (`core.loopback`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from codememory.cli.progress_output import progress_note
from codememory.core.loopback import post_json
from codememory.core.project import find_project_root, store_dir

# A search or store takes milliseconds in a warm daemon; one that takes this long is stuck behind a long task on
# the same store, and this process does it faster itself.
TIMEOUT_SECONDS = 10.0
# A store is a write: once the daemon has it, this process must not store it again (it paid for loading the model and
# embedding the text a second time, and then reported the daemon's copy as "Already stored"). A long text on a busy
# machine takes the daemon's embedder tens of seconds; it gets this long, with a line on stderr while it waits.
WRITE_ANSWER_SECONDS = 300.0
WAIT_NOTE_AFTER_SECONDS = 3.0
_CONFIG_FILE = "config.toml"  # core.config.CONFIG_NAME, read only when the project has one


def _settings_from_environment() -> bool:
    """A `CODEMEMORY_<SECTION>_<KEY>` variable is set: this process's settings differ from the daemon's."""
    names = [name for name in os.environ if name.startswith("CODEMEMORY_")]
    if not names:
        return False
    from dataclasses import fields

    from codememory.core.config import Config

    sections = tuple(f"CODEMEMORY_{f.name.upper()}_" for f in fields(Config))
    return any(name.startswith(sections) for name in names)


def handed_off(ctx: click.Context, path: str, request: dict[str, Any], *, write: bool = False) -> dict[str, Any] | None:
    """The daemon's answer to `request` for this command's project, or None: do the work here. `write`: once
    sent, the request is waited for (WRITE_ANSWER_SECONDS) rather than redone here after TIMEOUT_SECONDS."""
    if _settings_from_environment():
        return None
    root = find_project_root((ctx.obj or {}).get("project"))
    answer = post_json(
        path,
        {"project_root": str(root), **request},
        TIMEOUT_SECONDS,
        answer_timeout=WRITE_ANSWER_SECONDS if write else None,
        waiting=_WaitNote() if write else None,
    )
    if answer is not None:
        _warn_about_project_settings(root)
    return answer


class _WaitNote:
    """One line on stderr once the daemon has taken WAIT_NOTE_AFTER_SECONDS (a long text being embedded)."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, seconds: float) -> None:
        if not self.shown and seconds >= WAIT_NOTE_AFTER_SECONDS:
            self.shown = True
            progress_note("waiting for the daemon to embed and store the text...")


def _warn_about_project_settings(root: Path) -> None:
    """The line on stderr an untrusted project config.toml gets when this process opens the store itself."""
    folder = store_dir(root)
    if (folder / _CONFIG_FILE).exists():
        from codememory.core.config import load_config

        load_config(folder)
