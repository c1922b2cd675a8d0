"""Open todos, one memory per todo whichever way it was stated.

A todo can be said in prose ("TODO: …", "we still need to …", "… later", "don't forget to …") and be on the
agent's own list (OpenCode's todo table, Copilot CLI's session database, or the last `todowrite` / `TodoWrite` /
`update_plan` / `write_todos` call of the span). The same todo stated both ways is one memory (the list's wording
wins: it is the agent's summary); a todo the list marks done or cancelled is not kept as open, however it was
stated."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from codememory.capture.turns import Todo, Turn
from codememory.extract.candidate import Candidate, entity_names
from codememory.extract.clean import clip, tidy
from codememory.extract.compress import tool_kind
from codememory.extract.rules import HYPOTHETICAL_RE, PRONOUN_SUBJECT_RE, usable
from codememory.text.privacy import scrub

PRIORITY_IMPORTANCE = {"high": 0.7, "medium": 0.55, "low": 0.4}
TEXT_IMPORTANCE = {"user": 0.6, "assistant": 0.5}
# "in_progress" is the work of the session itself (done by its end, or visible in it), not a todo for later
_OPEN = ("pending",)
_CLOSED = ("completed", "cancelled", "done", "canceled")

TODO_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:TODO|FIXME)\b(?:\(\w+\))?\s*[:\-\u2013]\s*(?P<x>\S.{3,})$", re.M)
_TODO_RE = re.compile(
    r"\b(?:(?:we|i|you)\s+)?still\s+(?:need|needs|have|has)\s+to\s+\w+"
    r"|\b(?:remaining\s+work|next\s+steps?|left\s+to\s+do|not\s+done\s+yet|follow[- ]ups?|for\s+later|later|"
    r"still\s+open|open\s+items?)\s*:\s*\S"
    r"|\b(?:we|i)(?:'ll|\s+will)\s+(?:need|have)\s+to\s+\w+[^.]*\blater\b"
    r"|\b(?:we|i|you)\s+(?:should|need\s+to|must|can)\s+\w+[^.]*\b(?:later|next\s+time|in\s+a\s+follow[- ]up|"
    r"at\s+some\s+point|eventually|before\s+(?:the\s+)?release)\b"
    r"|^(?:later|next\s+time|at\s+some\s+point|eventually|in\s+a\s+follow[- ]up),?\s+(?:we|i|you|let'?s)?\s*\w+"
    r"|\b(?:leave|leaving|left|park|parking)\s+[^.]{3,60}\s+for\s+(?:later|now|a\s+follow[- ]up)\b"
    r"|^(?:please\s+)?(?:don'?t|do\s+not)\s+forget\s+to\s+\w+"
    r"|\b(?:is|are)\s+(?:still\s+)?(?:missing|not\s+(?:implemented|handled|done|wired(?:\s+up)?|supported))\s+yet\b"
    r"|\b(?:we|i)\s+(?:haven'?t|have\s+not)\s+(?:added|written|implemented|handled|wired|done|fixed|tested)\s+"
    r"[^.]{3,80}\s+yet\b",
    re.IGNORECASE,
)
_STOP = frozenset(
    "the a an to of for and or in on with we i you still need needs todo later add write make it its be is are "
    "this that from into our some then".split()
)


# "Two things remain open: A, and B": one todo per item; "Both are on the todo list: …" repeats the list.
_ENUMERATION_RE = re.compile(
    r"^(?:(?:two|three|four|five|a\s+few|some|several|\d)\s+(?:things?|items?|follow[- ]ups?|todos?|points?|tasks?)"
    r"\s+(?:still\s+)?(?:remain|are|is)\s+(?:still\s+)?(?:open|left|pending|outstanding|to\s+do|unfinished)|"
    r"(?:still\s+open|left\s+to\s+do|remaining\s+work|open\s+items?|follow[- ]ups?)(?:\s+\w+){0,2})\s*:\s*"
    r"(?P<items>.+)$",
    re.IGNORECASE,
)
_ITEM_SPLIT_RE = re.compile(r"[,;]\s+and\s+", re.IGNORECASE)  # a ";" alone often goes on about the same item
MIN_ITEM_WORDS = 3


def enumerated_todos(sentence: str) -> list[str]:
    """The items of "Two things remain open: A, and B" (none unless two or more)."""
    m = _ENUMERATION_RE.match(sentence)
    if not m:
        return []
    items = [tidy(x) for x in _ITEM_SPLIT_RE.split(m.group("items"))]
    items = [x for x in items if len(x.split()) >= MIN_ITEM_WORDS]
    return items if len(items) >= 2 else []


def text_todos(units: Sequence[str], text: str, seq: int, role: str) -> list[Candidate]:
    """Todos stated in one message: TODO lines, then prose sentences."""
    out: list[Candidate] = []
    importance = TEXT_IMPORTANCE[role]
    for m in TODO_LINE_RE.finditer(text):
        body = tidy(m.group("x"))
        if body and not body.rstrip(".").endswith("?"):
            out.append(Candidate(f"TODO: {clip(body)}", "todo", importance, seq, entity_names(body), rule="todo"))
    for unit in units:
        if TODO_LINE_RE.match(unit):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(*])", unit):
            s = tidy(sentence)
            items = enumerated_todos(s) if usable(s) and not PRONOUN_SUBJECT_RE.match(s) else []
            for item in items:
                out.append(Candidate(f"TODO: {clip(item)}", "todo", importance, seq, entity_names(item), rule="todo"))
            if (
                not items
                and s
                and usable(s)
                and _TODO_RE.search(s)
                and not HYPOTHETICAL_RE.search(re.sub(r"\bshould\s+(?:we|i)\b", "", s, flags=re.I))
                and not PRONOUN_SUBJECT_RE.match(s)
            ):
                out.append(Candidate(clip(s), "todo", importance, seq, entity_names(s), rule="todo"))
    return out


def agent_todos(turns: Sequence[Turn], todos: Iterable[Todo]) -> list[Todo]:
    """The agent's list: as given (OpenCode's table), else the last todo-tool call of the span."""
    given = list(todos)
    if given:
        return given
    for turn in reversed(turns):
        for call in reversed(turn.tool_calls):
            if tool_kind(call.tool) != "todo" or not isinstance(call.input, dict):
                continue
            items = call.input.get("todos") or call.input.get("plan")
            if isinstance(items, list):
                return [t for t in (_todo(item, i) for i, item in enumerate(items)) if t]
    return []


def _todo(item: Any, position: int) -> Todo | None:
    if not isinstance(item, dict):
        return None
    content = item.get("content") or item.get("step") or item.get("text") or item.get("description")
    if not isinstance(content, str) or not content.strip():
        return None
    status = str(item.get("status") or "pending").lower()
    priority = str(item.get("priority") or "medium").lower()
    return Todo(content, status, priority, position)


def merge_todos(text: Sequence[Candidate], agent: Sequence[Todo], seq: int) -> list[Candidate]:
    """One candidate per open todo: the agent's open items, then the prose todos the list does not hold;
    prose todos the list closed are dropped."""
    out: list[Candidate] = []
    listed: list[tuple[frozenset[str], bool]] = []
    for todo in agent:
        content = " ".join(scrub(todo.content).split())
        if not content:
            continue
        is_open = todo.status in _OPEN
        listed.append((_words(content), is_open))
        if is_open:
            importance = PRIORITY_IMPORTANCE.get(todo.priority, PRIORITY_IMPORTANCE["medium"])
            body = tidy(content)
            out.append(
                Candidate(f"TODO: {clip(body)}", "todo", importance, seq, entity_names(content), rule="agent_todo")
            )
    kept: list[frozenset[str]] = []
    for c in text:
        words = _words(c.text)
        if any(_same(words, other) for other, _ in listed) or any(_same(words, k) for k in kept):
            continue  # on the list (open: already kept; closed: done) or said twice
        kept.append(words)
        out.append(c)
    return out


def _words(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return frozenset(_stem(w) for w in words if w not in _STOP and len(w) > 1)


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return False
    common = len(a & b)
    return common / len(a | b) >= 0.5 or common / min(len(a), len(b)) >= 0.75
