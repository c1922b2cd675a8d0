"""Whether a note says that something changed: "Upgraded to Elixir 1.16", "Max group size raised from 500 to 1000",
"Digest emails now go out at 17:00 instead of 08:00 UTC", "Edit window extended to 24 hours (was 15 minutes)".

A store accumulates: the note that first stated a setting keeps wording the question about it most closely ("which
Elixir version?" against ".tool-versions: elixir 1.15.7"), while the later note that changed it is the current
answer. Ranking moves such a change note above the older notes it updates (retrieval/fusion.py `updates_first`); this
module only reads the wording. English wording only: a note in another language is never taken for a change, and
ranks as before.
"""

from __future__ import annotations

import re

# A verb of change, a word saying the old state is gone ("now", "no longer", "instead of", "(was 15 minutes)"), a
# "from <old> to <new>" with a number in the new value, a "new best", or "since <year>". Each was read off notes that
# update an earlier one. Left out, because most notes using them are no update of another: "removed", "added",
# "dropped" (a request dropped from a queue), "renamed" and "instead of" (fixed a flaky test by waiting instead of
# sleeping). Ranking also asks that the two notes share a rare word or number (retrieval/hybrid.py).
_CHANGE_RE = re.compile(
    r"""\b(?:
        (?:changed|switched|moved|migrated|replaced|upgraded|downgraded|bumped|raised|lowered|increased|decreased
           |reduced|extended|shortened|swapped|superseded|reverted)\b
      | now\b | no\ longer\b | any\ ?more\b | new\ best\b | since\ \d{4}\b
      | was\ (?:\d|every|at|on|in)\b
      | from\ [^\s,.;:]+(?:\ [^\s,.;:]+)?\ to\ [^\s,.;:]*\d
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def states_change(text: str) -> bool:
    """Whether the text says that a setting, tool or fact changed (it may update an older note on the same subject)."""
    return _CHANGE_RE.search(text) is not None
