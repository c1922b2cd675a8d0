"""Text from outside (a path, a folder name, an error from a hostile database, a payload field) made safe to
write as one line of a log, an error message or a terminal: `printable_line`.

The rule is Python's own: every character `str.isprintable()` rejects is written as `repr` writes it (`\\n`,
`\\r`, `\\t`, `\\x1b`, `\\x85`, `\\u2028`, `\\u202e`, `\\ud800`, ...). That covers the line breaks (C0, NEL, the
Unicode line and paragraph separators) that would start a forged line, the C0/C1 controls that drive a
terminal (escape sequences), the bidirectional overrides that reorder what a reader sees, and lone
surrogates, which cannot be encoded. What is shown stays readable: the escapes are visible, nothing is
dropped silently.

This is not the rule for text put in front of a model: memories and session fields rendered into an agent's
context follow `text.context_render` (blanks collapsed to spaces, tag-like `<` neutralised).
"""

from __future__ import annotations

ELLIPSIS = "..."


def _escape(ch: str) -> str:
    return repr(ch)[1:-1]  # a non-printable character is never a quote or a backslash


def printable_line(text: str, limit: int | None = None) -> str:
    """`text` on one printable line: each non-printable character escaped as `repr` writes it. With `limit`,
    at most the first `limit` characters of `text` are shown (before escaping), followed by "..." when some
    were left out."""
    shown = text if limit is None else text[:limit]
    if not shown.isprintable():
        shown = "".join(ch if ch.isprintable() else _escape(ch) for ch in shown)
    return shown + ELLIPSIS if limit is not None and len(text) > limit else shown
