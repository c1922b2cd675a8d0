"""Open todos, one memory per todo whichever way it was stated.

A todo can be said in prose ("TODO: …", "we still need to …", "… later", "don't forget to …") and be on the
agent's own list (OpenCode's todo table, Copilot CLI's session database, the last `todowrite` / `TodoWrite` /
`update_plan` / `write_todos` call of the span, or the tasks of Claude Code's `TaskCreate` / `TaskUpdate` calls).
The same todo stated both ways is one memory (the list's wording wins: it is the agent's summary); a todo the list
marks done or cancelled is not kept as open, however it was stated."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from codememory.capture.turns import Todo, ToolCall, Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.candidate import ASSISTANT, USER, Candidate, entity_names
from codememory.extract.clean import clip, tidy
from codememory.extract.compress import tool_kind
from codememory.extract.rules import HYPOTHETICAL_RE, usable
from codememory.extract.unresolved_pronouns import PRONOUN_SUBJECT_RE
from codememory.text.privacy import scrub

PRIORITY_IMPORTANCE = {"high": 0.7, "medium": 0.55, "low": 0.4}
TEXT_IMPORTANCE = {"user": 0.6, "assistant": 0.5}
# "in_progress" is the work of the session itself (done by its end, or visible in it), not a todo for later
_OPEN = ("pending",)
_CLOSED = ("completed", "cancelled", "done", "canceled")

TODO_LINE_RE = lazy_pattern(
    r"^\s*(?:[-*+]\s+)?(?:TODO|FIXME|[Tt]odo)\b(?:\(\w+\))?\s*(?::|\s[\-\u2013])\s*(?P<x>\S.{3,})$", re.M
)
_USER_SPLIT_RE = lazy_pattern(r"(?<=[.!?])\s+(?=\S)")
_TODO_RE = lazy_pattern(
    r"\b(?:(?:we|i|you)\s+)?still\s+(?:need|needs|have|has)\s+to\s+\w+"
    r"|\b(?:remaining\s+work|next\s+steps?|left\s+to\s+do|still\s+to\s+do(?:\s+\w+)?|not\s+done\s+yet|"
    r"follow[- ]ups?|for\s+later|later|"
    r"for\s+next\s+time|still\s+open|open\s+items?)\s*:\s*\S"
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
    "this that from into our some then ll at by as look next time session".split()
)


# "Two things remain open: A, and B": one todo per item; "Both are on the todo list: …" repeats the list.
_ENUMERATION_RE = lazy_pattern(
    r"^(?:(?:two|three|four|five|a\s+few|some|several|\d)\s+(?:things?|items?|follow[- ]ups?|todos?|points?|tasks?)"
    r"\s+(?:still\s+)?(?:remain|are|is)\s+(?:still\s+)?(?:open|left|pending|outstanding|to\s+do|unfinished)|"
    r"(?:still\s+open|(?:left|still)\s+to\s+do|remaining\s+work|open\s+items?|follow[- ]ups?|for\s+next\s+time)"
    r"(?:\s+\w+){0,2})\s*:\s*"
    r"(?P<items>.+)$",
    re.IGNORECASE,
)
_ITEM_SPLIT_RE = lazy_pattern(r"[,;]\s+and\s+", re.IGNORECASE)  # a ";" alone often goes on about the same item
MIN_ITEM_WORDS = 3


def enumerated_todos(sentence: str) -> list[str]:
    """The items of "Two things remain open: A, and B" (none unless two or more)."""
    m = _ENUMERATION_RE.match(sentence)
    if not m:
        return []
    items = [tidy(x) for x in _ITEM_SPLIT_RE.split(m.group("items"))]
    items = [x for x in items if len(x.split()) >= MIN_ITEM_WORDS]
    return items if len(items) >= 2 else []


# Put off for later: "grafana on the nas at some point, not now", "partial import: later", "skip for now".
_DEFERRED_RE = lazy_pattern(
    r"(?:[,:;]\s*(?:but\s+)?later|(?:[,:;]\s*|\s+[\u2014\u2013-]\s+|\s+)(?:but\s+)?(?:not\s+(?:now|today|yet|this\s+time|for\s+now)|next\s+(?:week|"
    r"time|sprint|session|month)|some\s*day|at\s+some\s+point|eventually|another\s+day|for\s+later|for\s+now|"
    r"maybe\s+later))\b[\s.!,]*(?:maybe|please|though)?[.!]?$",
    re.IGNORECASE,
)
# "note it", "put it on the list", "write it down", "don't let me forget": the sentence before is the todo.
_NOTE_IT_RE = lazy_pattern(
    r"^\W*(?:(?:please|and|then|so)\s+)*(?:(?:note|write|jot)\s+(?:it|that|this)(?:\s+down|\s+somewhere)?|put\s+(?:it|that|"
    r"this)\s+(?:on|in|to)\s+(?:the|my|your|a)\s+(?:list|todo|todos|notes)|add\s+(?:it|that|this)\s+to\s+the\s+(?:list|todo|"
    r"todos)|(?:don'?t|do\s+not)\s+let\s+(?:me|us)\s+forget(?:\s+(?:it|that|this))?|not\s+(?:now|today)|later|skip\s+(?:it\s+)?"
    r"for\s+now)\b",
    re.IGNORECASE,
)
MIN_DEFERRED_WORDS = 2
MAX_NOTE_IT_WORDS = 6  # "put it on the list", "note it somewhere": longer, it points at what follows


def deferred_todos(sentences: Sequence[str]) -> list[str]:
    """The things a user's sentences put off for later ("grafana on the nas at some point, not now. note it
    somewhere." -> "Grafana on the nas.")."""
    out: list[str] = []
    for n, raw in enumerate(sentences):
        s = tidy(raw)
        if not s or s.rstrip(".").endswith("?") or HYPOTHETICAL_RE.search(s):
            continue
        m = _DEFERRED_RE.search(s)
        body = s[: m.start()] if m else ""
        body = _DEFERRED_RE.sub("", body) if body else body
        if m and len(body.split()) >= MIN_DEFERRED_WORDS:
            out.append(tidy(body))
        elif _NOTE_IT_RE.match(" ".join(raw.split())) and len(s.split()) <= MAX_NOTE_IT_WORDS and n > 0:
            before = tidy(_DEFERRED_RE.sub("", tidy(re.sub(r"^\W*todo\s*:\s*", "", sentences[n - 1], flags=re.I))))
            if len(before.split()) >= MIN_DEFERRED_WORDS and before not in out and not before.endswith("?"):
                out.append(before)
    return out


