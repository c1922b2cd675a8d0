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
from dataclasses import replace

from codememory.capture.turns import SessionInfo, Todo, Turn
from codememory.core.lazy_pattern import lazy_pattern
from codememory.extract.answers import resolved_answers
from codememory.extract.candidate import ACCEPTED, USER, Candidate
from codememory.extract.candidate import scrubbed as scrub
from codememory.extract.clean import tidy, without_asides
from codememory.extract.dialogue import agreed_recommendations, proposal_rejections, same_choice_once
from codememory.extract.gotchas import gotcha_candidates
from codememory.extract.ledger import settled_drops
from codememory.extract.relayed import without_relayed
from codememory.extract.reported import caution_lessons, finding_lessons, reported_bug_lessons, with_findings
from codememory.extract.revisions import revised_turns, settled_values
from codememory.extract.speakers import ToolText, attribute
from codememory.extract.statements import remember_candidates, statement_candidates
from codememory.extract.todo_lists import without_todo_lists
from codememory.extract.todos import agent_todos, merge_todos
from codememory.extract.unresolved_pronouns import UNRESOLVED_START_RE, named_subject
from codememory.text.mood import asks, logged, narration


# ------------------------------------------------------------------------------------- together
def explicit_candidates(turns: Sequence[Turn], todos: Iterable[Todo] = ()) -> list[Candidate]:
    """What needs no judgement, kept even when a model extracts: remember notes and the agent's open todos."""
    out: list[Candidate] = []
    tool_text = ToolText.of(turns)
    for turn in turns:
        out += remember_candidates(scrub(turn.user_text), turn.seq)[0]
        for raw in turn.assistant_texts:
            out += remember_candidates(scrub(raw), turn.seq, "assistant", tool_text)[0]
    if turns:
        out += merge_todos([], agent_todos(turns, todos), turns[-1].seq)
    return unique(attribute(out, turns))


def heuristic_candidates(
    turns: Sequence[Turn], session: SessionInfo | None = None, todos: Iterable[Todo] = ()
) -> list[Candidate]:
    """Every rule of this module over a span of turns, in turn order, without repeats."""
    # each user message as meant: a value taken back in the same breath is gone before any rule reads it
    turns = revised_turns(sorted(turns, key=lambda t: t.seq))
    if not turns:
        return []
    root = session.project_root if session else None
    exchange = proposal_rejections(turns)
    agreed = agreed_recommendations(turns)
    answers = resolved_answers(turns)
    settled = exchange.settled | agreed.settled | answers.settled
    resolved = [*exchange.candidates, *agreed.candidates]
    resolved += [c for c in answers.candidates if not any(c.seq == r.seq for r in resolved)]
    # a choice taken back across turns is one memory (what replaces it, what it replaced, why): what the exchange
    # rules made of the same sentences gives way to it
    ledger = settled_drops(turns)
    # a reply the exchange rules already read as turning something down keeps their memory
    drops = [c for c in ledger.candidates if not any(r.seq == c.seq and r.rule == "rejected" for r in resolved)]
    resolved = [c for c in resolved if not _inside_ledger(c, drops, ledger.used)] + drops
    settled |= {(seq, tidy(text)) for seq, text in ledger.used}
    said = [
        c
        for c in statement_candidates(turns)
        if c.category == "todo"
        or ((c.seq, c.text) not in settled and not _taken(c, answers.taken) and not _restated(c, resolved))
    ]
    said = sorted([*said, *resolved], key=lambda c: c.seq)
    prose_todos = [c for c in said if c.category == "todo" and c.rule == "todo"]
    # a sentence that is a todo ("One todo: the tables must be regenerated") is not also a rule or a choice
    said = [c for c in said if c.category == "todo" or not _restates_todo(c, prose_todos)]
    lessons = gotcha_candidates(turns, root)
    # a reported problem's explanation that a lesson, or a settled offer, already holds is not used again
    offered = [text for _, text in answers.taken]
    found = finding_lessons(turns, taken=[g.text for g in lessons] + [c.text for c in resolved] + offered)
    reported = reported_bug_lessons(turns, taken=[g.text for g in lessons] + [c.text for c in resolved] + offered)
    lessons += with_findings(reported, found, turns)
    lessons += caution_lessons(turns, taken=[g.text for g in lessons] + [c.text for c in resolved] + offered)
    # a choice that is the fix of a failure lives in the lesson (error, cause, fix): one memory, not two
    said = [
        c for c in said if not any(c.rule in ("decision", "fact", "observation") and c.text in g.text for g in lessons)
    ]
    said = [c for c in said if not restates_lesson(c, lessons)]
    out = [c for c in said if not (c.category == "todo" and c.rule == "todo")] + lessons
    out = fixes_in_their_lessons(out, resolved)
    # one memory per todo: the agent's list and the prose, merged; closed ones dropped
    out += merge_todos(prose_todos, agent_todos(turns, todos), turns[-1].seq)
    # the sentence that lists those todos is not also part of a choice or a rule
    out = without_todo_lists(out)
    # a memory never opens on an unresolved "it", "that" or "this"; the user's words lose their chatty asides
    out = [replace(c, text=named) if (named := named_subject(c.text)) != c.text else c for c in out]
    out = [c for c in out if not UNRESOLVED_START_RE.match(c.text)]
    out = [replace(c, text=without_asides(c.text)) if c.said_by == USER else c for c in out]
    out = [c for c in attribute(out, turns) if in_a_memory_s_mood(c)]
    # what a later user message changes is stored as changed: the span's final values, not the ones it passed through
    out = settled_values(out, turns)
    # what a file, a page or a tool's output asked for, retold by whoever, is not what the project does
    out = without_relayed(out)
    return near_duplicates_once(contained_once(unique(same_choice_once(out))))


