"""The text a request asks the agent to write, as opposed to the words that say what the request is about.

"In README.md, say 'chases overdue invoices' instead of 'chases late payments'", "Fix the typo 'seperately' in
README.md", "Add a line under Unreleased in CHANGELOG.md: 'GBFS poller also loads station_information hourly.'":
the quoted words are the new (or the old) text of a file, handed over verbatim. They say nothing about what the
agent needs to know for the edit, yet they are most of the request's distinctive words: a memory about late-payment
fees or the GBFS poller matched them and was put in front of a one-line README edit. A quoted error message is
another matter ("fails with 400 'No signatures found …'", "her invoice PDF shows 'Wroc?aw'"): it is what went
wrong, and exactly what a memory may explain. So only a quotation the request's own wording marks as text to write
is taken out: one right after "say", "write", "read", "typo" or "with"/"to" in a replace or rename, one right
before or after "instead of" in a request that edits ("say", "write", "use", "change" …: "shows 'Wroc?aw'
instead of 'Wrocław'" is a symptom), and one after the colon of "add a line/entry/note …:"; nothing in a question
why, whose quotations say what went wrong. A backquoted `code span` is never taken out: it names a command or an
identifier (text/named.py).
"""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

# a quotation: single or double quotes (straight or curly) around at most a long sentence, not spanning lines
_QUOTED = r"""(?:'[^'\n]{1,300}'|"[^"\n]{1,300}"|‘[^’\n]{1,300}’|“[^”\n]{1,300}”)"""
# words of one clause: no sentence end (a dot inside a file name such as CHANGELOG.md is no end)
_CLAUSE = r"(?:[^.;!?\n]|\.(?=\S)){0,80}?"
# the wording before a quotation that makes it text to write (each looked for on its own: they may overlap)
_BEFORE = (
    r"\b(?:say|write|read|spell|typo|misspelling|replace|change|rename)\s*:?\s*",
    rf"\b(?:replace|rename|change)\b{_CLAUSE}\b(?:with|to|into)\s+",
    rf"\b(?:add|append|insert|put)\b{_CLAUSE}\b(?:line|entry|note|sentence|comment|paragraph|bullet)\b{_CLAUSE}:\s*",
)
_WRITTEN_BEFORE = [lazy_pattern(rf"(?:{before})({_QUOTED})", re.IGNORECASE) for before in _BEFORE]
# a quotation right before "instead of" is the text being replaced ... or the new text: either way, written
_WRITTEN_AFTER_RE = lazy_pattern(rf"({_QUOTED})(?=\s*,?\s*(?:instead\s+of|rather\s+than)\b)", re.IGNORECASE)
# "instead of" names text to write only in a request that edits something: "her invoice PDF shows 'Wroc?aw' instead
# of 'Wrocław'" is what went wrong
_INSTEAD_BEFORE_RE = lazy_pattern(rf"\b(?:instead\s+of|rather\s+than)\s*:?\s*({_QUOTED})", re.IGNORECASE)
_EDITS_RE = lazy_pattern(
    r"\b(?:say|write|read|spell|typo|misspelling|replace|change|rename|use|put|make|reword|word|edit|update"
    r"|add|append|insert)\b",
    re.IGNORECASE,
)
# a question why quotes what went wrong ("why does the header read 'Wroc?aw'?"): a memory may explain it
_WHY_RE = lazy_pattern(r"\bwhy\b", re.IGNORECASE)
# a request given in quotes as a whole (as some callers pass the user's text) is no quotation inside it
_WHOLE_RE = lazy_pattern(r"""^\s*(["'“‘])(.*)(["'”’])\s*$""", re.DOTALL)


def without_text_to_write(request: str) -> str:
    """The request with the quotations it asks the agent to write taken out (unchanged when there are none)."""
    whole = _WHOLE_RE.match(request)
    inner = whole.group(2) if whole and "\n" not in request.strip() and _balanced(whole.group(2)) else request
    if _WHY_RE.search(inner):
        return request
    spans: list[tuple[int, int]] = []
    instead = (_INSTEAD_BEFORE_RE, _WRITTEN_AFTER_RE) if _EDITS_RE.search(inner) else ()
    for pattern in (*_WRITTEN_BEFORE, *instead):
        spans += [m.span(1) for m in pattern.finditer(inner)]
    if not spans:
        return request
    out, at = [], 0
    for start, end in sorted(set(spans)):
        if start < at:
            continue
        out.append(inner[at:start])
        at = end
    out.append(inner[at:])
    return re.sub(r"[ \t]{2,}", " ", "".join(out)).strip()


def _balanced(text: str) -> bool:
    """Whether the quotes inside are paired: `'a' and 'b'` as a whole is two quotations, not one."""
    return text.count('"') % 2 == 0 and text.count("'") % 2 == 0
