"""Environment variables that switch a part of codememory off, for one process and the processes it starts:
tests, debugging, and our own children (the agent CLI the extractor runs as its summariser sets both
`CODEMEMORY_NO_CAPTURE` and `CODEMEMORY_NO_HOOKS`, so a daemon or a hook it might start never captures the extraction
prompts).

One rule for every switch, so `=0` or `=false` never means the opposite for one of them: unset, empty, "0",
"false" or "no" (any case, blanks ignored) leaves the switch off; any other value turns it on.

The module imports nothing of ours: the hooks read a switch on every prompt.
"""

from __future__ import annotations

import os

NO_CAPTURE = "CODEMEMORY_NO_CAPTURE"  # the daemon neither captures nor extracts, and refuses live capture
# `codememory-hook` does nothing: set in the agent CLIs the extractor runs as its summariser (extract/agent_cli.py),
# so that hooks a CLI still runs there never open, capture or extract the summariser's own session
NO_HOOKS = "CODEMEMORY_NO_HOOKS"
# search asks the second model's opinion where its weights are installed (retrieval/second_opinion.py); on unless
# set to "0", "false" or "no" (`switched_off`): with its agreement admitting as well as its disagreement holding
# back, it passes the retrieval guard (benchmarks/README.md, "The second opinion on by default")
SECOND_MODEL = "CODEMEMORY_SECOND_MODEL"
_OFF = ("", "0", "false", "no")


def switched_on(name: str) -> bool:
    """Whether the switch `name` is set to something other than "", "0", "false" or "no"."""
    return os.environ.get(name, "").strip().lower() not in _OFF


def switched_off(name: str) -> bool:
    """Whether the switch `name`, on by default, is set to "0", "false", "no" or "off" (unset or empty: on). "off"
    counts here only: a switch on by default is named for what it turns on, so "off" can mean nothing else, where
    for a CODEMEMORY_NO_… switch it would be ambiguous."""
    value = os.environ.get(name, "").strip().lower()
    return bool(value) and value in (*_OFF, "off")


def capture_disabled() -> bool:
    """`CODEMEMORY_NO_CAPTURE`: capture, extraction and live capture are turned off in this process."""
    return switched_on(NO_CAPTURE)


def hooks_disabled() -> bool:
    """`CODEMEMORY_NO_HOOKS`: `codememory-hook` does nothing in this process."""
    return switched_on(NO_HOOKS)