_FIRST_SENTENCE_RE = lazy_pattern(r"(?<=[.!?])[\"'\u201d)]?\s+(?=\S)")
_STEP_CATEGORIES = frozenset({"gotcha", "fact", "convention", "preference"})


def in_a_memory_s_mood(candidate: Candidate, *, model_written: bool = False) -> bool:
    """Whatever rule made a memory, it must open on a statement (text.mood): not on a printed line, not on a
    question with nothing after it, and, from the assistant, not on the plan of its next step ("Now I'll …",
    "Let me …"); a step under way ("Reading the contributing guide first, …", "Adding the retry: …") is no lesson, rule
    or fact, though it may name a choice and why. The agent's todos and `*Remember*:` notes are kept as written. A
    model's memory (`model_written`) is its own summary, often a phrase ("Rounding money half-even in …"): there only
    the plan of a next step tells nothing, a gerund opening is no step under way."""
    if candidate.category == "todo" or candidate.rule == "remember":
        return True
    said = [s for s in _FIRST_SENTENCE_RE.split(candidate.text.strip()) if s.strip()]
    if not said:
        return False
    first = said[0]
    if logged(first) or (asks(first) and len(said) == 1):
        return False
    told = narration(first) if candidate.said_by != USER else None
    if model_written and told == "step":
        told = None
    return told is None or (told == "step" and candidate.category not in _STEP_CATEGORIES)


_REPORTED_NOTE_RE = lazy_pattern(r"\s*\((?:reported:.*)\)\s*$")


def fixes_in_their_lessons(candidates: Sequence[Candidate], resolved: Sequence[Candidate]) -> list[Candidate]:
    """A problem the user reported, explained by the assistant, whose fix the user then accepted (a decision made
    in the next turn from that turn's offer) is one lesson: what went wrong, why, and the fix, not a lesson and a
    decision that each hold half of it."""
    out = list(candidates)
    for lesson in list(out):
        note = _REPORTED_NOTE_RE.search(lesson.text) if lesson.rule == "lesson" else None
        if note is None:
            continue
        fix = next(
            (
                c
                for c in out
                if c in resolved and c.category == "decision" and c.said_by == ACCEPTED and c.seq == lesson.seq + 1
            ),
            None,
        )
        if fix is None:
            continue
        cause = lesson.text[: note.start()].rstrip()
        said = f"{cause} Fix: {fix.text.rstrip('.')}."
        if len(said) + len(note.group(0)) > MAX_LESSON_CHARS:
            continue  # too long as one memory: the lesson and the decision stay apart
        text = f"{said}{note.group(0)}"
        # the fix may come before the lesson in the list: place by identity, not by the index it had
        out = [replace(c, text=text, said_by=ACCEPTED) if c is lesson else c for c in out if c is not fix]
    return out


def _restated(candidate: Candidate, resolved: Sequence[Candidate]) -> bool:
    """A statement of a turn whose words are mostly those of a memory the turn's exchange already made."""
    if candidate.category == "todo":
        return False
    words = _content_words(candidate.text)
    for r in resolved:
        if (
            r.seq == candidate.seq
            and words
            and len(words & _content_words(r.text)) >= RESTATED_SHARE * 1.5 * len(words)
        ):
            return True
    return False


