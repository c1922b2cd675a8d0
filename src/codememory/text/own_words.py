"""What in a session's tool calls is the agent's own rather than a memory's, though a memory's terms are in it:
a name the request gave in words, and what the agent writes into a changelog. Pure text rules, no model;
text/usage_cues.py and capture/usage.py read them when they judge whether a shown memory was used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from codememory.core.lazy_pattern import lazy_pattern

# The words of one identifier: `booking_id`, `bookingId`, `BookingID`, `rate-limit` (a dotted name or a path is
# more than one name, and is never read as words).
_IDENTIFIER_RE = lazy_pattern(r"[A-Za-z][A-Za-z0-9]*(?:[_-]+[A-Za-z0-9]+)*")
_IDENTIFIER_WORD_RE = lazy_pattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Prose spells out a name of a few words; a longer one is never said in words, and its pattern (one part a word)
# would cost the length of the text times its words on every search.
MAX_SPELLED_WORDS = 8
MAX_SPELLED_CHARS = 120

# A file that records what was changed for its readers (a changelog, release notes): what an edit writes there is
# the agent's account of its work, as a commit message is. Only a document's extension: `news.py` is code.
_ACCOUNT_FILE_RE = lazy_pattern(
    r"(?:^|[/\\])(?:change[-_ ]?log|changes|news|history|release[-_ ]?notes|changelogs[/\\][^/\\.]+)"
    r"(?:\.(?:md|markdown|rst|txt|adoc))?$",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)
def spelled_out(term: str) -> str | None:
    """An identifier as prose says it, lower-cased: `booking_id` and `bookingId` are "booking id"; None for a term
    that is one word, or not one identifier."""
    if len(term) > MAX_SPELLED_CHARS or not _IDENTIFIER_RE.fullmatch(term):
        return None
    words = _IDENTIFIER_WORD_RE.findall(term)
    return " ".join(words).lower() if 2 <= len(words) <= MAX_SPELLED_WORDS else None


def said_in_words(term: str, text: str) -> bool:
    """Whether `text` (lower-cased) names an identifier in words: "Add cancel_booking/2 (member, booking id)" says
    `booking_id`. A request that asks for a name in its own words has given the agent that name."""
    words = spelled_out(term)
    return words is not None and _spelled_re(words).search(text) is not None


@functools.lru_cache(maxsize=4096)
def _spelled_re(words: str) -> re.Pattern[str]:
    """The words of an identifier one after another, apart by spaces, `_` or `-` (not by other punctuation: "a
    gym: id" does not say `gym_id`), each whole."""
    return re.compile(r"(?<!\w)" + r"[\s_-]+".join(map(re.escape, words.split())) + r"(?!\w)")


def accounts_of_work(edited: Sequence[str]) -> bool:
    """Whether an edit writes only into files that account for changes (`CHANGELOG.md`, `RELEASE_NOTES.txt`,
    `…/changelogs/30500.txt`): the text it adds restates the work, it does not act on a memory."""
    return bool(edited) and all(_ACCOUNT_FILE_RE.search(path) for path in edited)
