"""Whether a note says that something changed: "Upgraded to Elixir 1.16", "Max group size raised from 500 to 1000",
"Digest emails now go out at 17:00 instead of 08:00 UTC", "Edit window extended to 24 hours (was 15 minutes)".

A store accumulates: the note that first stated a setting keeps wording the question about it most closely ("which
Elixir version?" against ".tool-versions: elixir 1.15.7"), while the later note that changed it is the current
answer. Ranking moves such a change note above the older notes it updates (retrieval/fusion.py `updates_first`); this
module only reads the wording, and the words (`subject_words`) a change note and the note it updates share. English
wording only: a note in another language is never taken for a change, and ranks as before.
"""

from __future__ import annotations

import functools
import re

from codememory.core.lazy_pattern import lazy_pattern

# A verb of change, a word saying the old state is gone ("now", "no longer", "instead of", "(was 15 minutes)"), a
# "from <old> to <new>" with a number in the new value, a "new best", or "since <year>". Each was read off notes that
# update an earlier one. Left out, because most notes using them are no update of another: "removed", "added",
# "dropped" (a request dropped from a queue), "renamed" and "instead of" (fixed a flaky test by waiting instead of
# sleeping). Ranking also asks that the two notes share a rare word or number (retrieval/hybrid.py).
_CHANGE_RE = lazy_pattern(
    r"""\b(?:
        (?:changed|switched|moved|migrated|replaced|upgraded|downgraded|bumped|raised|lowered|increased|decreased
           |reduced|extended|shortened|swapped|superseded|reverted)\b
      | now\b | no\ longer\b | any\ ?more\b | new\ best\b | since\ \d{4}\b
      | was\ (?:\d|every|at|on|in)\b
      | from\ [^\s,.;:]+(?:\ [^\s,.;:]+)?\ to\ [^\s,.;:]*\d
    )""",
    re.IGNORECASE | re.VERBOSE,
)


# A literal every match of _CHANGE_RE holds (in lower case): an ASCII text holding none of them cannot match, and
# seeking them costs a few microseconds where the pattern, tried at every word, took 100-160 per text.
_CHANGE_LITERALS = (
    *"changed switched moved migrated replaced upgraded downgraded bumped raised lowered increased decreased".split(),
    *"reduced extended shortened swapped superseded reverted".split(),
    "now",
    "no longer",
    "any",
    "new best",
    "since ",
    "was ",
    "from ",
)


@functools.lru_cache(maxsize=4096)
def states_change(text: str) -> bool:
    """Whether the text says that a setting, tool or fact changed (it may update an older note on the same subject).
    Remembered per text: ranking asks it of every candidate (some 300 a retrieval at 100k memories, the same ones for
    its phrases and again for its request). A text that is not ASCII always meets the pattern: under IGNORECASE a
    few other letters match ASCII ones ("ſ" matches "s"), which the literals in lower case would miss."""
    if text.isascii():
        lower = text.lower()
        if not any(literal in lower for literal in _CHANGE_LITERALS):
            return False
    return _CHANGE_RE.search(text) is not None


# A token: what whitespace, brackets, quotes and list punctuation leave. One holding a slash is a path (but "5/min" is
# a rate), one ending in a short letters-only extension a file name ("Node.js"): both say where
# something lives, and two notes naming the same file need not be about the same setting.
_TOKEN_RE = lazy_pattern(r"""[^\s,;()\[\]{}"'`<>]+""")
_FILE_NAME_RE = lazy_pattern(r"[A-Za-z_][\w-]*(?:\.[\w-]+)*\.[A-Za-z]{1,5}")
_WORD_RE = lazy_pattern(r"\w+")


def subject_words(text: str) -> set[str]:
    """The words (lower case) of the text outside paths and file names: what an update and the note it updates share
    (the old value, the setting's name, "Hammer", "pg14", "UPLOAD_MAX_BYTES"), where two notes that only name the
    same file ("app/api/photos.py") are no more than neighbours. Path pieces were the rare words most often shared by
    a note and an unrelated change note in a small store (app, api, photos, py)."""
    out: set[str] = set()
    for token in _TOKEN_RE.findall(text):
        token = token.strip(".:!?")
        if ("/" in token and not token.split("/")[0].isdigit()) or "\\" in token or _FILE_NAME_RE.fullmatch(token):
            continue
        out.update(w.lower() for w in _WORD_RE.findall(token))
    return out