def _inside_ledger(candidate: Candidate, made: Sequence[Candidate], used: frozenset[tuple[int, str]]) -> bool:
    """A memory of the same turn whose words are mostly those of a ledger memory or of the sentences it took in."""
    if candidate.category == "todo":
        return False
    words = _content_words(candidate.text)
    for m in made:
        if m.seq != candidate.seq or not words:
            continue
        theirs = _content_words(m.text).union(*(_content_words(t) for seq, t in used if seq == m.seq))
        if len(words & theirs) >= RESTATED_SHARE * 1.5 * len(words):
            return True
    return False


def _restates_todo(candidate: Candidate, todos: Sequence[Candidate]) -> bool:
    words = _content_words(candidate.text)
    return any(
        t.seq == candidate.seq and words and len(words & _content_words(t.text)) >= NEAR_DUPLICATE_SHARE * len(words)
        for t in todos
    )


def _taken(candidate: Candidate, taken: frozenset[tuple[int, str]]) -> bool:
    """A statement holding a sentence that a memory made from an exchange took in (the offer a reply settled)."""
    return any(
        seq == candidate.seq and text and (text in candidate.text or candidate.text.rstrip(".") in text)
        for seq, text in taken
    )


_FAILURE_NOTE_RE = lazy_pattern(r"\s*\((?:`[^`]*` failed with|reported:).*\)\s*$")
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
    if candidate.rule not in ("fact", "observation"):
        return False
    words = _content_words(candidate.text)
    for lesson in lessons:
        shared = words & _content_words(_FAILURE_NOTE_RE.sub("", lesson.text))
        if len(shared) >= MIN_RESTATED_WORDS and len(shared) >= RESTATED_SHARE * len(words):
            return True
    return False


NEAR_DUPLICATE_SHARE = 0.75
MAX_LESSON_CHARS = 700
CONTAINED_SHARE = 0.9


def contained_once(candidates: Sequence[Candidate]) -> list[Candidate]:
    """A memory whose words are nearly all inside a longer memory of the same or a neighbouring turn says nothing
    of its own, whatever category each got (a fact "Format in the browser: …" inside the decision that gives its
    reason): only the longer one is kept. Todos are their own list."""
    # a lesson's "(reported: …)" / "(`cmd` failed …)" note quotes its source; it holds nothing of its own
    words = [_content_words(_FAILURE_NOTE_RE.sub("", c.text)) for c in candidates]
    out = []
    for i, c in enumerate(candidates):
        mine = words[i]
        inside = (
            c.category != "todo"
            and len(mine) >= MIN_RESTATED_WORDS
            and any(
                j != i
                and d.category != "todo"
                and abs(d.seq - c.seq) <= 1
                and len(words[j]) > len(mine)
                and len(mine & words[j]) >= CONTAINED_SHARE * len(mine)
                for j, d in enumerate(candidates)
            )
        )
        if not inside:
            out.append(c)
    return out


def near_duplicates_once(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Two memories of neighbouring turns that say mostly the same (most words of the shorter one are in the
    other) are one: the first. An exchange explained, settled and reported on gives such pairs."""
    out: list[Candidate] = []
    kept: list[tuple[Candidate, set[str], set[str]]] = []
    for c in candidates:
        words = _content_words(c.text)
        numbers = set(re.findall(r"\d+(?:[.,]\d+)*", c.text))  # "module 2" and "module 3" are two things
        if _family(c.category) in ("choice", "rule") and len(words) >= MIN_RESTATED_WORDS:
            twin = any(
                _family(k.category) == _family(c.category)
                and abs(k.seq - c.seq) <= 1
                and not (numbers and n and numbers != n)
                and len(words & w) >= NEAR_DUPLICATE_SHARE * min(len(words), len(w))
                for k, w, n in kept
            )
            if twin:
                continue
        kept.append((c, words, numbers))
        out.append(c)
    return out


def _family(category: str) -> str:
    """Categories one exchange may state the same thing in: a choice (decision, rejection, the lesson that led to
    it) or a rule (convention, preference)."""
    return {"decision": "choice", "rejected_alternative": "choice", "gotcha": "choice", "preference": "rule"}.get(
        category, "rule" if category == "convention" else category
    )


def unique(candidates: Iterable[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        key = " ".join(c.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
