"""Text from outside (a path, a folder name, an error from a hostile database, a payload field) made safe to
write as one line of a log, an error message or a terminal: `printable_line`.

The rule is Python's own: every character `str.isprintable()` rejects is written as `repr` writes it (`\\n`,
`\\r`, `\\t`, `\\x1b`, `\\x85`, `\\u2028`, `\\u202e`, `\\ud800`, ...). That covers the line breaks (C0, NEL, the
Unicode line and paragraph separators) that would start a forged line, the C0/C1 controls that drive a
terminal (escape sequences), the bidirectional overrides that reorder what a reader sees, and lone
surrogates, which cannot be encoded. What is shown stays readable: the escapes are visible, nothing is
dropped silently.

Characters a reader cannot see (`INVISIBLE`: Unicode's default-ignorable and format characters, below) are
escaped too, although Python counts some of them printable (U+034F, the variation selectors, the Hangul fillers):
they can hide text between two visible characters, and nothing in a log line needs them.

This is not the rule for text put in front of a model: memories and session fields rendered into an agent's
context follow `text.context_render` (blanks collapsed to spaces, invisible characters removed, tag-like `<`
neutralised).
"""

from __future__ import annotations

from codememory.core.lazy_pattern import lazy_pattern

ELLIPSIS = "..."

# Characters a reader cannot see: the union of Unicode's Default_Ignorable_Code_Point property
# (DerivedCoreProperties.txt) and General_Category Cf (format characters), as of Unicode 17.0 — soft hyphen,
# combining grapheme joiner, zero-width space/joiners, word joiner and invisible operators, bidirectional marks,
# overrides and isolates, byte order mark, variation selectors, Hangul fillers, Mongolian selectors, interlinear
# annotation marks, Arabic and Egyptian format controls, tag characters (U+E0000-E0FFF). Python's `unicodedata` has
# the categories but not Default_Ignorable_Code_Point, so the ranges are written out here, and the same list is in
# the OpenCode plugin (integrations/opencode/src/render.ts, INVISIBLE_RE).
# tests/security/test_invisible_characters.py checks the list against Node's `\p{Default_Ignorable_Code_Point}` and
# `\p{Cf}` and against Python's own Cf category.
INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u17b4-\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
INVISIBLE_RE = lazy_pattern(f"[{INVISIBLE}]")


def without_invisible(text: str) -> str:
    """`text` with every invisible character (`INVISIBLE`) removed."""
    return text if text.isascii() else INVISIBLE_RE.sub("", text)


def _escape(ch: str) -> str:
    if ch.isprintable():  # an invisible character Python counts printable: repr would keep it as it is
        return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
    return repr(ch)[1:-1]  # a non-printable character is never a quote or a backslash


def _shown(ch: str) -> str:
    return ch if ch.isprintable() and not INVISIBLE_RE.match(ch) else _escape(ch)


def printable_line(text: str, limit: int | None = None) -> str:
    """`text` on one printable line: each non-printable character escaped as `repr` writes it. With `limit`,
    at most the first `limit` characters of `text` are shown (before escaping), followed by "..." when some
    were left out."""
    shown = text if limit is None else text[:limit]
    if not shown.isprintable() or (not shown.isascii() and INVISIBLE_RE.search(shown)):
        shown = "".join(_shown(ch) for ch in shown)
    return shown + ELLIPSIS if limit is not None and len(text) > limit else shown
