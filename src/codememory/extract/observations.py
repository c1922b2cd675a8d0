"""Observations about the data or the environment, said in prose: what a value stands for ("0.0 readings mean the
probe dropped out", "-1 in that column means not measured, not zero", "-999 is the sentinel the controller logs
when the thermocouple reads open", "`read()` returns -1 when the chip isn't ready") and which encoding a file
really has ("the export is windows-1252, not utf-8", "the file isn't UTF-8, it's Latin-1").

These are facts a later session cannot see in the code: the value looks like data, the bytes look like text. What
the pattern reads is a literal (a number, a quoted or code-marked token, NaN/null/empty) tied to a meaning, or two
encodings set against each other; the speaker rules decide whose observation it is (the user's, or the
assistant's when the user carries on)."""

from __future__ import annotations

import re

from codememory.core.lazy_pattern import lazy_pattern

# A value as data sentinels are written: a negative number, a zero (0, 0.0, 0:00.0), all nines (9999), or a quoted
# or code-marked token (`-1`, 'do', "N/A"), NaN, null, empty. A plain count ("3 failing tests") is not one.
_LITERAL = (
    r"(?:(?<![\w.])(?:[-\u2212]\d+(?:[.,]\d+)?|0+(?:[.,:]0+)*|9{2,}(?:[.,]9+)?)(?![\w%.,:]?\d)(?![\w%])|`[^`\s]{1,20}`|'[^'\s]{1,12}'|\"[^\"\s]{1,12}\"|"
    r"\b(?:NaN|null|None|N/A|empty|blank)\b)"
)
# words before a number that make it a label rather than a value ("option 2 means", "step 3 means")
_NOT_A_VALUE = r"(?<!\boption\s)(?<!\bstep\s)(?<!\bpoint\s)(?<!\bitem\s)(?<!\bphase\s)(?<!\bversion\s)(?<!\bplan\s)"
_MEANING_RE = lazy_pattern(
    rf"{_NOT_A_VALUE}{_LITERAL}(?:\s+(?!(?:and|or|but|so|then|which)\b)[\w-]+){{0,4}}?\s+"
    r"(?:means?|meant|stands?\s+for|is\s+(?:the|a|its|their)\s+(?:\w+\s+)?(?:sentinel|placeholder|marker|"
    r"missing[- ]value\s+code|code\s+for|flag\s+for))\b",
    re.IGNORECASE,
)
# "returns -1 when the chip isn't ready", "logs -999 whenever the probe reads open"
_SENTINEL_RE = lazy_pattern(
    r"\b(?:returns?|logs?|writes?|reports?|records?|puts?|gives?|sends?)\s+"
    r"(?:[-\u2212]\d+(?:\.\d+)?|0(?:\.0+)?|`[^`\s]{1,20}`|NaN|null)(?![\w.])"
    r"(?:\s+[\w-]+){0,3}?\s+(?:when|whenever|if|once)\b",
    re.IGNORECASE,
)
_ENCODING = r"(?:utf-?8|utf-?16|latin-?1|iso-?8859(?:-\d+)?|windows-?125\d|cp-?125\d|ascii|mac\s?roman)"
_ENCODING_RE = lazy_pattern(
    rf"\b(?:is|are|'s|'re|in)\s+{_ENCODING}\b[^.;]{{0,40}}?\bnot\s+(?:in\s+)?{_ENCODING}\b"
    rf"|\b(?:isn'?t|is\s+not|aren'?t|are\s+not|not)\s+{_ENCODING}\b[,;:]?\s*(?:it'?s|they'?re|but|it\s+is)\s+"
    rf"(?:actually\s+|really\s+)?{_ENCODING}\b",
    re.IGNORECASE,
)


def states_an_observation(sentence: str) -> bool:
    """A sentence that says what a value in the data stands for, or which encoding a file really has."""
    if sentence.rstrip().endswith("?"):
        return False
    return bool(_MEANING_RE.search(sentence) or _SENTINEL_RE.search(sentence) or _ENCODING_RE.search(sentence))


_VALUE_RE = lazy_pattern(_LITERAL, re.IGNORECASE)


def contradicts(reply: str, observation: str) -> bool:
    """Whether an objecting reply is about the observation itself: it names the value the observation explains
    ("no, 9999 is a real reading"). "no interpolation, skip them" answers the question that followed it."""
    values = {m.group(0).strip("`'\"").lower() for m in _VALUE_RE.finditer(observation)}
    said = reply.lower()
    return any(v and re.search(rf"(?<![\w.-]){re.escape(v)}(?![\w])", said) for v in values) or bool(
        re.search(r"\b(?:not\s+true|that'?s\s+(?:wrong|not\s+it|not\s+right)|wrong)\b", said)
    )
