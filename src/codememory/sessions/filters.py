"""Filters a session search reads out of its query: dates ("last week", "in january", "since 2026-01-02"), a
tool ("in cursor"), file paths (a token with '/' or a known extension); the rest are content words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from codememory.assistants import REGISTRY
from codememory.core.dates import now_utc, parse_when, to_iso
from codememory.errors import InvalidInput
from codememory.text.query import STOPWORDS, words

# How a query names an assistant's sessions: its recorded name, its display name, its key and aliases.
_KNOWN_TOOLS = {a.recorded_as: tuple(dict.fromkeys((a.display.lower(), a.recorded_as, *a.names))) for a in REGISTRY}
_KNOWN_TOOLS["antigravity"] = ("antigravity",)
_SESSION_STOPWORDS = STOPWORDS | {"session", "sessions", "last", "did", "worked", "working"}
_PATH_EXTENSIONS = {
    *"py pyi ts tsx js jsx mjs go rs java kt rb php c h cc cpp hpp cs swift sql sh".split(),
    *"toml yaml yml json md rst txt html css scss vue ini cfg lock xml proto tf gradle".split(),
}
_MONTH_NAMES = "january february march april may june july august september october november december".split()
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)} | {
    name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1) if name != "may"
}
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


@dataclass
class SessionQuery:
    """What a session search asks for: content terms, path fragments, and the filters found in it."""

    terms: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    after: str | None = None
    before: str | None = None
    tool: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"terms": self.terms, "paths": self.paths, "after": self.after, "before": self.before, "tool": self.tool}


def _month_range(month: int, year: int | None, now: datetime) -> tuple[datetime, datetime]:
    if year is None:
        year = now.year if month <= now.month else now.year - 1  # "in december" said in march: last december
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def extract_filters(query: str, tools: Sequence[str], now: datetime | None = None) -> SessionQuery:
    """Split a natural-language session query into dates ("last week", "yesterday", "in january",
    "before march 15", "since 2026-01-02"), a tool ("in cursor", "claude code session"), file paths
    (a token with '/' or a known extension) and the remaining content words."""
    now = now or now_utc()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    text = " " + " ".join(query.split()) + " "
    lowered = text.lower()
    parsed = SessionQuery()
    after: datetime | None = None
    before: datetime | None = None

    def cut(m: re.Match[str]) -> None:
        nonlocal text, lowered
        text = text[: m.start()] + " " * (m.end() - m.start()) + text[m.end() :]
        lowered = text.lower()

    number = r"(\d+|" + "|".join(_NUMBERS) + ")"
    if m := re.search(rf"\b(?:last|past)\s+{number}\s+(day|week|month|year)s?\b", lowered):
        amount = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        after = now - timedelta(days=amount * _UNIT_DAYS[m.group(2)])
        cut(m)
    elif m := re.search(r"\b(last|past|this)\s+(day|week|month|year)\b", lowered):
        unit = m.group(2)
        if m.group(1) != "this":
            after = now - timedelta(days=_UNIT_DAYS[unit])
        elif unit == "week":
            after = today - timedelta(days=today.weekday())
        elif unit == "month":
            after = today.replace(day=1)
        elif unit == "year":
            after = today.replace(month=1, day=1)
        else:
            after = today
        cut(m)
    elif m := re.search(r"\b(yesterday|today)\b", lowered):
        after = today - timedelta(days=1) if m.group(1) == "yesterday" else today
        before = after + timedelta(days=1)
        cut(m)
    month_names = "|".join(sorted(_MONTHS, key=len, reverse=True))
    if after is None and (
        m := re.search(rf"\b(?:in|during)\s+({month_names})\b(?:\s+(\d{{4}}))?", lowered)
        or re.search(rf"\b({month_names})\s+(\d{{4}})\b", lowered)
    ):
        after, before = _month_range(_MONTHS[m.group(1)], int(m.group(2)) if m.group(2) else None, now)
        cut(m)
    for word in ("before", "after", "since"):
        m = re.search(rf"\b{word}\s+(\S+(?:\s+\S+){{0,2}})", lowered)
        if not m:
            continue
        following = m.group(1).split()
        for n in range(len(following), 0, -1):  # the longest run of words that reads as a date
            try:
                when = parse_when(" ".join(following[:n]), now=now, what=word)
            except InvalidInput:
                continue
            if word == "before":
                before = when
            else:
                after = when
            span = re.search(rf"\b{word}\s+" + r"\s+".join(map(re.escape, following[:n])), lowered)
            if span:
                cut(span)
            break
    names: dict[str, tuple[str, ...]] = dict(_KNOWN_TOOLS)
    for tool in tools:
        names.setdefault(tool, (tool,))
    for tool, aliases in names.items():
        for alias in sorted(aliases, key=len, reverse=True):
            a = re.escape(alias)
            m = (
                re.search(rf"\b(?:in|with|from|using|via|by)\s+{a}\b(?:\s+sessions?\b)?", lowered)
                or re.search(rf"\b{a}\s+sessions?\b", lowered)
                or (re.search(rf"(?<![\w-]){a}(?![\w-])", lowered) if "-" in alias else None)
            )
            if m:
                parsed.tool = tool
                cut(m)
                break
        if parsed.tool:
            break
    rest: list[str] = []
    for token in text.split():
        bare = token.strip("'\"`,;:()[]{}?!")
        ext = bare.rsplit(".", 1)[-1].lower() if "." in bare else ""
        if bare and ("/" in bare.strip("/") or (ext in _PATH_EXTENSIONS and len(bare) > len(ext) + 1)):
            parsed.paths.append(bare.strip("/"))
        else:
            rest.append(token)
    parsed.terms = list(dict.fromkeys(w for w in words(" ".join(rest)) if w not in _SESSION_STOPWORDS))
    parsed.after = to_iso(after) if after else None
    parsed.before = to_iso(before) if before else None
    return parsed