def text_todos(units: Sequence[str], text: str, seq: int, role: str) -> list[Candidate]:
    """Todos stated in one message: TODO lines, then prose sentences."""
    out: list[Candidate] = []
    importance = TEXT_IMPORTANCE[role]
    if role == "user":
        said = [x for unit in units for line in unit.split("\n") for x in _USER_SPLIT_RE.split(line) if x.strip()]
        for item in deferred_todos(said):
            out.append(Candidate(f"TODO: {clip(item)}", "todo", importance, seq, entity_names(item), rule="todo"))
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
    """The agent's list: as given (OpenCode's table), else as its todo tools left it in the span: the last call
    of a tool that writes the whole list (OpenCode's `todowrite`, Claude Code's former `TodoWrite`, Codex's
    `update_plan`), or the tasks Claude Code's `TaskCreate` made and its `TaskUpdate` changed, whichever came
    last."""
    given = list(todos)
    if given:
        return given
    calls = [call for turn in turns for call in turn.tool_calls if isinstance(call.input, dict)]
    tasks = _tasks(calls)
    for n, call in enumerate(reversed(calls)):
        if tool_kind(call.tool) != "todo":
            continue
        if tasks is not None and n >= tasks[1]:
            break  # the task tools were used after this whole-list write
        items = call.input.get("todos") or call.input.get("plan")
        if isinstance(items, list):
            return [t for t in (_todo(item, i) for i, item in enumerate(items)) if t]
    return tasks[0] if tasks is not None else []


