"""A sentence that names its subject or object only with a pronoun ("it", "that one", "the second option", "They
said …"): a memory made of it names nothing a later session could resolve, so the prose rules, the lessons and the
last check on every memory ask here before keeping one."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

_PRONOUN = (
    r"(?:it|that|this|these|those|them|they|one|ones|both|either|neither|whichever|yours|your\s+\w+|option\s*\w*|"
    r"the\s+(?:first|second|third|last|former|latter|other|above|below)(?:\s+\w+)?)"
)
PRONOUN_OBJECT_RE = lazy_pattern(
    rf"^\s*{_PRONOUN}\s*(?:[.,;!]|$|\s+(?:one|approach|option|instead|then|for now|too|as well)\b)", re.I
)
PRONOUN_SUBJECT_RE = lazy_pattern(
    r"^(?:it|that|this|these|those|they|he|she)\b(?!\s+(?:project|repo|repository|codebase|module|package|file|"
    r"function|class|service|app|library|team|api|endpoint|table|test))",
    re.IGNORECASE,
)
# A memory opening on a pronoun with its verb ("It is one more package …", "That's what the code does …") names
# nothing a later session could resolve.
UNRESOLVED_START_RE = lazy_pattern(
    r"^(?:TODO:\s*)?(?:it|that|this|these|those|they)(?:'s|'re|\s+(?:is|was|are|were|has|had|would|will|can|could|"
    r"should|only|also|just|does|did|means|makes|works|needs|breaks|fails|keeps))\b",
    re.IGNORECASE,
)
# "It's `to_datetime(date_format=…)`: that keyword …" names its subject right after the pronoun
_NAMED_AFTER_RE = lazy_pattern(
    r"^(?:it|that|this)(?:'s|\s+is|\s+was)\s+(?=`[^`]+`\s*[:,(\u2014\u2013-])", re.IGNORECASE
)


def named_subject(text: str) -> str:
    """`text` without an opening "It's" that a code span right after it names."""
    return _NAMED_AFTER_RE.sub("", text, count=1)
