"""Durable memories from a session's turns without any model (docs/architecture.md, principle 2).

Rules that look for knowledge, not for sentences (precision over recall):
- `*Remember*: …` notes (codememory.text.remember), in user or assistant text, always kept.
- Prose (`statements`, `rules`): decisions with what they were chosen over and why, in one memory ("I'll use
  unicodedata instead of python-slugify because the project has no dependencies"; the user's "let's use",
  "going with", "we decided", the assistant's "I decided" or a choice it gives a reason for); rejected
  alternatives with their reason; conventions and constraints ("always", "never", "from now on", "don't …",
  "keep it dependency-free", "CI runs Python 3.9, so no `X | None`"); preferences; environment facts
  (versions, ports, the commands that run things).
- Skipped: questions, hypotheticals ("should we use X?", "maybe"), open decisions, statements about a bare
  pronoun, narration of the next step, fenced and indented code, quoted (`>`) lines, log lines, tool I/O.
- Lessons (`gotchas`): a failed shell command and the assistant's explanation of it (the error, its cause,
  the fix), or a failure the same command's success after a fixing command resolved.
- Todos (`todos`): prose todos and the agent's own list (OpenCode's todo table or the last todo-tool call),
  one memory per todo, closed ones dropped.
Files touched are not memories: they belong to the session record and the daily log.

Every text is scrubbed before it is looked at; every candidate names the turn (`seq`) it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.extract.candidate import Candidate
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.dialogue import agreed_recommendations, proposal_rejections, same_choice_once
from codememory.extract.gotchas import gotcha_candidates
from codememory.extract.reported import reported_bug_lessons
from codememory.extract.statements import remember_candidates, statement_candidates
from codememory.extract.todos import agent_todos, merge_todos


# ------------------------------------------------------------------------------------- together
def explicit_candidates(turns: Sequence[Turn], todos: Iterable[Todo] = ()) -> list[Candidate]:
    """What needs no judgement, kept even when a model extracts: remember notes and the agent's open todos."""
    out: list[Candidate] = []
    for turn in turns:
        for raw in (turn.user_text, *turn.assistant_texts):
            out += remember_candidates(scrub(raw), turn.seq)[0]
    if turns:
        out += merge_todos([], agent_todos(turns, todos), turns[-1].seq)
    return unique(out)


def heuristic_candidates(
    turns: Sequence[Turn], session: SessionInfo | None = None, todos: Iterable[Todo] = ()
) -> list[Candidate]:
    """Every rule of this module over a span of turns, in turn order, without repeats."""
    turns = sorted(turns, key=lambda t: t.seq)
    if not turns:
        return []
    root = session.project_root if session else None
    exchange = proposal_rejections(turns)
    agreed = agreed_recommendations(turns)
    settled = exchange.settled | agreed.settled
    said = [c for c in statement_candidates(turns) if (c.seq, c.text) not in settled]
    said = sorted([*said, *exchange.candidates, *agreed.candidates], key=lambda c: c.seq)
    prose_todos = [c for c in said if c.category == "todo" and c.rule == "todo"]
    lessons = gotcha_candidates(turns, root) + reported_bug_lessons(turns)
    # a choice that is the fix of a failure lives in the lesson (error, cause, fix): one memory, not two
    said = [c for c in said if not any(c.rule in ("decision", "fact") and c.text in g.text for g in lessons)]
    said = [c for c in said if not restates_lesson(c, lessons)]
    out = [c for c in said if not (c.category == "todo" and c.rule == "todo")] + lessons
    # one memory per todo: the agent's list and the prose, merged; closed ones dropped
    out += merge_todos(prose_todos, agent_todos(turns, todos), turns[-1].seq)
    return unique(same_choice_once(out))


_FAILURE_NOTE_RE = re.compile(r"\s*\((?:`[^`]*` failed with|reported:).*\)\s*$")
_CONTENT_STOP = frozenset(
    "the and for with from that this then than they them their there into onto over also just only when what which "
    "have has had was were are is be been being it its not but can could would should will need needs".split()
)
MIN_RESTATED_WORDS = 3
RESTATED_SHARE = 0.4


def _content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9_.*/-]{2,}", text.lower())
    return {w.rstrip(".").removesuffix("s") for w in words if w not in _CONTENT_STOP}


def restates_lesson(candidate: Candidate, lessons: Sequence[Candidate]) -> bool:
    """A fact that re-states a lesson of the span (the closing summary "integration tests (Testcontainers, need
    Docker): `mvn -q verify`" after the lesson about the stopped Docker daemon): most of its words are the
    lesson's (the failure's own note left out)."""
    if candidate.rule != "fact":
        return False
    words = _content_words(candidate.text)
    for lesson in lessons:
        shared = words & _content_words(_FAILURE_NOTE_RE.sub("", lesson.text))
        if len(shared) >= MIN_RESTATED_WORDS and len(shared) >= RESTATED_SHARE * len(words):
            return True
    return False


def unique(candidates: Iterable[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        key = " ".join(c.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