_TASK_CREATED_RE = lazy_pattern(r"\bTask\s+#(?P<id>\w+)\s+created\b", re.IGNORECASE)
_TASK_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed", "deleted": "cancelled"}


def _tasks(calls: Sequence[ToolCall]) -> tuple[list[Todo], int] | None:
    """Claude Code's task list from its TaskCreate / TaskUpdate calls (the id a task got is in the result, "Task
    #3 created successfully: …"; numbered in order when the result is missing), and how many calls came after
    the last of them; None when the span has none."""
    tasks: dict[str, Todo] = {}
    last = None
    for n, call in enumerate(calls):
        name = call.tool.lower()
        if name == "taskcreate" and call.status == "completed":
            subject = call.input.get("subject") or call.input.get("description")
            if not isinstance(subject, str) or not subject.strip():
                continue
            m = _TASK_CREATED_RE.search(call.output or "")
            task_id = m.group("id") if m else str(len(tasks) + 1)
            tasks[task_id] = Todo(subject.strip(), "pending", "medium", len(tasks))
            last = n
        elif name == "taskupdate" and call.status == "completed":
            task = tasks.get(str(call.input.get("taskId") or ""))
            status = _TASK_STATUS.get(str(call.input.get("status") or ""))
            if task is not None and status is not None:
                tasks[str(call.input["taskId"])] = Todo(task.content, status, task.priority, task.position)
                last = n
    return (list(tasks.values()), len(calls) - 1 - last) if last is not None else None


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
    users = [_words(c.text) for c in text if c.said_by == USER]
    for todo in agent:
        content = " ".join(scrub(todo.content).split())
        if not content:
            continue
        is_open = todo.status in _OPEN
        words = _words(content)
        listed.append((words, is_open))
        if is_open:
            importance = PRIORITY_IMPORTANCE.get(todo.priority, PRIORITY_IMPORTANCE["medium"])
            body = tidy(content)
            line = f"TODO: {clip(body)}"
            # the list's words, but the user's todo when the user asked for it first
            who = USER if any(_on_list(said, words) for said in users) else ASSISTANT
            out.append(Candidate(line, "todo", importance, seq, entity_names(content), rule="agent_todo", said_by=who))
    kept: list[frozenset[str]] = []
    for c in text:
        words = _words(c.text)
        if any(_on_list(words, other) for other, _ in listed) or any(_same(words, k) for k in kept):
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


LISTED_SHARE = 0.3


def _on_list(said: frozenset[str], listed: frozenset[str]) -> bool:
    """A todo said in prose that the agent's list holds in its own words ("a restore test every month or so" and
    "Monthly restore test: restore a few photos from B2"): the same todo, or two words in common, one of them
    distinctive, and a good share of the shorter one's."""
    if _same(said, listed):
        return True
    common = said & listed
    distinctive = any(len(w) >= 6 or any(ch.isdigit() for ch in w) for w in common)
    return len(common) >= 2 and distinctive and len(common) / min(len(said), len(listed)) >= LISTED_SHARE


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two statements of one todo: most words in common, or a distinctive word (a long one, or one with a digit)
    and a good part of the shorter one's."""
    if not a or not b:
        return False
    common = a & b
    smaller = min(len(a), len(b))
    if len(common) / len(a | b) >= 0.5 or len(common) / smaller >= (0.5 if smaller <= 2 else 0.75):
        return True
    distinctive = any(len(w) >= 6 or any(ch.isdigit() for ch in w) for w in common)
    return distinctive and len(common) / smaller >= 0.4
